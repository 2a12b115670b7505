package failover

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/mdsmap"
)

func TestFirstStandbyCreatesRankZero(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 1, 0))
	c.start("a")
	c.start("b")
	c.run(1)
	if got := c.holder(1, 0); got != "a=creating" {
		t.Fatalf("rank 0 after the first beacons: %s", got)
	}
	c.run(1)
	if got, want := c.m.Summary(), "cephfs:1 {0=a=up:active} 1 up:standby"; got != want {
		t.Fatalf("summary %q, want %q", got, want)
	}
}

// A rank whose beacons stop is given to a standby once the grace has
// passed, and its holder fenced; the standby replays and becomes active.
func TestSilentRankReplacedAfterGrace(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 1, 0))
	c.start("a")
	c.start("b")
	c.until(5, "a active", func() bool { return c.holder(1, 0) == "a=active" })
	c.daemons["a"].alive = false
	took := c.until(10, "b takes rank 0", func() bool { return strings.HasPrefix(c.holder(1, 0), "b=") })
	// Heard last at t, laggy once more than the grace has passed: the
	// tick of t+5s fails it.
	if took != 5 {
		t.Errorf("b took rank 0 after %d s, want 5 (grace 4 s, ticks every second)", took)
	}
	if c.holder(1, 0) != "b=replay" || !slices.Equal(c.fenced, []string{fmt.Sprintf("addr-a/%d", 1<<32|1)}) {
		t.Fatalf("rank 0 %s, fenced %v", c.holder(1, 0), c.fenced)
	}
	c.until(4, "b active", func() bool { return c.holder(1, 0) == "b=active" })
}

// Before the grace nothing happens, however many ticks pass.
func TestBeaconsWithinGraceKeepTheRank(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 1, 0))
	c.start("a")
	c.start("b")
	c.run(3)
	c.daemons["a"].alive = false
	c.run(4) // last heard at t, now t+4: not more than the grace
	if c.holder(1, 0) != "a=active" {
		t.Fatalf("rank 0 %s after 4 s of silence, grace 4 s", c.holder(1, 0))
	}
	c.daemons["a"].alive = true
	c.run(10)
	if c.holder(1, 0) != "a=active" || len(c.fenced) != 0 {
		t.Fatalf("rank 0 %s, fenced %v", c.holder(1, 0), c.fenced)
	}
}

// A standby-replay follower of the rank takes it over rather than a
// plain standby, and the standby then follows the new holder.
func TestFollowerPreferred(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 1, mdsmap.AllowStandbyReplay))
	c.start("a")
	c.start("c")
	c.start("b")
	c.run(3)
	if f := c.m.Follower(1, 0); f == nil || f.Name != "c" {
		t.Fatalf("follower of rank 0: %+v; map %s", f, c.m.Summary())
	}
	c.daemons["a"].alive = false
	c.until(6, "c takes rank 0", func() bool { return strings.HasPrefix(c.holder(1, 0), "c=") })
	c.until(4, "c active", func() bool { return c.holder(1, 0) == "c=active" })
	c.run(1)
	if f := c.m.Follower(1, 0); f == nil || f.Name != "b" {
		t.Fatalf("follower after takeover: %+v; map %s", f, c.m.Summary())
	}
}

// Without a replacement a laggy holder keeps its rank (Ceph's rule).
func TestLaggyHolderWithoutReplacementStays(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 1, 0))
	c.start("a")
	c.run(2)
	c.daemons["a"].alive = false
	c.run(20)
	if c.holder(1, 0) != "a=active" || len(c.fenced) != 0 {
		t.Fatalf("rank 0 %s, fenced %v", c.holder(1, 0), c.fenced)
	}
	if got := LaggyHolders(c.m, c.live.Laggy(c.m, c.now, c.grace)); len(got) != 1 || got[0].Name != "a" {
		t.Fatalf("LaggyHolders: %v", got)
	}
	// A standby arriving now replaces it at the next tick.
	c.start("b")
	c.run(1)
	if c.holder(1, 0) != "b=replay" {
		t.Fatalf("rank 0 %s after a standby arrived", c.holder(1, 0))
	}
}

// A laggy standby is dropped from the map.
func TestLaggyStandbyRemoved(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 1, 0))
	c.start("a")
	c.start("b")
	c.run(2)
	c.daemons["b"].alive = false
	c.run(5)
	if len(c.m.Standbys()) != 0 || len(c.fenced) != 0 {
		t.Fatalf("standbys %d, fenced %v", len(c.m.Standbys()), c.fenced)
	}
}

// A daemon restarted under its name is a new incarnation: the old one's
// rank is failed at once (no grace to wait) and goes to a standby.
func TestNewIncarnationReplacesOld(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 1, 0))
	c.start("a")
	c.start("b")
	c.run(2)
	c.start("a")
	c.run(1)
	if c.holder(1, 0) != "b=replay" || !slices.Equal(c.fenced, []string{fmt.Sprintf("addr-a/%d", 1<<32|1)}) {
		t.Fatalf("rank 0 %s, fenced %v", c.holder(1, 0), c.fenced)
	}
	if d := c.m.DaemonByName("a"); d == nil || d.State != mdsmap.StateStandby {
		t.Fatalf("new a: %+v", d)
	}
}

