package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/rados"
)

// listObjectsEnv sets how many objects TestRadosClusterUp creates and
// lists (default defaultListObjects). Creating 100,000 took 88 s on a
// shared 2-core machine (about 1,100 creates a second through three
// OSDs), listing them 0.3 s; set a smaller number for a quicker run.
const (
	listObjectsEnv     = "CUTTLE_TEST_LIST_OBJECTS"
	defaultListObjects = 100000
)

// cuttleIn runs the test binary as cuttle in a process of its own, with
// stdin, and returns its stdout and stderr.
func cuttleIn(t *testing.T, stdin []byte, args ...string) (string, string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), daemonEnv+"=1")
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err
}

// `cuttle rados` and `cuttle bench` against a cluster that `cuttle
// cluster up` started: one monitor and three OSD processes with
// file-backed stores, cephx, pool rbd of 3 copies. Every command runs as
// a process of its own, as a user runs it.
func TestRadosClusterUp(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2")
	out, stderr, err := cuttleProc(t, "cluster", "up", "--fs=false", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osds", "3", "--osd-size", "2G")
	if err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	conf := filepath.Join(dir, "cuttle.conf")
	cut := func(stdin string, args ...string) string {
		t.Helper()
		out, stderr, err := cuttleIn(t, []byte(stdin), append([]string{"--conf", conf}, args...)...)
		if err != nil {
			t.Fatalf("cuttle %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	fails := func(want string, args ...string) {
		t.Helper()
		_, stderr, err := cuttleIn(t, nil, append([]string{"--conf", conf}, args...)...)
		if err == nil || !strings.Contains(stderr, want) {
			t.Errorf("cuttle %s: %v, stderr %q; want an error with %q", strings.Join(args, " "), err, stderr, want)
		}
	}

	t.Run("commands", func(t *testing.T) {
		tmp := t.TempDir()
		// 9 MiB and a bit: three pieces and a short one.
		data := make([]byte, 9<<20+12345)
		for i := range data {
			data[i] = byte(i*31 + i>>13)
		}
		in, outFile := filepath.Join(tmp, "in"), filepath.Join(tmp, "out")
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cut("", "rados", "-p", "rbd", "put", "big", in)
		cut("hello from stdin", "rados", "-p", "rbd", "put", "small", "-")
		checkDF(t, func(args ...string) string { return cut("", args...) }, "rbd", 2, int64(len(data)+len("hello from stdin")))
		cut("", "rados", "-p", "rbd", "get", "big", outFile)
		if b, err := os.ReadFile(outFile); err != nil || !bytes.Equal(b, data) {
			t.Fatalf("get big: %d bytes, %v", len(b), err)
		}
		if got := cut("", "rados", "-p", "rbd", "get", "small", "-"); got != "hello from stdin" {
			t.Errorf("get small: %q", got)
		}
		if st := cut("", "rados", "-p", "rbd", "stat", "big"); !regexp.MustCompile(`^rbd/big mtime \S+, size 9449529\n$`).MatchString(st) {
			t.Errorf("stat: %q", st)
		}
		cut("", "rados", "-p", "rbd", "setxattr", "big", "owner", "ann")
		cut("piped", "rados", "-p", "rbd", "setxattr", "big", "note")
		if got := cut("", "rados", "-p", "rbd", "getxattr", "big", "note"); got != "piped" {
			t.Errorf("getxattr: %q", got)
		}
		if got := cut("", "rados", "-p", "rbd", "listxattr", "big"); got != "note\nowner\n" {
			t.Errorf("listxattr: %q", got)
		}
		cut("", "rados", "-p", "rbd", "rmxattr", "big", "note")
		fails("no such attribute", "rados", "-p", "rbd", "getxattr", "big", "note")
		cut("", "rados", "-p", "rbd", "setomapval", "big", "a", "one")
		cut("two", "rados", "-p", "rbd", "setomapval", "big", "b")
		if got := cut("", "rados", "-p", "rbd", "listomapkeys", "big"); got != "a\nb\n" {
			t.Errorf("listomapkeys: %q", got)
		}
		if got := cut("", "rados", "-p", "rbd", "getomapval", "big", "b"); !strings.HasPrefix(got, "value (3 bytes) :\n00000000  74 77 6f ") {
			t.Errorf("getomapval: %q", got)
		}
		if got := cut("", "rados", "-p", "rbd", "listomapvals", "big"); !strings.HasPrefix(got, "a\nvalue (3 bytes) :\n") || !strings.Contains(got, "\nb\nvalue (3 bytes) :\n") {
			t.Errorf("listomapvals: %q", got)
		}
		cut("", "rados", "-p", "rbd", "rmomapkey", "big", "a")
		fails("no such key: rbd/big/a", "rados", "-p", "rbd", "getomapval", "big", "a")
		cut("", "rados", "-p", "rbd", "cp", "big", "big-copy")
		if got := cut("", "rados", "-p", "rbd", "get", "big-copy", "-"); got != string(data) {
			t.Errorf("the copy's data: %d bytes", len(got))
		}
		if got := cut("", "rados", "-p", "rbd", "getxattr", "big-copy", "owner"); got != "ann" {
			t.Errorf("the copy's xattr: %q", got)
		}
		if got := cut("", "rados", "-p", "rbd", "listomapkeys", "big-copy"); got != "b\n" {
			t.Errorf("the copy's omap: %q", got)
		}
		cut("x", "rados", "-p", "rbd", "-N", "ns1", "put", "inns", "-")
		if got := cut("", "rados", "-p", "rbd", "ls"); sortedLines(got) != "big\nbig-copy\nsmall\n" {
			t.Errorf("ls: %q", got)
		}
		if got := cut("", "rados", "-p", "rbd", "ls", "--all"); sortedLines(got) != "\tbig\n\tbig-copy\n\tsmall\nns1\tinns\n" {
			t.Errorf("ls --all: %q", got)
		}
		cut("", "rados", "-p", "rbd", "rm", "big-copy", "small")
		cut("", "rados", "-p", "rbd", "-N", "ns1", "rm", "inns")
		if got := cut("", "rados", "-p", "rbd", "ls", "--all"); got != "big\n" && got != "\tbig\n" {
			t.Errorf("ls after rm: %q", got)
		}
		fails("stat rbd/small: no such object", "rados", "-p", "rbd", "stat", "small")
		fails("pool nosuch does not exist", "rados", "-p", "nosuch", "ls")

		// A client whose caps do not cover the pool is refused.
		kr := filepath.Join(tmp, "reader.keyring")
		if _, stderr, err := cuttleIn(t, nil, "--conf", conf, "auth", "get-or-create", "client.reader", "mon=allow r", "osd=allow r pool=other"); err != nil {
			t.Fatalf("auth get-or-create: %v %s", err, stderr)
		}
		keyring, stderr, err := cuttleIn(t, nil, "--conf", conf, "auth", "get", "client.reader")
		if err != nil {
			t.Fatalf("auth get: %v %s", err, stderr)
		}
		if err := os.WriteFile(kr, []byte(keyring), 0o600); err != nil {
			t.Fatal(err)
		}
		_, stderr, err = cuttleIn(t, nil, "--conf", conf, "--name", "client.reader", "--keyring", kr, "rados", "-p", "rbd", "get", "big", "-")
		if err == nil || !strings.Contains(stderr, "permission denied") {
			t.Errorf("a read without caps: %v %q", err, stderr)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	conn, err := rados.ConnectConf(ctx, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	t.Run("concurrent appends", func(t *testing.T) {
		ioc, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		const writers, each = 8, 40
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for g := range writers {
			wg.Go(func() {
				for i := range each {
					if err := ioc.Append(ctx, "appended", fmt.Appendf(nil, "w%d-%03d;", g, i)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		b, err := ioc.Read(ctx, "appended", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != writers*each*len("w0-000;") {
			t.Fatalf("%d bytes, want %d", len(b), writers*each*len("w0-000;"))
		}
		seen := map[string]int{}
		for _, rec := range strings.Split(strings.TrimSuffix(string(b), ";"), ";") {
			seen[rec]++
		}
		next := make([]int, writers)
		for _, rec := range strings.Split(strings.TrimSuffix(string(b), ";"), ";") {
			// Each writer's appends land in the order it made them.
			var g, i int
			if _, err := fmt.Sscanf(rec, "w%d-%d", &g, &i); err != nil || i != next[g] {
				t.Fatalf("record %q out of order (want w%d-%03d): %v", rec, g, next[g], err)
			}
			next[g]++
		}
		for g := range writers {
			for i := range each {
				if n := seen[fmt.Sprintf("w%d-%03d", g, i)]; n != 1 {
					t.Errorf("w%d-%03d appears %d times", g, i, n)
				}
			}
		}
	})

	t.Run("list many objects", func(t *testing.T) {
		n := defaultListObjects
		if v := os.Getenv(listObjectsEnv); v != "" {
			if n, err = strconv.Atoi(v); err != nil {
				t.Fatalf("%s=%q", listObjectsEnv, v)
			}
		}
		ioc, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ioc.SetNamespace("many")
		start := time.Now()
		createObjects(ctx, t, ioc, n, 256)
		created := time.Since(start)
		start = time.Now()
		out := cut("", "rados", "-p", "rbd", "-N", "many", "ls")
		listed := time.Since(start)
		names := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		seen := make(map[string]bool, len(names))
		for _, name := range names {
			seen[name] = true
		}
		if len(names) != n || len(seen) != n {
			t.Fatalf("ls listed %d names (%d distinct), want %d", len(names), len(seen), n)
		}
		for _, i := range []int{0, n / 2, n - 1} {
			if !seen[manyName(i)] {
				t.Errorf("%s not listed", manyName(i))
			}
		}
		t.Logf("%d objects: created in %v (%.0f/s), listed by cuttle rados ls in %v", n, created.Round(time.Millisecond),
			float64(n)/created.Seconds(), listed.Round(time.Millisecond))
	})

	t.Run("bench", func(t *testing.T) {
		out := cut("", "bench", "-p", "rbd", "3", "write", "--no-cleanup")
		t.Logf("cuttle bench -p rbd 3 write --no-cleanup:\n%s", out)
		if !strings.Contains(out, "Total writes made:") || strings.Contains(out, "Cleaning up") {
			t.Errorf("write output:\n%s", out)
		}
		var written int64
		for _, mode := range []string{"seq", "rand"} {
			var rep benchJSON
			js := cut("", "--format", "json", "bench", "-p", "rbd", "2", mode)
			if err := json.Unmarshal([]byte(js), &rep); err != nil {
				t.Fatalf("%s: %v\n%s", mode, err, js)
			}
			if rep.Ops <= 0 || rep.Bandwidth <= 0 || rep.Latency.P99 <= 0 || rep.Objects <= 0 || rep.OpSize != 4<<20 {
				t.Errorf("%s report: %s", mode, js)
			}
			written = rep.Objects
		}
		if out := cut("", "bench", "-p", "rbd", "cleanup"); !strings.Contains(out, fmt.Sprintf("Removed %d objects", written)) {
			t.Errorf("cleanup of %d objects: %s", written, out)
		}
	})
}

// checkDF waits until `df --format json` shows pool holding objects and
// stored bytes (the OSDs report within seconds), then checks that `osd df
// --format json` shows every OSD up with its store's usage and that the
// PG copies on the OSDs add up to every PG of every pool times its size
// (3 copies on 3 OSDs).
func checkDF(t *testing.T, cut func(args ...string) string, pool string, objects, stored int64) {
	t.Helper()
	type dfPool struct {
		Name  string `json:"name"`
		PGNum int    `json:"pg_num"`
		Stats struct {
			Stored   int64 `json:"stored"`
			Objects  int64 `json:"objects"`
			Used     int64 `json:"bytes_used"`
			MaxAvail int64 `json:"max_avail"`
		} `json:"stats"`
	}
	var df struct {
		Stats struct {
			Total int64 `json:"total_bytes"`
		} `json:"stats"`
		Pools []dfPool `json:"pools"`
	}
	var got dfPool
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if err := json.Unmarshal([]byte(cut("--format", "json", "df")), &df); err != nil {
			t.Fatalf("df json: %v", err)
		}
		for _, p := range df.Pools {
			if p.Name == pool {
				got = p
			}
		}
		if got.Stats.Objects == objects && got.Stats.Stored == stored {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("df shows pool %s as %+v after a minute, want %d objects, %d bytes", pool, got, objects, stored)
		}
	}
	if got.Stats.Used != 3*stored || got.Stats.MaxAvail <= 0 || df.Stats.Total <= 0 {
		t.Errorf("df: %+v, pool %+v", df.Stats, got)
	}
	if out := cut("df"); !strings.Contains(out, "--- POOLS ---\n") || !regexp.MustCompile(`(?m)^`+pool+` `).MatchString(out) {
		t.Errorf("df:\n%s", out)
	}
	var osdDF struct {
		Nodes []struct {
			ID     int32  `json:"id"`
			KB     int64  `json:"kb"`
			KBUsed int64  `json:"kb_used"`
			PGs    int    `json:"pgs"`
			Status string `json:"status"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(cut("--format", "json", "osd", "df")), &osdDF); err != nil || len(osdDF.Nodes) != 3 {
		t.Fatalf("osd df json: %+v %v", osdDF, err)
	}
	copies, want := 0, 0
	for _, n := range osdDF.Nodes {
		if n.KB <= 0 || n.KBUsed <= 0 || n.PGs <= 0 || n.Status != "up" {
			t.Errorf("osd df: osd.%d %+v", n.ID, n)
		}
		copies += n.PGs
	}
	for _, p := range df.Pools {
		want += 3 * p.PGNum
	}
	if copies != want {
		t.Errorf("osd df: %d PG copies on the OSDs, want %d", copies, want)
	}
}

func manyName(i int) string { return fmt.Sprintf("many-%07d", i) }

// createObjects creates n empty objects with inflight writes in flight
// (empty: a blockstore gives each object with data at least 64 KiB).
func createObjects(ctx context.Context, t *testing.T, ioc *rados.IOContext, n, inflight int) {
	t.Helper()
	comps := make(chan *rados.Completion, inflight)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		for c := range comps {
			if err := c.Wait(ctx); err != nil {
				errc <- err
				for range comps {
				}
				return
			}
		}
	}()
	for i := range n {
		w := rados.NewWriteOp()
		w.Create(false)
		comps <- ioc.OperateWriteAsync(ctx, manyName(i), w)
	}
	close(comps)
	if err := <-errc; err != nil {
		t.Fatalf("create objects: %v", err)
	}
}

// benchJSON is the part of "cuttle bench --format json" these tests read.
type benchJSON struct {
	OpSize    uint64  `json:"op_size"`
	Objects   int64   `json:"objects"`
	Ops       int64   `json:"ops"`
	Bandwidth float64 `json:"bandwidth_mb_s"`
	Latency   struct {
		P99 float64 `json:"p99"`
	} `json:"latency_s"`
}

// sortedLines returns the lines of s in order, one per line.
func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}
