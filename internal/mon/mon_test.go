package mon

import (
	"fmt"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"strings"
	"testing"
	"time"
)

// Reference for these tests: the Raft paper (Ongaro and Ousterhout), §5.2
// leader election, §5.3 log replication, §5.4.1 election restriction, §7
// log compaction; and section 4 of the RADOS paper (monitors agree on the
// cluster map through a Paxos-like protocol and serve it by epoch).

func TestSingleMonitor(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c := newTestCluster(t, 1)
		c.start("a")
		defer c.stopAll()
		tc := c.client("x")
		set(t, tc, "a", "k", "v1")
		if got := get(t, tc, "a", "k"); got != "v1" {
			t.Fatalf("get: %q", got)
		}
		r := tc.mustRun(t, "a", "health")
		if !strings.HasPrefix(r.Text, "HEALTH_OK") {
			t.Fatalf("health: %q", r.Text)
		}
		r, _ = tc.run("a", time.Minute, "no such command")
		if r.Code != 22 {
			t.Fatalf("unknown command: %+v", r)
		}
	})
}

// A write sent to any monitor applies on all, and a read from any other
// monitor right after sees it (ReadIndex).
func TestThreeMonitorsReplicate(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c := newTestCluster(t, 3)
		for _, n := range []string{"a", "b", "c"} {
			c.start(n)
		}
		defer c.stopAll()
		tc := c.client("x")
		for i, mon := range []string{"a", "b", "c", "b", "a"} {
			set(t, tc, mon, fmt.Sprint("k", i), fmt.Sprint("v", i))
			for _, reader := range []string{"a", "b", "c"} {
				if got := get(t, tc, reader, fmt.Sprint("k", i)); got != fmt.Sprint("v", i) {
					t.Fatalf("mon.%s reads %q after a write to mon.%s", reader, got, mon)
				}
			}
		}
		r := tc.mustRun(t, "b", "status")
		if !strings.Contains(r.Text, "quorum a,b,c") || !strings.Contains(r.Text, "HEALTH_OK") {
			t.Fatalf("status:\n%s", r.Text)
		}
	})
}

// Killing the leader: the other two elect a new one and keep accepting
// changes; the old leader rejoins with its store and catches up.
func TestLeaderLossAndRejoin(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c := newTestCluster(t, 3)
		for _, n := range []string{"a", "b", "c"} {
			c.start(n)
		}
		defer c.stopAll()
		tc := c.client("x")
		set(t, tc, "a", "before", "1")
		leader := c.leader(t)
		c.stop(leader)
		others := c.names()
		for i := range 5 {
			set(t, tc, others[i%2], fmt.Sprint("after", i), "2")
		}
		time.Sleep(15 * time.Second) // virtual: past MonDownAfter
		if r := tc.mustRun(t, others[0], "health", "detail", "1"); !strings.Contains(r.Text, "MON_DOWN") || !strings.Contains(r.Text, "mon."+leader) {
			t.Fatalf("health detail with mon.%s down: %q", leader, r.Text)
		}
		c.start(leader)
		if got := get(t, tc, leader, "after4"); got != "2" {
			t.Fatalf("rejoined mon.%s reads %q", leader, got)
		}
	})
}

// A monitor cut off from the other two cannot commit (no majority) and
// refuses writes and current reads; the majority keeps working; after the
// partition heals the minority catches up.
func TestMinorityPartition(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c := newTestCluster(t, 3)
		for _, n := range []string{"a", "b", "c"} {
			c.start(n)
		}
		defer c.stopAll()
		tc := c.client("x")
		set(t, tc, "a", "k", "0")
		c.net.Partition("c:6789", "a:6789")
		c.net.Partition("c:6789", "b:6789")
		r, err := tc.run("c", 20*time.Second, "kv set", "key", "k2", "value", "minority")
		if err == nil && r.Code == 0 {
			t.Fatalf("the minority committed a write: %+v", r)
		}
		set(t, tc, "a", "k", "majority")
		if got := get(t, tc, "b", "k"); got != "majority" {
			t.Fatalf("majority reads %q", got)
		}
		if r, err := tc.run("b", time.Minute, "kv get", "key", "k2"); err != nil || r.Code != 2 {
			t.Fatalf("the majority sees the minority's write: %+v, %v", r, err)
		}
		c.net.Heal()
		if got := get(t, tc, "c", "k"); got != "majority" {
			t.Fatalf("healed minority reads %q", got)
		}
	})
}