// max_mds 2 grows one rank at a time once rank 0 is active; lowering it
// stops the highest rank, which leaves once it reports stopped.
func TestRanksGrowAndShrink(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 2, 0))
	for _, n := range []string{"a", "b", "c"} {
		c.start(n)
	}
	c.run(1)
	if c.holder(1, 1) != "-" {
		t.Fatalf("rank 1 given before rank 0 is active: %s", c.holder(1, 1))
	}
	c.until(3, "two active ranks", func() bool { return c.m.Summary() == "cephfs:2 {0=a=up:active,1=b=up:active} 1 up:standby" })
	ch := Begin(c.m)
	ch.Map.FS[1].MaxMDS = 1
	ch.event("max_mds 1")
	ch.Assign()
	c.apply(ch)
	if c.holder(1, 1) != "b=stopping" {
		t.Fatalf("rank 1 %s after max_mds 1", c.holder(1, 1))
	}
	// b learns it is stopping from a beacon's reply and reports stopped
	// with the next.
	c.until(2, "rank 1 stopped", func() bool { return c.m.Summary() == "cephfs:1 {0=a=up:active} 2 up:standby" })
}

// Reports out of order are not taken.
func TestStatesOnlyAdvanceInOrder(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 1, 0))
	c.start("a")
	c.start("b")
	c.run(2)
	c.daemons["a"].alive = false
	c.until(6, "b replays", func() bool { return c.holder(1, 0) == "b=replay" })
	b := c.daemons["b"]
	for _, s := range []mdsmap.State{mdsmap.StateActive, mdsmap.StateRejoin, mdsmap.StateStopped, mdsmap.StateStandby} {
		if ch := Beacon(c.m, beaconOf(b, s)); ch.Changed() {
			t.Errorf("replay -> %s taken: %s", s, ch)
		}
	}
	if ch := Beacon(c.m, beaconOf(b, mdsmap.StateReconnect)); !ch.Changed() {
		t.Error("replay -> reconnect refused")
	}
}

// A rank its holder reports damaged is marked damaged and given to no
// one; the file system does not grow past it.
func TestDamagedRank(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 1, 0))
	c.start("a")
	c.start("b")
	c.run(2)
	c.apply(Beacon(c.m, beaconOf(c.daemons["a"], mdsmap.StateDamaged)))
	c.run(3)
	f := c.m.FS[1]
	if !slices.Equal(f.Damaged, []mdsmap.Rank{0}) || len(f.Up) != 0 {
		t.Fatalf("damaged %v, up %v; %s", f.Damaged, f.Up, c.m.Summary())
	}
	if !strings.Contains(c.m.Summary(), "1 damaged") {
		t.Fatalf("summary %q", c.m.Summary())
	}
}

// A new leader resets liveness: no daemon is laggy at once, however long
// ago the previous leader heard it.
func TestLeaderResetGivesFreshGrace(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 1, 0))
	c.start("a")
	c.start("b")
	c.run(2)
	c.now = c.now.Add(30 * 1e9)
	c.live.Reset(c.m, c.now)
	if l := c.live.Laggy(c.m, c.now.Add(c.grace), c.grace); len(l) != 0 {
		t.Fatalf("laggy right after a reset: %v", l)
	}
	if l := c.live.Laggy(c.m, c.now.Add(c.grace+1), c.grace); len(l) != 2 {
		t.Fatalf("laggy after the grace: %v", l)
	}
}

// The same history gives the same decisions.
func TestDeterministic(t *testing.T) {
	run := func() []string {
		c := newCluster(t, newFS("cephfs", 2, mdsmap.AllowStandbyReplay), newFS("fs2", 1, 0))
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			c.start(n)
		}
		c.daemons["e"].joinFS = "fs2"
		c.run(5)
		c.daemons["a"].alive = false
		c.run(8)
		c.start("a")
		c.run(5)
		return c.events
	}
	a, b := run(), run()
	if !slices.Equal(a, b) || len(a) == 0 {
		t.Fatalf("two runs differ:\n%v\n%v", a, b)
	}
}

// Standbys go to the file system they ask for first.
func TestJoinFSPreferred(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 1, 0), newFS("fs2", 1, 0))
	c.start("a")
	c.start("z")
	c.daemons["z"].joinFS = "fs2"
	c.run(2)
	if c.holder(2, 0) != "z=active" || c.holder(1, 0) != "a=active" {
		t.Fatalf("cephfs %s, fs2 %s", c.holder(1, 0), c.holder(2, 0))
	}
}

// down true stops the ranks, highest first, one at a time, and assigns
// none; down false brings rank 0 back.
func TestDownStopsRanks(t *testing.T) {
	c := newCluster(t, newFS("cephfs", 2, 0))
	for _, n := range []string{"a", "b", "c"} {
		c.start(n)
	}
	c.until(4, "two active ranks", func() bool { return len(c.m.FS[1].Up) == 2 && c.holder(1, 1) == "b=active" })
	ch := Begin(c.m)
	ch.Map.FS[1].Flags |= mdsmap.Down
	ch.event("down")
	ch.Assign()
	c.apply(ch)
	if c.holder(1, 1) != "b=stopping" || c.holder(1, 0) != "a=active" {
		t.Fatalf("after down: rank 0 %s, rank 1 %s", c.holder(1, 0), c.holder(1, 1))
	}
	c.until(6, "no rank in", func() bool { return len(c.m.FS[1].In) == 0 })
	if got := c.m.Summary(); got != "cephfs:0 3 up:standby" {
		t.Fatalf("down: %s", got)
	}
	c.run(3)
	if len(c.m.FS[1].In) != 0 {
		t.Fatalf("a down file system got ranks: %v", c.m.FS[1].In)
	}
	ch = Begin(c.m)
	ch.Map.FS[1].Flags &^= mdsmap.Down
	ch.event("up")
	ch.Assign()
	c.apply(ch)
	if c.holder(1, 0) != "a=creating" {
		t.Fatalf("after down false: rank 0 %s", c.holder(1, 0))
	}
}
