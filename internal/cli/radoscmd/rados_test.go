package radoscmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/bench"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// simRados runs `cuttle rados` and `cuttle bench` in process against a
// simulated cluster (internal/sim: a monitor and three OSDs on memnet),
// inside the test's synctest bubble.
type simRados struct {
	t     *testing.T
	c     *sim.Cluster
	dials int
}

func newSimRados(t *testing.T) *simRados {
	// Network delays make operations take virtual time, so that timed
	// benchmarks end.
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 1, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "3")
	c.Run("osd pool create", "pool", "other", "pg_num", "4", "size", "3")
	c.WaitForEpoch(c.Epoch())
	return &simRados{t: t, c: c}
}

func (s *simRados) dial(ctx context.Context) (*rados.Conn, error) {
	s.dials++
	name := fmt.Sprintf("cli%d", s.dials)
	cfg := rados.Config{Mons: []string{"a=a:6789"}, Auth: "none", Network: s.c.Net.Host(name), Seed: uint64(s.dials)}
	if p, ok := cmdutil.ReadPolicy(ctx); ok {
		cfg.ReadPolicy = p // --read-policy
	}
	return rados.Connect(ctx, cfg)
}

// conn returns a client of the cluster for the test's own checks.
func (s *simRados) conn() *rados.Conn {
	s.t.Helper()
	conn, err := s.dial(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { conn.Close() })
	return conn
}

// run runs cuttle with args and stdin, returning stdout.
func (s *simRados) run(stdin string, args ...string) (string, error) {
	var stdout bytes.Buffer
	out := &cmdutil.Output{Format: cmdutil.FormatPlain, W: &stdout}
	root := &cobra.Command{Use: "cuttle", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().Var((*cmdutil.FormatFlag)(&out.Format), "format", "")
	root.AddCommand(newRadosCommand(out, s.dial), newBenchCommand(out, s.dial))
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&stdout)
	root.SetErr(&stdout)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return stdout.String(), err
}

