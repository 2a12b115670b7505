package peering

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// The tests of the primary completing its own copy (complete.go): the
// pulls from the authority and the members, the search of the other up
// OSDs, unfound objects and mark_unfound_lost.

// fullLog is the history osd.1 and osd.2 hold; osd.0 lost b and c.
var fullLog = history(5, 1, "a", "b", "c")

// lagging is peering up to the pull of what osd.0, the primary of
// interval 10, lacks (c and b, in hash order) from osd.1, the authority;
// osd.2 holds them too, and osd.3 to osd.5 are up outside the PG.
func lagging(loseUnfound bool) []step {
	self := les(member(0, v(0, 0), fullLog[:1]), 5)
	up := upSet(0, 1, 2, 3, 4, 5)
	return []step{
		{Start{Interval: 10}, []string{"load-local"}},
		{Loaded{Self: self, Replicas: []int32{1, 2}, PoolSize: 3, Up: up, MaxOSD: 6, LoseUnfound: loseUnfound, UpThru: 10}, []string{"read-past since=5"}},
		{PastRead{Past: pastOf012}, []string{"step: querying osd [1 2] (have 0 of 2)", "refresh-map"}},
		{MapRefreshed{Up: up, MaxOSD: 6}, []string{"query osd.1", "query osd.2", "timer #1 5s"}},
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), fullLog), 5)}, nil},
		{Notify{Interval: 10, Member: les(member(2, v(0, 0), fullLog), 5)}, []string{
			"note-recovery copies=2",
			"step: pulling 2 objects from osd.1",
			"pull osd.1 [c b]",
			"timer #2 20s"}},
	}
}

// push is OSD from's push of object name at version ver, in interval 10.
func push(from int32, name string, ver wire.Version) Push {
	return Push{From: from, Interval: 10, Object: obj(name), Exists: true, Version: ver, Body: name}
}

func refused(from int32, name string, errno int32) PullRefused {
	return PullRefused{From: from, Interval: 10, Object: obj(name), Errno: errno}
}

// activation is what the machine does once its copy is complete, its
// timer numbered timer: activate both replicas, which lack missing.
func activation(timer int, lu string, entries int, missing string) []string {
	return []string{
		"step: activating osd [1 2]",
		fmt.Sprintf("activate osd.1 les=10 lu=%s entries=%d missing=%s", lu, entries, missing),
		fmt.Sprintf("activate osd.2 les=10 lu=%s entries=%d missing=%s", lu, entries, missing),
		fmt.Sprintf("timer #%d 20s", timer),
	}
}

// The authority pushes what the primary lacks, in any order; each push
// applied restarts the silence timer; pushes from an OSD not asked, for
// another interval or already applied do not count. Then the primary
// adopts the authority's log and activates the replicas.
func TestMachinePullSucceeds(t *testing.T) {
	steps := append(lagging(false), []step{
		{push(2, "b", v(5, 2)), nil}, // not asked
		{Push{From: 1, Interval: 9, Object: obj("c"), Exists: true, Version: v(5, 3)}, nil}, // another interval's
		{push(1, "c", v(5, 3)), []string{"apply-push c from osd.1"}},
		{push(1, "c", v(5, 3)), nil}, // a duplicate, while the first is applied
		{PushApplied{Object: obj("c")}, []string{"timer #3 20s"}},
		{PushApplied{Object: obj("c")}, nil},
		{TimerFired{ID: 2}, nil},  // restarted
		{refused(1, "a", 5), nil}, // not asked
		{push(1, "b", v(5, 2)), []string{"apply-push b from osd.1"}},
		{PushApplied{Object: obj("b")}, []string{"adopt lu=5'3 entries=3"}},
		{TimerFired{ID: 3}, nil},
		{Adopted{}, activation(4, "5'3", 3, "[]")},
		{ActivateAck{From: 1, Interval: 10}, nil},
		{ActivateAck{From: 2, Interval: 10}, []string{"finish auth=osd.1 missing={1:[] 2:[]}"}},
	}...)
	drive(t, steps)

	// The store cannot take a push, or the log: the attempt fails.
	at := len(lagging(false)) + 3
	drive(t, append(slices.Clone(steps[:at]), []step{
		{PushApplied{Object: obj("c"), Err: errors.New("disk full")}, []string{"failed: disk full", "timer #3 5s"}},
		{PushApplied{Object: obj("b")}, nil},
	}...))
	at = len(lagging(false)) + 11
	drive(t, append(slices.Clone(steps[:at]), []step{
		{Adopted{Err: errors.New("disk full")}, []string{"failed: disk full", "timer #4 5s"}},
	}...))
}

