package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/launcher"
	"github.com/cuttlestore/cuttle/internal/mon/osdmon"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/rados"
)

// `cuttle cluster up` with OSDs, as make run starts it: one monitor and
// three OSD processes with file-backed stores, every OSD up in the map,
// a pool that takes data through the client library; an OSD killed with
// SIGKILL is the only daemon the next up restarts, and it comes up
// again with its data; down stops everything.
func TestClusterUpOSDs(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2")

	out, stderr, err := cuttleProc(t, "cluster", "up", "--fs=false", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osds", "3", "--osd-size", "256M")
	if err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	for _, want := range []string{"health: HEALTH_OK", "osd tree", "pool rbd keeps 3 copies"} {
		if !strings.Contains(out, want) {
			t.Errorf("cluster up output lacks %q:\n%s", want, out)
		}
	}
	before := localStatus(t, dir)
	if len(before) != 4 {
		t.Fatalf("status: %+v", before)
	}
	for name, s := range before {
		if s.State != launcher.Running || s.PID == 0 {
			t.Fatalf("%s after up: %+v", name, s)
		}
	}
	conf := filepath.Join(dir, "cuttle.conf")
	cli := func(args ...string) string {
		t.Helper()
		out, stderr, err := run(t, append([]string{"--conf", conf}, args...)...)
		if err != nil {
			t.Fatalf("cuttle %s: %v %s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	checkUp := func(when string) {
		t.Helper()
		var st osdmon.StatView
		if err := json.Unmarshal([]byte(cli("--format", "json", "osd", "stat")), &st); err != nil || st.NumOSD != 3 || st.NumUp != 3 || st.NumIn != 3 {
			t.Fatalf("osd stat %s: %+v, %v", when, st, err)
		}
		tree := cli("osd", "tree")
		for _, name := range []string{"osd.0", "osd.1", "osd.2"} {
			if !strings.Contains(tree, name) {
				t.Fatalf("osd tree %s lacks %s:\n%s", when, name, tree)
			}
		}
		if n := strings.Count(tree, " up "); n != 3 {
			t.Fatalf("osd tree %s shows %d up:\n%s", when, n, tree)
		}
	}
	checkUp("after up")
	if pools := cli("osd", "pool", "ls", "detail"); !strings.Contains(pools, "'rbd' replicated size 3") {
		t.Errorf("pools: %s", pools)
	}
	if m := httpGet(t, "http://"+before["osd.0"].MetricsAddr+"/metrics"); !strings.Contains(m, "cuttle_osd_map_epoch") {
		t.Errorf("osd.0's metrics lack the map epoch:\n%s", lastLines(m, 10))
	}
	// Each OSD's store is a sparse file of the size asked for.
	if fi, err := os.Stat(filepath.Join(dir, "osd.1", daemon.OSDBlockFile)); err != nil || fi.Size() != 256<<20 {
		t.Errorf("osd.1's data file: %v, %v", fi, err)
	}

	// Data goes in through the client library, cephx and all.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objects := map[string][]byte{}
	roundTrip(ctx, t, conf, objects, "before", []byte("written before the SIGKILL"))
	// The objects' records went through the OSDs' record caches.
	// Their transactions went through the stores' group commits.
	var lookups, txns float64
	for _, name := range []string{"osd.0", "osd.1", "osd.2"} {
		m := httpGet(t, "http://"+before[name].MetricsAddr+"/metrics")
		lookups += metricValue(m, "cuttle_osd_store_record_cache_hits_total") + metricValue(m, "cuttle_osd_store_record_cache_misses_total")
		txns += metricValue(m, "cuttle_osd_store_transactions_total")
		if !strings.Contains(m, "cuttle_osd_store_unstaged_reads_total") {
			t.Errorf("%s's metrics lack the store's counters:\n%s", name, lastLines(m, 10))
		}
		if !strings.Contains(m, "cuttle_osd_store_record_cache_bytes") {
			t.Errorf("%s's metrics lack the record cache:\n%s", name, lastLines(m, 10))
		}
	}
	if lookups == 0 {
		t.Error("no record cache lookups counted after writing and reading objects")
	}
	if txns == 0 {
		t.Error("no store transactions counted after writing objects")
	}
	// The stores' metadata databases logged those transactions.
	var kv objectstore.KVStats
	if err := json.Unmarshal([]byte(cli("--format", "json", "tell", "osd.0", "dump_objectstore_kv_stats")), &kv); err != nil || len(kv.Levels) != 7 || kv.WALBytesIn == 0 {
		t.Errorf("osd.0's kv stats: %+v, %v", kv, err)
	}
	if text := cli("tell", "osd.0", "dump_objectstore_kv_stats"); !strings.Contains(text, "WAL") {
		t.Errorf("osd.0's kv stats as text:\n%s", text)
	}

	// SIGKILL an OSD; the next up restarts it and only it.
	victim := before["osd.1"]
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for localStatus(t, dir)["osd.1"].State != launcher.Stopped {
		select {
		case <-deadline:
			t.Fatal("osd.1 still counts as running after SIGKILL")
		case <-tick.C:
		}
	}
	out, stderr, err = cuttleProc(t, "cluster", "up", "--dir", dir)
	if err != nil {
		t.Fatalf("second cluster up: %v\n%s%s", err, out, stderr)
	}
	if strings.Count(stderr, "started ") != 1 || !strings.Contains(stderr, "started osd.1") {
		t.Errorf("second up should start osd.1 alone:\n%s", stderr)
	}
	after := localStatus(t, dir)
	for _, name := range []string{"mon.a", "osd.0", "osd.2"} {
		if after[name].PID != before[name].PID {
			t.Errorf("%s was restarted: pid %d, was %d", name, after[name].PID, before[name].PID)
		}
	}
	if s := after["osd.1"]; s.State != launcher.Running || s.PID == victim.PID {
		t.Fatalf("osd.1 after the second up: %+v", s)
	}
	checkUp("after the restart")
	// The OSD logs that it is up once it has the map that says so, which
	// may be after the monitors answered checkUp: wait for the line.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		log, _ := os.ReadFile(victim.Log)
		if strings.Count(string(log), `msg="up in the OSD map"`) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("osd.1's log should show it up twice:\n%s", lastLines(string(log), 20))
			break
		}
	}
	roundTrip(ctx, t, conf, objects, "after", []byte("written after the restart"))

	out, stderr, err = cuttleProc(t, "cluster", "down", "--dir", dir)
	if err != nil {
		t.Fatalf("cluster down: %v %s", err, stderr)
	}
	for name, s := range localStatus(t, dir) {
		if !strings.Contains(out, "stopped "+name) {
			t.Errorf("cluster down did not stop %s cleanly:\n%s", name, out)
		}
		if s.State != launcher.Stopped || processLives(after[name].PID) {
			t.Errorf("%s after down: %+v", name, s)
		}
	}
	// A clean stop closes the store: its log says so.
	if log, _ := os.ReadFile(after["osd.0"].Log); !strings.Contains(string(log), `msg="store closed"`) {
		t.Errorf("osd.0's log lacks the store's close:\n%s", lastLines(string(log), 10))
	}
	// Each OSD asked the monitors to mark it down as it stopped.
	for _, name := range []string{"osd.0", "osd.1", "osd.2"} {
		if log, _ := os.ReadFile(after[name].Log); !strings.Contains(string(log), `msg="marked down in the OSD map"`) {
			t.Errorf("%s did not ask to be marked down as it stopped:\n%s", name, lastLines(string(log), 10))
		}
	}
	restartWholeCluster(t, dir, cli)
	roundTrip(t.Context(), t, conf, objects, "after the whole cluster restarted", []byte("written after down and up"))
	if out, stderr, err := cuttleProc(t, "cluster", "down", "--dir", dir); err != nil {
		t.Fatalf("last cluster down: %v %s%s", err, out, stderr)
	}
}

// restartWholeCluster starts the stopped cluster in dir again. Up must
// return only once the restarted OSDs have their PGs active again (not
// on the word of the reports their predecessors made), and clients then
// write at once, 16 writes in flight, as a benchmark does. Writes used to
// wait for a map that never came: an ESTALE answering an earlier send of
// an op arrived after the op was sent again.
func restartWholeCluster(t *testing.T, dir string, cli func(args ...string) string) {
	t.Helper()
	out, stderr, err := cuttleProc(t, "cluster", "up", "--dir", dir)
	if err != nil {
		t.Fatalf("cluster up after down: %v\n%s%s", err, out, stderr)
	}
	if st := cli("pg", "stat"); strings.Contains(st, "stale") || strings.Contains(st, "unknown") {
		t.Errorf("pg stat once up returned: %s", st)
	}
	bench := cli("bench", "-p", "rbd", "2", "write", "-b", "4096", "-t", "16", "--timeout", "30s")
	var writes int
	for _, line := range strings.Split(bench, "\n") {
		if v, ok := strings.CutPrefix(line, "Total writes made:"); ok {
			writes, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if writes < 16 {
		t.Errorf("bench after the restart made %d writes:\n%s", writes, bench)
	}
}

// roundTrip writes an object to pool rbd and reads it back, with every
// object written before.
func roundTrip(ctx context.Context, t *testing.T, conf string, earlier map[string][]byte, name string, data []byte) {
	t.Helper()
	earlier[name] = data
	conn, err := rados.ConnectConf(ctx, conf)
	if err != nil {
		t.Fatalf("rados connect: %v", err)
	}
	defer conn.Close()
	ioc, err := conn.OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	if err := ioc.WriteFull(ctx, name, data); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
	for obj, want := range earlier {
		got, err := ioc.Read(ctx, obj, 0, uint64(len(want)))
		if err != nil || string(got) != string(want) {
			t.Fatalf("read %s: %q, %v", obj, got, err)
		}
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