func (s *simRados) must(stdin string, args ...string) string {
	s.t.Helper()
	out, err := s.run(stdin, args...)
	if err != nil {
		s.t.Fatalf("cuttle %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// Every `cuttle rados` command against real OSDs (in process), with
// files and standard input and output, namespaces and errors.
func TestRadosCommandsInProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimRados(t)
		dir := t.TempDir()
		in := filepath.Join(dir, "in")
		data := bytes.Repeat([]byte("cuttle!"), 1000)
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s.must("", "rados", "-p", "rbd", "put", "obj", in)
		s.must("from stdin", "rados", "-p", "rbd", "put", "small", "-")
		if got := s.must("", "rados", "-p", "rbd", "get", "obj", "-"); got != string(data) {
			t.Fatalf("get to stdout: %d bytes", len(got))
		}
		outFile := filepath.Join(dir, "out")
		s.must("", "rados", "-p", "rbd", "get", "small", outFile)
		if b, _ := os.ReadFile(outFile); string(b) != "from stdin" {
			t.Fatalf("get to a file: %q", b)
		}
		st := s.must("", "rados", "-p", "rbd", "stat", "obj")
		if !regexp.MustCompile(`^rbd/obj mtime \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}[+-]\d{4}, size 7000\n$`).MatchString(st) {
			t.Errorf("stat: %q", st)
		}
		var sr statReport
		if err := json.Unmarshal([]byte(s.must("", "--format", "json", "rados", "-p", "rbd", "stat", "small")), &sr); err != nil || sr.Size != 10 || sr.Name != "small" {
			t.Errorf("stat json: %+v %v", sr, err)
		}

		// Extended attributes.
		s.must("", "rados", "-p", "rbd", "setxattr", "obj", "owner", "ann")
		s.must("bob\x00bin", "rados", "-p", "rbd", "setxattr", "obj", "blob")
		if got := s.must("", "rados", "-p", "rbd", "getxattr", "obj", "owner"); got != "ann" {
			t.Errorf("getxattr: %q", got)
		}
		if got := s.must("", "rados", "-p", "rbd", "getxattr", "obj", "blob"); got != "bob\x00bin" {
			t.Errorf("getxattr of a value from stdin: %q", got)
		}
		if got := s.must("", "rados", "-p", "rbd", "listxattr", "obj"); got != "blob\nowner\n" {
			t.Errorf("listxattr: %q", got)
		}
		s.must("", "rados", "-p", "rbd", "rmxattr", "obj", "blob")
		if _, err := s.run("", "rados", "-p", "rbd", "getxattr", "obj", "blob"); err == nil || !strings.Contains(err.Error(), "no such attribute") {
			t.Errorf("getxattr of a removed attribute: %v", err)
		}

		// Omap.
		s.must("", "rados", "-p", "rbd", "setomapval", "obj", "k1", "value")
		s.must("v2 from stdin", "rados", "-p", "rbd", "setomapval", "obj", "k2")
		if got := s.must("", "rados", "-p", "rbd", "listomapkeys", "obj"); got != "k1\nk2\n" {
			t.Errorf("listomapkeys: %q", got)
		}
		wantVal := "value (5 bytes) :\n00000000  76 61 6c 75 65                                    |value|\n00000005\n"
		if got := s.must("", "rados", "-p", "rbd", "getomapval", "obj", "k1"); got != wantVal {
			t.Errorf("getomapval:\n%q\nwant\n%q", got, wantVal)
		}
		if got := s.must("", "rados", "-p", "rbd", "getomapval", "obj", "k2", "-"); got != "v2 from stdin" {
			t.Errorf("getomapval to stdout: %q", got)
		}
		if got := s.must("", "rados", "-p", "rbd", "listomapvals", "obj"); !strings.HasPrefix(got, "k1\n"+wantVal+"k2\nvalue (13 bytes) :\n") {
			t.Errorf("listomapvals:\n%s", got)
		}
		var vals []valueReport
		if err := json.Unmarshal([]byte(s.must("", "--format", "json", "rados", "-p", "rbd", "listomapvals", "obj")), &vals); err != nil ||
			len(vals) != 2 || vals[1].Value != "v2 from stdin" || string(vals[1].Base64) != "v2 from stdin" {
			t.Errorf("listomapvals json: %+v %v", vals, err)
		}
		s.must("", "rados", "-p", "rbd", "rmomapkey", "obj", "k1")
		if _, err := s.run("", "rados", "-p", "rbd", "getomapval", "obj", "k1"); err == nil || !strings.Contains(err.Error(), "no such key: rbd/obj/k1") {
			t.Errorf("getomapval of a removed key: %v", err)
		}

		// cp copies data, xattrs and omap, in the pool and to another.
		s.must("", "rados", "-p", "rbd", "cp", "obj", "copy")
		s.must("", "rados", "-p", "rbd", "cp", "obj", "copy2", "--target-pool", "other")
		for _, pool := range []string{"rbd", "other"} {
			name := map[string]string{"rbd": "copy", "other": "copy2"}[pool]
			if got := s.must("", "rados", "-p", pool, "get", name, "-"); got != string(data) {
				t.Errorf("%s/%s: %d bytes", pool, name, len(got))
			}
			if got := s.must("", "rados", "-p", pool, "getxattr", name, "owner"); got != "ann" {
				t.Errorf("%s/%s xattr %q", pool, name, got)
			}
			if got := s.must("", "rados", "-p", pool, "listomapkeys", name); got != "k2\n" {
				t.Errorf("%s/%s omap %q", pool, name, got)
			}
		}
		if _, err := s.run("", "rados", "-p", "rbd", "cp", "obj", "obj"); err == nil {
			t.Error("cp onto itself was accepted")
		}

		// Namespaces and ls.
		s.must("x", "rados", "-p", "rbd", "-N", "tenant", "put", "hidden", "-")
		if got := s.must("", "rados", "-p", "rbd", "ls"); sortedLines(got) != "copy\nobj\nsmall\n" {
			t.Errorf("ls: %q", got)
		}
		if got := s.must("", "rados", "-p", "rbd", "-N", "tenant", "ls"); got != "hidden\n" {
			t.Errorf("ls -N: %q", got)
		}
		if got := s.must("", "rados", "-p", "rbd", "ls", "--all"); sortedLines(got) != "\tcopy\n\tobj\n\tsmall\ntenant\thidden\n" {
			t.Errorf("ls --all: %q", got)
		}
		var ls []lsEntry
		if err := json.Unmarshal([]byte(s.must("", "--format", "json", "rados", "-p", "rbd", "-N", "tenant", "ls")), &ls); err != nil ||
			len(ls) != 1 || ls[0] != (lsEntry{Namespace: "tenant", Name: "hidden"}) {
			t.Errorf("ls json: %+v %v", ls, err)
		}
		if _, err := s.run("", "rados", "-p", "rbd", "get", "hidden", "-"); !errors.Is(err, rados.ErrNotFound) {
			t.Errorf("an object of another namespace: %v", err)
		}

		// rm, and the errors.
		s.must("", "rados", "-p", "rbd", "rm", "copy", "small")
		if got := s.must("", "rados", "-p", "rbd", "ls"); got != "obj\n" {
			t.Errorf("ls after rm: %q", got)
		}
		missing := filepath.Join(dir, "never")
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"rados", "-p", "rbd", "get", "small", missing}, "get rbd/small: no such object"},
			{[]string{"rados", "-p", "rbd", "stat", "nope"}, "stat rbd/nope: no such object"},
			{[]string{"rados", "-p", "rbd", "rm", "nope"}, "rm rbd/nope: no such object"},
			{[]string{"rados", "-p", "nopool", "ls"}, "pool nopool does not exist"},
			{[]string{"rados", "ls"}, "no pool: give -p POOL"},
			{[]string{"rados", "-p", "rbd", "put", "x", missing}, "no such file"},
		} {
			_, err := s.run("", tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("cuttle %s: %v, want %q", strings.Join(tc.args, " "), err, tc.want)
			}
		}
		if _, err := os.Stat(missing); !os.IsNotExist(err) {
			t.Errorf("get of a missing object created its file: %v", err)
		}
	})
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			if lines[j] < lines[i] {
				lines[i], lines[j] = lines[j], lines[i]
			}
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// put and get move data in pieces, several in flight, whatever the
// reader's pace; an object of a whole number of pieces and an empty one
// round-trip.
func TestRadosStreamingPieces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimRados(t)
		ioc, err := s.conn().OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		st := streamer{chunk: 1000, window: 3}
		for _, size := range []int{0, 999, 1000, 3000, 10500} {
			data := make([]byte, size)
			for i := range data {
				data[i] = byte(i * 7)
			}
			name := fmt.Sprint("o", size)
			// Overwrite a longer object: put replaces the data.
			if err := ioc.WriteFull(ctx, name, make([]byte, 20000)); err != nil {
				t.Fatal(err)
			}
			n, err := st.put(ctx, ioc, name, iotest.HalfReader(bytes.NewReader(data)))
			if err != nil || n != int64(size) {
				t.Fatalf("put %d: %d, %v", size, n, err)
			}
			var got bytes.Buffer
			n, err = st.get(ctx, ioc, name, func() (w io.Writer, _ error) { return &got, nil })
			if err != nil || n != int64(size) || !bytes.Equal(got.Bytes(), data) {
				t.Fatalf("get %d: %d bytes, %v", size, n, err)
			}
		}
		// A reader that fails ends the put with its error.
		boom := errors.New("disk on fire")
		if _, err := st.put(ctx, ioc, "broken", io.MultiReader(bytes.NewReader(make([]byte, 2500)), iotest.ErrReader(boom))); !errors.Is(err, boom) {
			t.Fatalf("put from a failing reader: %v", err)
		}
	})
}