// The authority cannot read b (its copy rotted): the primary pulls b
// alone from osd.2, the other member whose copy is current.
func TestMachinePullRefused(t *testing.T) {
	steps := append(lagging(false), []step{
		{refused(1, "b", 5), nil},
		{push(1, "c", v(5, 3)), []string{"apply-push c from osd.1"}},
		{PushApplied{Object: obj("c")}, []string{
			"step: pulling 1 objects from osd.2",
			"pull osd.2 [b]",
			"timer #3 20s"}},
		{refused(1, "b", 5), nil},    // from the last pull
		{refused(2, "c", 2), nil},    // not asked of osd.2
		{push(1, "b", v(5, 2)), nil}, // not osd.1's to send now
		{push(2, "b", v(5, 2)), []string{"apply-push b from osd.2"}},
		{PushApplied{Object: obj("b")}, []string{"adopt lu=5'3 entries=3"}},
		{Adopted{}, activation(4, "5'3", 3, "[]")},
	}...)
	drive(t, steps)
}

// The authority goes silent for AnswerWait after a push: the attempt
// fails, and the next, after RetryInterval, starts over from this OSD's
// history and pulls again. A push that comes late counts for nothing.
func TestMachinePullSilence(t *testing.T) {
	steps := append(lagging(false), []step{
		{push(1, "c", v(5, 3)), []string{"apply-push c from osd.1"}},
		{PushApplied{Object: obj("c")}, []string{"timer #3 20s"}},
		{TimerFired{ID: 3}, []string{"failed: osd.1 sent 1 of 2 objects: peering: no answer", "timer #4 5s"}},
		{push(1, "b", v(5, 2)), nil},
		{PushApplied{Object: obj("b")}, nil},
		{TimerFired{ID: 4}, []string{"load-local newer-map"}},
	}...)
	// The next attempt is the first one again, with newer timers.
	again := lagging(false)[1:]
	again[2].want = []string{"query osd.1", "query osd.2", "timer #5 5s"}
	again[4].want = slices.Clone(again[4].want)
	again[4].want[3] = "timer #6 20s"
	steps = append(steps, again...)
	steps = append(steps, step{push(1, "b", v(5, 2)), []string{"apply-push b from osd.1"}})
	drive(t, steps)
}

// Neither member can supply b: the primary asks the other up OSDs in
// turn for the version the authoritative log gives it (5'2). osd.3 has
// an older one, osd.4 does not answer within RetryInterval, osd.5 has
// it.
func TestMachineSearchFindsVersion(t *testing.T) {
	search := fmt.Sprintf("step: searching osd [3 4 5] for %v at 5'2", obj("b"))
	steps := append(lagging(false), []step{
		{refused(1, "b", 5), nil},
		{push(1, "c", v(5, 3)), []string{"apply-push c from osd.1"}},
		{PushApplied{Object: obj("c")}, []string{"step: pulling 1 objects from osd.2", "pull osd.2 [b]", "timer #3 20s"}},
		{refused(2, "b", 2), []string{search, "pull osd.3 [b] want=5'2", "timer #4 5s"}},
		{push(3, "b", v(5, 1)), []string{"pull osd.4 [b] want=5'2", "timer #5 5s"}},
		{TimerFired{ID: 4}, nil},
		{TimerFired{ID: 5}, []string{"pull osd.5 [b] want=5'2", "timer #6 5s"}},
		{push(4, "b", v(5, 2)), nil}, // too late
		{push(5, "b", v(5, 2)), []string{"apply-push b from osd.5 search"}},
		{PushApplied{Object: obj("b")}, []string{"adopt lu=5'3 entries=3"}},
		{TimerFired{ID: 6}, nil},
		{Adopted{}, activation(7, "5'3", 3, "[]")},
	}...)
	drive(t, steps)
}

