package cli

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/launcher"
	"github.com/cuttlestore/cuttle/rados"
	"golang.org/x/sys/unix"
)

// The failure table of SURFsara's evaluation of Ceph, as named tests
// against a launched cluster: each injects one failure while a verifying
// workload writes, checks that I/O goes on, and ends with the cluster
// HEALTH_OK and every acknowledged write intact. An OSD's disk gone is
// TestSURFsaraDiskGone (diskgone_test.go), an OSD cut off by the network
// TestOSDNetworkPartition (osdpartition_test.go).

// surfCluster is a local cluster with a workload that writes versioned
// objects and remembers what was acknowledged.
type surfCluster struct {
	t         *testing.T
	dir, conf string
	conn      *rados.Conn
	io        *rados.IOContext

	mu      sync.Mutex
	acked   map[string]int   // the newest acknowledged version of each object
	unknown map[string][]int // versions whose writes failed (they may have applied)
	writes  int
}

func newSURFCluster(t *testing.T, mons int) *surfCluster { return newSURFClusterOf(t, mons, 3) }

func newSURFClusterOf(t *testing.T, mons, osds int) *surfCluster {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	var daemons []string
	for i := range osds {
		daemons = append(daemons, fmt.Sprint("osd.", i))
	}
	for i := range mons {
		daemons = append(daemons, fmt.Sprint("mon.", string(rune('a'+i))))
	}
	dir, base := localClusterDir(t, daemons...)
	if out, stderr, err := cuttleProc(t, "cluster", "up", "--fs=false", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--mons", fmt.Sprint(mons),
		"--osds", fmt.Sprint(osds), "--osd-size", "256M"); err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	s := &surfCluster{t: t, dir: dir, conf: filepath.Join(dir, "cuttle.conf"), acked: map[string]int{}, unknown: map[string][]int{}}
	t.Cleanup(s.dumpGoroutines) // before cluster down stops them
	s.connect()
	return s
}

// connect opens the workload's client of pool rbd.
func (s *surfCluster) connect() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := rados.ConnectConf(ctx, s.conf)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { conn.Close() })
	s.conn = conn
	if s.io, err = conn.OpenIOContext("rbd"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *surfCluster) cli(args ...string) string {
	s.t.Helper()
	out, stderr, err := run(s.t, append([]string{"--conf", s.conf}, args...)...)
	if err != nil {
		s.t.Fatalf("cuttle %s: %v %s", strings.Join(args, " "), err, stderr)
	}
	return out
}

// waitFor polls cond until it holds, failing after limit.
func (s *surfCluster) waitFor(what string, limit time.Duration, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			s.t.Fatalf("still waiting for %s after %v; status:\n%s", what, limit, s.cli("status"))
		}
		<-tick.C
	}
}

func surfContent(name string, v int) []byte {
	return []byte(strings.Repeat(fmt.Sprintf("%s version %d. ", name, v), 64))
}

// write writes the next version of object i.
func (s *surfCluster) write(ctx context.Context, i int) {
	name := fmt.Sprint("surf-", i)
	s.mu.Lock()
	v := s.acked[name] + len(s.unknown[name]) + 1
	s.mu.Unlock()
	err := s.io.WriteFull(ctx, name, surfContent(name, v))
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.unknown[name] = append(s.unknown[name], v)
		return
	}
	s.acked[name], s.unknown[name] = v, nil
	s.writes++
}

// writer writes round the objects until the returned stop is called.
func (s *surfCluster) writer() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i = (i + 1) % 40 {
			wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
			s.write(wctx, i)
			wcancel()
		}
	})
	return func() { cancel(); wg.Wait() }
}

// acknowledged returns how many writes were acknowledged so far.
func (s *surfCluster) acknowledged() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// keepsWriting waits until n more writes are acknowledged: I/O goes on.
func (s *surfCluster) keepsWriting(what string, n int) {
	s.t.Helper()
	from := s.acknowledged()
	s.waitFor(fmt.Sprintf("%d writes acknowledged %s", n, what), 2*time.Minute, func() bool { return s.acknowledged() >= from+n })
}

// verify reads every object back: the acknowledged version, or a newer
// one whose write failed.
func (s *surfCluster) verify() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, v := range s.acked {
		got, err := s.io.Read(ctx, name, 0, 0)
		ok := err == nil && string(got) == string(surfContent(name, v))
		for _, u := range s.unknown[name] {
			ok = ok || err == nil && string(got) == string(surfContent(name, u))
		}
		if !ok {
			s.t.Errorf("%s: read %.40q, %v; acknowledged version %d (unacknowledged %v)", name, got, err, v, s.unknown[name])
		}
	}
	if len(s.acked) == 0 {
		s.t.Error("no write was acknowledged")
	}
}

// healthOK waits until the cluster reports HEALTH_OK.
func (s *surfCluster) healthOK() {
	s.t.Helper()
	s.waitFor("HEALTH_OK", 3*time.Minute, func() bool { return strings.HasPrefix(s.cli("health"), "HEALTH_OK") })
}

func (s *surfCluster) kill(name string) {
	s.t.Helper()
	if err := syscall.Kill(localStatus(s.t, s.dir)[name].PID, syscall.SIGKILL); err != nil {
		s.t.Fatal(err)
	}
	s.waitFor(name+" to stop", time.Minute, func() bool { return localStatus(s.t, s.dir)[name].State == launcher.Stopped })
}

// restart runs cluster up again, which starts what is not running.
func (s *surfCluster) restart() {
	s.t.Helper()
	if out, stderr, err := cuttleProc(s.t, "--timeout", "100s", "cluster", "up", "--dir", s.dir); err != nil {
		s.t.Fatalf("cluster up again: %v\n%s%s", err, out, stderr)
	}
}