// `cuttle bench` write, seq, rand and cleanup, in virtual time.
func TestBenchInProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimRados(t)
		out := s.must("", "bench", "-p", "rbd", "2", "write", "-b", "4K", "-t", "4", "--no-cleanup")
		for _, want := range []string{"Maintaining 4 concurrent writes of 4096 bytes", bench.ProgressHeader, "\n    1 ", "Total writes made:", "p99 latency(s):", "Longest stall(s):"} {
			if !strings.Contains(out, want) {
				t.Errorf("write output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "Cleaning up") {
			t.Errorf("--no-cleanup cleaned up:\n%s", out)
		}
		var seq, rnd benchReport
		if err := json.Unmarshal([]byte(s.must("", "--format", "json", "bench", "-p", "rbd", "1", "seq", "-t", "2")), &seq); err != nil {
			t.Fatal(err)
		}
		if seq.Ops <= 0 || seq.Mode != "seq" || seq.Objects <= 0 || seq.OpSize != 4096 || seq.Latency.P99 <= 0 {
			t.Errorf("seq report %+v", seq)
		}
		if err := json.Unmarshal([]byte(s.must("", "--format", "json", "bench", "-p", "rbd", "1", "rand", "-t", "2")), &rnd); err != nil {
			t.Fatal(err)
		}
		if rnd.Ops <= 0 || rnd.Mode != "rand" {
			t.Errorf("rand report %+v", rnd)
		}
		// --read-policy balance sends reads to replicas too: they serve
		// them (nothing is being written) or refuse them (the last
		// write of a PG, whose watermark no later write has carried).
		if err := json.Unmarshal([]byte(s.must("", "--format", "json", "bench", "-p", "rbd", "1", "rand", "-t", "2", "--read-policy", "balance")), &rnd); err != nil {
			t.Fatal(err)
		}
		balanced := 0.0
		for _, o := range s.c.OSDs {
			balanced += replicaReadsOf(t, o.Metrics)
		}
		if rnd.Ops <= 0 || balanced == 0 {
			t.Errorf("rand --read-policy balance: %d reads, %v at replicas", rnd.Ops, balanced)
		}
		if _, err := s.run("", "bench", "-p", "rbd", "1", "rand", "--read-policy", "nearest"); err == nil || !strings.Contains(err.Error(), "want pool, primary, balance or score") {
			t.Errorf("--read-policy nearest: %v", err)
		}
		objects := seq.Objects
		out = s.must("", "bench", "-p", "rbd", "cleanup")
		if !strings.Contains(out, fmt.Sprintf("Removed %d objects", objects)) {
			t.Errorf("cleanup: %s (want %d objects)", out, objects)
		}
		if got := s.must("", "rados", "-p", "rbd", "ls"); got != "" {
			t.Errorf("objects left after cleanup: %q", got)
		}
		if _, err := s.run("", "bench", "-p", "rbd", "1", "seq"); err == nil || !strings.Contains(err.Error(), "--no-cleanup first") {
			t.Errorf("seq without a write: %v", err)
		}
		// A write without --no-cleanup removes what it wrote.
		var w benchReport
		if err := json.Unmarshal([]byte(s.must("", "--format", "json", "bench", "-p", "rbd", "1", "write", "-b", "1K", "-t", "2")), &w); err != nil {
			t.Fatal(err)
		}
		if w.Cleanup == nil || w.Cleanup.Removed != w.Ops || w.Ops == 0 {
			t.Errorf("write with cleanup: %+v", w)
		}
		// The timeline has the one whole second, its completions and
		// slowest op; the longest stall is between completions.
		if len(w.Timeline) != 1 || w.Timeline[0].Sec != 1 || w.Timeline[0].Ops <= 0 || w.Timeline[0].Ops > w.Ops ||
			w.Timeline[0].MaxLat <= 0 || w.Timeline[0].MaxLat > w.Latency.Max {
			t.Errorf("timeline %+v of a 1 s write (%d ops, max latency %v)", w.Timeline, w.Ops, w.Latency.Max)
		}
		if w.LongestStall <= 0 || w.LongestStall > w.TotalTime || w.StallFrom+w.LongestStall > w.TotalTime {
			t.Errorf("longest stall %v from %v in %v s", w.LongestStall, w.StallFrom, w.TotalTime)
		}
		if got := s.must("", "rados", "-p", "rbd", "ls"); got != "" {
			t.Errorf("objects left after a write: %q", got)
		}
		// --max-objects ends a write once that many are written.
		var capped benchReport
		if err := json.Unmarshal([]byte(s.must("", "--format", "json", "bench", "-p", "rbd", "60", "write", "-b", "1K", "-t", "3",
			"--max-objects", "7")), &capped); err != nil {
			t.Fatal(err)
		}
		if capped.Ops != 7 || capped.Objects != 7 || capped.TotalTime >= 60 {
			t.Errorf("write with --max-objects 7: %+v", capped)
		}
		if _, err := s.run("", "bench", "-p", "rbd", "1", "write", "--max-objects", "-1"); err == nil {
			t.Error("--max-objects -1 accepted")
		}
	})
}

func TestParseBenchArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want benchArgs
		err  string
	}{
		{[]string{"10", "write"}, benchArgs{seconds: 10, mode: bench.RadosWrite}, ""},
		{[]string{"3", "rand"}, benchArgs{seconds: 3, mode: bench.RadosRand}, ""},
		{[]string{"cleanup"}, benchArgs{cleanup: true}, ""},
		{[]string{"0", "seq"}, benchArgs{}, "positive"},
		{[]string{"x", "seq"}, benchArgs{}, "positive"},
		{[]string{"5", "read"}, benchArgs{}, "unknown benchmark mode"},
		{[]string{"5"}, benchArgs{}, "want SECONDS"},
	} {
		got, err := parseBenchArgs(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v %v", tc.args, got, err)
		}
	}
	// Flags are checked before connecting.
	for _, args := range [][]string{
		{"bench", "-p", "rbd", "3", "write", "-b", "0"},
		{"bench", "-p", "rbd", "3", "write", "-t", "0"},
		{"rados", "-p", "rbd", "put", "onlyone"},
		{"rados", "-p", "rbd", "setxattr", "obj"},
	} {
		_, _, err := runUnreachable(t, args...)
		if err == nil || strings.Contains(err.Error(), "cannot reach") {
			t.Errorf("cuttle %s: %v", strings.Join(args, " "), err)
		}
	}
}