// With a short log, a monitor that was down while many changes applied
// catches up through a snapshot (the log it needs is compacted away),
// and a subscriber far behind the kept history gets the full map.
func TestSnapshotCatchUpAndSubscribers(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c := newTestCluster(t, 3)
		c.keep, c.every = 10, 20
		for _, n := range []string{"a", "b", "c"} {
			c.start(n)
		}
		defer c.stopAll()
		tc := c.client("x")
		set(t, tc, "a", "k", "0")
		c.stop("c")
		// When mon.c was the leader, the first write after it stops is
		// sent twice (the test client resends after 5 s while mon.a
		// still retries the first send); the command log applies it once,
		// not a second time after the later writes.
		for i := range 60 {
			set(t, tc, []string{"a", "b"}[i%2], "k", fmt.Sprint(i+1))
		}
		first, err := c.mons["a"].st.FirstIndex()
		if err != nil || first < 20 {
			t.Fatalf("log not compacted: first index %d, %v", first, err)
		}
		c.start("c")
		if got := get(t, tc, "c", "k"); got != "60" {
			t.Fatalf("mon.c after catching up reads %q", got)
		}
		sub := c.client("sub")
		sub.subscribe(t, "c", 1) // epoch 1 was trimmed long ago
		u := <-sub.maps
		if u.Full == nil || u.FullEpoch != u.Newest || u.Newest < 61 {
			t.Fatalf("far-behind subscriber got full epoch %d (newest %d, %d incs)", u.FullEpoch, u.Newest, len(u.Incs))
		}
		set(t, tc, "b", "k", "next")
		u = <-sub.maps
		if len(u.Incs) != 1 || string(u.Incs[0]) != "k=next" {
			t.Fatalf("next update: %+v", u)
		}
	})
}

func (c *testCluster) names() []string {
	var out []string
	for _, mi := range c.monmap.Mons {
		if _, ok := c.mons[mi.Name]; ok {
			out = append(out, mi.Name)
		}
	}
	return out
}

func (c *testCluster) leader(t *testing.T) string {
	t.Helper()
	for _, rm := range c.mons {
		rm.m.mu.Lock()
		l := rm.m.leader
		rm.m.mu.Unlock()
		if mi, ok := c.monmap.ByID(l); ok {
			return mi.Name
		}
	}
	t.Fatal("no leader")
	return ""
}

// On a network that breaks connections at random (losing what was in
// flight) and delays and reorders delivery across connections, writes
// still commit exactly once each and every monitor converges.
func TestLossyNetwork(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				c := newTestClusterNet(t, 3, memnet.Config{Seed: seed, DropRate: 0.02, MinDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond})
				for _, n := range []string{"a", "b", "c"} {
					c.start(n)
				}
				defer c.stopAll()
				tc := c.client("x")
				for i := range 20 {
					set(t, tc, []string{"a", "b", "c"}[i%3], fmt.Sprint("k", i), fmt.Sprint(i))
				}
				for _, n := range []string{"a", "b", "c"} {
					r := tc.mustRun(t, n, "kv stat")
					// One epoch per distinct write: a resent command whose
					// first copy committed finds its value unchanged.
					if !strings.HasPrefix(r.Text, "20 keys, epoch 20") {
						t.Fatalf("mon.%s: %s", n, r.Text)
					}
				}
			})
		})
	}
}

// Bootstrap commands run on the leader until they succeed, once: here a
// first key written when the cluster forms, without any client.
func TestBootstrapCommands(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c := newTestCluster(t, 3)
		c.bootstrap = []moncmd.Command{moncmd.New("kv set", "key", "created", "value", "yes")}
		for _, n := range []string{"a", "b", "c"} {
			c.start(n)
		}
		defer c.stopAll()
		tc := c.client("x")
		time.Sleep(5 * time.Second) // virtual: an election and a tick
		for _, n := range []string{"a", "b", "c"} {
			if got := get(t, tc, n, "created"); got != "yes" {
				t.Fatalf("mon.%s: %q", n, got)
			}
			if r := tc.mustRun(t, n, "kv stat"); !strings.HasPrefix(r.Text, "1 keys, epoch 1") {
				t.Fatalf("mon.%s: bootstrap ran more than once: %s", n, r.Text)
			}
		}
	})
}

// A restarted lone monitor leads at once rather than after an election
// timeout (10 ticks of 100 ms): every single-monitor cluster, `make
// run`'s included, used to wait 1-2 s at each start. (At the very first
// start Raft will not campaign before it has applied the bootstrap
// configuration, and the election timeout elects it.)
func TestLoneMonitorLeadsAtOnce(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c := newTestCluster(t, 1)
		defer c.stopAll()
		c.start("a")
		set(t, c.client("x"), "a", "k", "v")
		c.stop("a")
		start := time.Now()
		c.start("a")
		synctest.Wait() // everything has run that can before a tick
		m := c.mons["a"].m
		m.mu.Lock()
		leader := m.leader
		m.mu.Unlock()
		if leader != m.id || time.Since(start) != 0 {
			t.Errorf("after a restart: leader %d (this monitor is %d) after %v", leader, m.id, time.Since(start))
		}
	})
}