// Nobody has b at 5'2: it is unfound. The primary reports it and waits
// RetryInterval for an operator to mark it lost; then it starts over,
// in case an OSD holding it returned.
func TestMachineUnfound(t *testing.T) {
	steps := append(lagging(false), unfoundB()...)
	steps = append(steps, []step{
		{push(5, "b", v(5, 2)), nil},
		{TimerFired{ID: 7}, []string{
			fmt.Sprintf("start-over: 1 objects, first %v: peering: object unfound", obj("b")),
			"load-local newer-map"}},
	}...)
	drive(t, steps)
}

// unfoundB follows lagging up to b unfound: both members refuse it, and
// of the other OSDs one refuses, one has no copy, one an older version.
func unfoundB() []step {
	return []step{
		{refused(1, "b", 5), nil},
		{push(1, "c", v(5, 3)), []string{"apply-push c from osd.1"}},
		{PushApplied{Object: obj("c")}, []string{"step: pulling 1 objects from osd.2", "pull osd.2 [b]", "timer #3 20s"}},
		{refused(2, "b", 2), []string{
			fmt.Sprintf("step: searching osd [3 4 5] for %v at 5'2", obj("b")), "pull osd.3 [b] want=5'2", "timer #4 5s"}},
		{refused(3, "b", 2), []string{"pull osd.4 [b] want=5'2", "timer #5 5s"}},
		{Push{From: 4, Interval: 10, Object: obj("b")}, []string{"pull osd.5 [b] want=5'2", "timer #6 5s"}},
		{push(5, "b", v(4, 9)), []string{
			"unfound [b]",
			"step: 1 objects unfound: waiting for an OSD that holds them, or for mark_unfound_lost",
			"timer #7 5s"}},
	}
}

// An object the authoritative log no longer names (a write older than
// its tail, left missing by an interrupted recovery) is searched for at
// the version of this OSD's own copy; with no copy here, nobody can
// vouch for one, and it is unfound at once.
func TestMachineSearchReadsVersion(t *testing.T) {
	z := objid.Object(1, "", "z")
	self := les(member(0, v(0, 0), fullLog), 5)
	self.Missing = []objid.ID{z}
	up := upSet(0, 1, 2, 3)
	steps := []step{
		{Start{Interval: 10}, []string{"load-local"}},
		{Loaded{Self: self, Replicas: []int32{1, 2}, PoolSize: 3, Up: up, MaxOSD: 4, UpThru: 10}, []string{"read-past since=5"}},
		{PastRead{Past: pastOf012}, []string{"step: querying osd [1 2] (have 0 of 2)", "refresh-map"}},
		{MapRefreshed{Up: up, MaxOSD: 4}, []string{"query osd.1", "query osd.2", "timer #1 5s"}},
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), fullLog), 5)}, nil},
		// This OSD is the authority: z is pulled from the members, one
		// at a time.
		{Notify{Interval: 10, Member: les(member(2, v(0, 0), fullLog), 5)}, []string{
			"note-recovery copies=1", "step: pulling 1 objects from osd.1", "pull osd.1 [z]", "timer #2 20s"}},
		{refused(1, "z", 2), []string{"step: pulling 1 objects from osd.2", "pull osd.2 [z]", "timer #3 20s"}},
		{refused(2, "z", 2), []string{"read-version z"}},
	}
	drive(t, append(slices.Clone(steps), []step{
		{VersionRead{Object: obj("a"), Version: v(5, 1)}, nil}, // not asked
		{VersionRead{Object: z, Version: v(4, 7)}, []string{
			fmt.Sprintf("step: searching osd [3] for %v at 4'7", z), "pull osd.3 [z] want=4'7", "timer #4 5s"}},
		{Push{From: 3, Interval: 10, Object: z, Exists: true, Version: v(4, 7)}, []string{"apply-push z from osd.3 search"}},
		{PushApplied{Object: z}, activation(5, "5'3", 3, "[]")},
	}...))
	drive(t, append(slices.Clone(steps), []step{
		{VersionRead{Object: z}, []string{
			"unfound [z]",
			"step: 1 objects unfound: waiting for an OSD that holds them, or for mark_unfound_lost",
			"timer #4 5s"}},
	}...))
}