// A monitor, the leader, killed with SIGKILL while clients write: the
// other two elect a leader, writes go on, and the killed one rejoins.
func TestSURFsaraMonitorKilledDuringWrites(t *testing.T) {
	s := newSURFCluster(t, 3)
	stop := s.writer()
	s.keepsWriting("before the failure", 50)
	var stat struct {
		Leader string `json:"leader"`
	}
	if err := json.Unmarshal([]byte(s.cli("--format", "json", "mon", "stat")), &stat); err != nil || stat.Leader == "" {
		t.Fatalf("mon stat: %+v %v", stat, err)
	}
	s.kill("mon." + stat.Leader)
	s.keepsWriting("with the leader dead", 50)
	s.restart()
	s.healthOK()
	s.keepsWriting("after it rejoined", 20)
	stop()
	s.verify()
}

// An OSD killed with SIGKILL while clients write (a daemon killed without
// a clean shutdown): its peers report it, writes go on with two copies,
// and when it returns peering brings it what it missed.
func TestSURFsaraOSDKilledDuringWrites(t *testing.T) {
	s := newSURFCluster(t, 1)
	stop := s.writer()
	s.keepsWriting("before the failure", 50)
	s.kill("osd.1")
	s.keepsWriting("with osd.1 dead", 50)
	s.restart()
	s.healthOK()
	s.keepsWriting("after it returned", 20)
	stop()
	s.verify()
}

// Stored data overwritten with random bytes on one OSD (SURFsara's Ceph
// OSDs crashed on this): reads are still answered right (a bad copy on a
// primary is repaired from a replica on the way), a deep scrub finds the
// damaged copies (HEALTH_ERR, PG_DAMAGED), repair rewrites them, and the
// cluster returns to HEALTH_OK with every write intact; no OSD crashes.
func TestSURFsaraStoredDataOverwritten(t *testing.T) {
	s := newSURFCluster(t, 1)
	stop := s.writer()
	s.keepsWriting("before the damage", 120)
	stop()
	// Objects were written first into the start of the data file (no
	// header there): overwrite its first 2 MiB. With O_DIRECT, as the
	// OSD itself writes, the way a failing disk would: a buffered write
	// beside the OSD's direct I/O can make the kernel fail to invalidate
	// its cached pages ("collision with buffered I/O") and report EIO on
	// the file to the next fsync, the OSD's included.
	block := filepath.Join(s.dir, "osd.2", "block")
	f, err := os.OpenFile(block, os.O_WRONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	junk, err := unix.Mmap(-1, 0, 2<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE) // page-aligned
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(junk)
	rand.Read(junk)
	if _, err := f.WriteAt(junk, 0); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		t.Fatal(err)
	}
	s.verify()
	pgs := s.pgIDs()
	s.scrubAll(pgs, "deep-scrub")
	if h := s.cli("health", "detail"); !strings.Contains(h, "PG_DAMAGED") {
		t.Fatalf("a deep scrub after the damage found nothing:\n%s", h)
	}
	s.scrubAll(pgs, "repair")
	s.scrubAll(pgs, "deep-scrub")
	s.healthOK()
	if st := localStatus(t, s.dir)["osd.2"]; st.State != launcher.Running {
		t.Fatalf("osd.2 after reading damaged data: %s", st.State)
	}
	s.verify()
}

// pgIDs lists the cluster's PGs.
func (s *surfCluster) pgIDs() []string {
	var ls struct {
		PGStats []struct {
			PGID string `json:"pgid"`
		} `json:"pg_stats"`
	}
	if err := json.Unmarshal([]byte(s.cli("--format", "json", "pg", "ls")), &ls); err != nil || len(ls.PGStats) == 0 {
		s.t.Fatalf("pg ls: %+v %v", ls, err)
	}
	var out []string
	for _, p := range ls.PGStats {
		out = append(out, p.PGID)
	}
	return out
}

// scrubAll asks every PG's primary for a scrub of the kind given and
// waits until each has finished one (its deep-scrub stamp moved).
func (s *surfCluster) scrubAll(pgs []string, verb string) {
	s.t.Helper()
	before := s.deepStamps()
	for _, pg := range pgs {
		s.cli("pg", verb, pg)
	}
	s.waitFor("every PG to "+verb, 3*time.Minute, func() bool {
		now := s.deepStamps()
		for _, pg := range pgs {
			if !now[pg].After(before[pg]) {
				return false
			}
		}
		return true
	})
}

func (s *surfCluster) deepStamps() map[string]time.Time {
	var dump struct {
		PGStats []struct {
			PGID string    `json:"pgid"`
			Deep time.Time `json:"last_deep_scrub_stamp"`
		} `json:"pg_stats"`
	}
	if err := json.Unmarshal([]byte(s.cli("--format", "json", "pg", "dump")), &dump); err != nil {
		s.t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, p := range dump.PGStats {
		out[p.PGID] = p.Deep
	}
	return out
}

// dumpGoroutines logs the goroutines of every running monitor and OSD
// (from its metrics address) when the test failed: what a stuck daemon
// waits for.
func (s *surfCluster) dumpGoroutines() {
	if !s.t.Failed() {
		return
	}
	for name, st := range localStatus(s.t, s.dir) {
		if st.State != launcher.Running || st.MetricsAddr == "" {
			continue
		}
		resp, err := http.Get("http://" + st.MetricsAddr + "/debug/pprof/goroutine?debug=1")
		if err != nil {
			s.t.Logf("%s goroutines: %v", name, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.t.Logf("%s goroutines:\n%s", name, b)
	}
}
