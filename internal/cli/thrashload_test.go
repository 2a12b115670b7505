package cli

import (
	"context"
	"encoding/json"
	"errors"
	mrand "math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
)

// The thrash test's workloads beside the writer of pool rbd: snapshots
// in pool snapped and watch/notify on one object of pool rbd, the same
// workloads the chaos simulation runs (internal/sim's snapload.go and
// watchload.go), here in real time against launched daemons.

// thrashWatched is the object the watch/notify workload watches.
const thrashWatched = "thrash-watched"

// thrashLoads runs the snapshot and watch/notify workloads.
type thrashLoads struct {
	c           *nsCluster
	snapped     *sim.SnapWorkload
	sio         *rados.IOContext
	watched     *sim.WatchLoad
	halt        chan struct{} // stops the snapshots and the notifier
	haltWatch   chan struct{} // stops the watcher, once the checks are done
	wg, watcher sync.WaitGroup
	heads       int // the snapped objects that exist at the end
}

// startThrashLoads starts the workloads: the snapshot client shares the
// writer's client, the watcher is a client of its own.
func startThrashLoads(c *nsCluster, seed uint64) *thrashLoads {
	t := c.t
	sio, err := c.conn.OpenIOContext("snapped")
	if err != nil {
		t.Fatal(err)
	}
	nio, err := c.conn.OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wconn, err := rados.ConnectConf(ctx, c.conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wconn.Close() })
	wio, err := wconn.OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	l := &thrashLoads{c: c, snapped: sim.NewSnapWorkload(sio), sio: sio, halt: make(chan struct{}), haltWatch: make(chan struct{})}
	// A notify may wait for its PG to peer: up to a minute past its
	// 3 s timeout.
	l.watched = sim.NewWatchLoad(wio, nio, thrashWatched, 3*time.Second, time.Minute)
	if err := l.watched.Start(ctx); err != nil {
		t.Fatal(err)
	}
	report := func(format string, args ...any) { t.Errorf("snapshot workload: "+format, args...) }
	l.wg.Go(func() {
		l.snapped.Run(mrand.New(mrand.NewPCG(seed, 99)), 100*time.Millisecond, 10*time.Second, l.halt, report)
	})
	l.wg.Go(func() { l.watched.RunNotifier(time.Second, l.halt) })
	l.watcher.Go(func() { l.watched.RunWatcher(l.haltWatch) })
	t.Cleanup(l.stopWatcher)
	return l
}

// stop ends the snapshot client and the notifier.
func (l *thrashLoads) stop() {
	close(l.halt)
	l.wg.Wait()
}

func (l *thrashLoads) stopWatcher() {
	select {
	case <-l.haltWatch:
	default:
		close(l.haltWatch)
		l.watcher.Wait()
	}
}

// afterHeal checks, with every fault healed: every notify so far
// completed and none was lost silently; a watch of the watcher hears a
// notify; every object reads right at every live snapshot.
func (l *thrashLoads) afterHeal() {
	t := l.c.t
	t.Helper()
	for _, bad := range l.watched.Check(2 * time.Second) {
		t.Errorf("watch/notify: %s", bad)
	}
	var last error
	l.c.waitFor("a watch to hear a notify after the heal", 2*time.Minute, func() bool {
		last = l.watched.Final()
		return last == nil
	})
	l.stopWatcher()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, bad := range l.snapped.Verify(ctx) {
		t.Errorf("after the heal: %s", bad)
	}
	if err := l.snapped.RemoveAll(ctx); err != nil {
		t.Fatal(err)
	}
}

// verifyAndTrim checks the snapped objects' heads again after repair and
// deep scrub, then that trimming the removed snapshots leaves pool
// snapped with only its heads (df's object count falls to them).
func (l *thrashLoads) verifyAndTrim() {
	t := l.c.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, bad := range l.snapped.Verify(ctx) {
		t.Errorf("after repair and deep scrub: %s", bad)
	}
	for _, name := range l.snapped.Objects() {
		_, err := l.sio.Stat(ctx, name)
		switch {
		case err == nil:
			l.heads++
		case !errors.Is(err, rados.ErrNotFound):
			t.Fatalf("stat %s: %v", name, err)
		}
	}
	var objects int64
	l.c.waitFor("the removed snapshots' clones trimmed", 3*time.Minute, func() bool {
		objects = poolObjects(l.c.surfCluster, "snapped")
		return objects == int64(l.heads)
	})
}

// poolObjects is df's object count of pool.
func poolObjects(s *surfCluster, pool string) int64 {
	var df struct {
		Pools []struct {
			Name  string `json:"name"`
			Stats struct {
				Objects int64 `json:"objects"`
			} `json:"stats"`
		} `json:"pools"`
	}
	if err := json.Unmarshal([]byte(s.cli("--format", "json", "df")), &df); err != nil {
		s.t.Fatalf("df: %v", err)
	}
	for _, p := range df.Pools {
		if p.Name == pool {
			return p.Stats.Objects
		}
	}
	s.t.Fatalf("df has no pool %s", pool)
	return 0
}

// report logs what the workloads did.
func (l *thrashLoads) report(t *testing.T) {
	t.Logf("snapshots: %v; %d objects at the end, their clones trimmed", l.snapped.Ops, l.heads)
	t.Logf("watch/notify: %v", l.watched.Counts())
}