// An operator marks b lost while peering waits for it: the primary
// adopts the log, records b's removal, and activates the replicas with
// that history, b among what they lack (to delete their copies).
func TestMachineMarkedLost(t *testing.T) {
	lost := append(slices.Clone(fullLog), pglog.Entry{Version: v(10, 4), Prior: v(5, 3), Kind: pglog.Delete, Object: obj("b")})
	info := pglog.Info{LastUpdate: v(10, 4), LastComplete: v(10, 4), LastEpochStarted: 5}
	tail := []step{
		{Adopted{}, []string{"forget-lost [b]"}},
		{LostForgotten{Info: info, Log: lost}, activation(8, "10'4", 4, "[b]")},
		{ActivateAck{From: 1, Interval: 10}, nil},
		{ActivateAck{From: 2, Interval: 10}, []string{"finish auth=osd.1 missing={1:[b] 2:[b]}"}},
	}
	steps := append(lagging(false), unfoundB()...)
	steps = append(steps, step{MarkedLost{}, []string{"adopt lu=5'3 entries=3"}}, step{TimerFired{ID: 7}, nil})
	drive(t, append(steps, tail...))

	// Marked before peering found b unfound (in an earlier attempt, or
	// before this interval: Loaded says so), it goes on at once.
	for _, early := range [][]step{
		append(lagging(false), step{MarkedLost{}, nil}),
		lagging(true),
	} {
		steps := append(early, unfoundB()...)
		last := &steps[len(steps)-1]
		last.want = []string{"unfound [b]", "adopt lu=5'3 entries=3"}
		tail := slices.Clone(tail)
		tail[1].want = activation(7, "10'4", 4, "[b]")
		drive(t, append(steps, tail...))
	}

	// Forgetting fails (the store): the attempt fails.
	steps = append(steps, tail[0], step{LostForgotten{Err: errors.New("disk full")}, []string{"failed: disk full", "timer #8 5s"}})
	drive(t, steps)
}

// The interval ends in the middle of a pull: the driver starts the
// machine again for the new one, and nothing of the old pull counts:
// not its pushes, refusals or applied pushes, nor its timer.
func TestMachineIntervalEndsMidPull(t *testing.T) {
	steps := append(lagging(false), []step{
		{push(1, "c", v(5, 3)), []string{"apply-push c from osd.1"}},
		{Start{Interval: 12}, []string{"load-local"}},
		{PushApplied{Object: obj("c")}, nil},
		{push(1, "b", v(5, 2)), nil},
		{refused(1, "b", 5), nil},
		{TimerFired{ID: 2}, nil},
		{Loaded{Self: les(member(0, v(0, 0), fullLog[:1]), 5), Replicas: []int32{1}, PoolSize: 3, Up: upSet(0, 1), MaxOSD: 2, UpThru: 12},
			[]string{"read-past since=5"}},
		{PastRead{Past: pastOf012}, []string{"step: querying osd [1] (have 0 of 1)", "refresh-map"}},
		{MapRefreshed{Up: upSet(0, 1), MaxOSD: 2}, []string{"query osd.1", "timer #3 5s"}},
		{Notify{Interval: 12, Member: les(member(1, v(0, 0), fullLog), 5)}, []string{
			"note-recovery copies=2", "step: pulling 2 objects from osd.1", "pull osd.1 [c b]", "timer #4 20s"}},
		{push(1, "c", v(5, 3)), nil}, // the old interval's, late
		{Push{From: 1, Interval: 12, Object: obj("c"), Exists: true, Version: v(5, 3)}, []string{"apply-push c from osd.1"}},
	}...)
	drive(t, steps)
}