func TestRadosFailureTable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("x: %w", rados.ErrNotFound), "get p/o: no such object"},
		{rados.ErrPermission, "get p/o: permission denied"},
		{rados.ErrNoAttr, "get p/o: no such attribute"},
		{errors.New("weird"), "get p/o: weird"},
		{&rados.OpError{Op: "write", Object: "o", Errno: wire.ENOSPC}, `get p/o: no space left on the OSDs (ENOSPC)`},
		{&rados.OpError{Op: "write", Object: "o", Errno: wire.ENOSPC, Status: "pool 'p' is full (osd.0 full, full_ratio 0.95); delete objects or add OSDs"},
			`get p/o: pool 'p' is full (osd.0 full, full_ratio 0.95); delete objects or add OSDs (ENOSPC)`},
		{&partialObjectError{Err: &rados.OpError{Op: "write", Object: "o", Errno: wire.ENOSPC}, Removed: true},
			`get p/o: no space left on the OSDs (ENOSPC); the partly written object has been removed (the data it had before is lost)`},
	} {
		err := radosFailure("get p/o", tc.err)
		if err.Error() != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%v: %q", tc.err, err)
		}
	}
	if err := radosFailure("nopool", rados.ErrPoolNotFound); err.Error() != "pool nopool does not exist" {
		t.Errorf("pool: %v", err)
	}
	if got := hexDump([]byte("0123456789abcdefXY")); got != "00000000  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66  |0123456789abcdef|\n00000010  58 59                                             |XY|\n00000012" {
		t.Errorf("hexdump %q", got)
	}
}

// runUnreachable runs this package's families under a root with
// --format, as internal/cli assembles them, with a dial that never
// reaches a cluster.
func runUnreachable(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	out := &cmdutil.Output{Format: cmdutil.FormatPlain, W: &stdout}
	root := &cobra.Command{Use: "cuttle", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.PersistentFlags().Var((*cmdutil.FormatFlag)(&out.Format), "format", "output format")
	dial := func(context.Context) (*rados.Conn, error) {
		return nil, errors.New("cannot reach the cluster: no cluster in this test")
	}
	AddRadosCommands(root, out, dial)
	AddBenchCommands(root, out, dial)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return stdout.String(), stderr.String(), err
}

// replicaReadsOf collects an OSD's balanced reads (served and refused).
func replicaReadsOf(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, f := range fams {
		if f.GetName() == "cuttle_osd_replica_reads_total" {
			for _, m := range f.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
