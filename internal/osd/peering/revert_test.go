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

// The tests of mark_unfound_lost revert (complete.go, "reverting"):
// each unfound object goes back to the newest copy older than the
// version lost that an OSD holds (this OSD's own, or one the search
// saw), and only an object with none is deleted.

const revertStep = "step: reverting 1 unfound objects to the newest older copy an OSD holds"

// revertTail is what follows once b's older copy is here: adopt the
// authority's log, record the revert, activate the replicas with b
// among what they lack (recovery pushes them the reverted copy), the
// first activation's timer numbered timer.
func revertTail(timer int) []step {
	reverted := append(slices.Clone(fullLog), pglog.Entry{Version: v(10, 4), Prior: v(5, 2), Kind: pglog.Modify, Object: obj("b")})
	info := pglog.Info{LastUpdate: v(10, 4), LastComplete: v(10, 4), LastEpochStarted: 5}
	return []step{
		{Adopted{}, []string{"forget-lost [] revert=[b]"}},
		{LostForgotten{Info: info, Log: reverted}, activation(timer, "10'4", 4, "[b]")},
		{ActivateAck{From: 1, Interval: 10}, nil},
		{ActivateAck{From: 2, Interval: 10}, []string{"finish auth=osd.1 missing={1:[b] 2:[b]}"}},
	}
}

// b is unfound at 5'2, and the search saw an older copy on osd.5, a
// third OSD outside the PG (4'9). An operator marks b lost with revert
// while peering waits: this OSD has no copy of its own, so it pulls
// osd.5's again, at that version, applies it, adopts the log and
// records the revert.
func TestMachineRevertToOlderCopy(t *testing.T) {
	steps := append(lagging(false), unfoundB()...)
	steps = append(steps, []step{
		{MarkedLost{Revert: true}, []string{revertStep, "check-copy b"}},
		{TimerFired{ID: 7}, nil},             // the unfound wait's, no longer armed
		{CopyChecked{Object: obj("c")}, nil}, // not asked
		{CopyChecked{Object: obj("b")}, []string{"pull osd.5 [b] want=4'9", "timer #8 5s"}},
		{push(4, "b", v(4, 9)), nil}, // not asked
		{push(5, "b", v(4, 9)), []string{"apply-push b from osd.5 revert"}},
		{PushApplied{Object: obj("b")}, []string{"adopt lu=5'3 entries=3"}},
		{TimerFired{ID: 8}, nil},
	}...)
	drive(t, append(steps, revertTail(9)...))

	// This OSD's own copy is older than the one lost but newer than
	// osd.5's (or as new): it stays, and nothing is pulled.
	at := len(lagging(false)) + len(unfoundB()) + 3
	for _, own := range []wire.Version{v(5, 1), v(4, 9)} {
		own := append(slices.Clone(steps[:at]), step{CopyChecked{Object: obj("b"), Version: own}, []string{"adopt lu=5'3 entries=3"}})
		drive(t, append(own, revertTail(8)...))
	}
	// Its own copy is older than osd.5's, or as new as the one lost
	// (the search found it unreadable then): osd.5's is pulled.
	for _, own := range []wire.Version{v(4, 1), v(5, 2)} {
		drive(t, append(slices.Clone(steps[:at]), step{CopyChecked{Object: obj("b"), Version: own},
			[]string{"pull osd.5 [b] want=4'9", "timer #8 5s"}}))
	}

	// osd.5 no longer holds that copy (a newer, none, a refusal, or no
	// answer): the attempt fails, and the next searches again.
	at++
	for _, end := range []step{
		{push(5, "b", v(5, 1)), []string{fmt.Sprintf("failed: osd.5 no longer holds %v at 4'9 to revert to", obj("b")), "timer #9 5s"}},
		{Push{From: 5, Interval: 10, Object: obj("b")}, []string{fmt.Sprintf("failed: osd.5 no longer holds %v at 4'9 to revert to", obj("b")), "timer #9 5s"}},
		{refused(5, "b", 5), []string{fmt.Sprintf("failed: osd.5 no longer supplies %v at 4'9 to revert to (errno 5)", obj("b")), "timer #9 5s"}},
		{TimerFired{ID: 8}, []string{fmt.Sprintf("failed: osd.5 did not send %v at 4'9 to revert to: peering: no answer", obj("b")), "timer #9 5s"}},
	} {
		drive(t, append(slices.Clone(steps[:at]), end, step{TimerFired{ID: 9}, []string{"load-local newer-map"}}))
	}

	// The store cannot take the older copy: the attempt fails.
	drive(t, append(slices.Clone(steps[:at+2]), step{PushApplied{Object: obj("b"), Err: errors.New("disk full")},
		[]string{"failed: disk full", "timer #9 5s"}}))
}

// Nobody holds any copy of b, neither an OSD the search asked nor this
// one: revert deletes it, as delete does.
func TestMachineRevertWithoutOlderCopy(t *testing.T) {
	steps := append(lagging(false), unfoundB()...)
	last := &steps[len(steps)-1]
	last.ev = Push{From: 5, Interval: 10, Object: obj("b")} // osd.5 has none either
	lost := append(slices.Clone(fullLog), pglog.Entry{Version: v(10, 4), Prior: v(5, 3), Kind: pglog.Delete, Object: obj("b")})
	info := pglog.Info{LastUpdate: v(10, 4), LastComplete: v(10, 4), LastEpochStarted: 5}
	steps = append(steps, []step{
		{MarkedLost{Revert: true}, []string{revertStep, "check-copy b"}},
		{CopyChecked{Object: obj("b")}, []string{"adopt lu=5'3 entries=3"}},
		{Adopted{}, []string{"forget-lost [b]"}},
		{LostForgotten{Info: info, Log: lost}, activation(8, "10'4", 4, "[b]")},
	}...)
	drive(t, steps)

	// Its own copy, older than the one lost, is all there is: it stays.
	at := len(steps) - 3
	drive(t, append(slices.Clone(steps[:at]), step{CopyChecked{Object: obj("b"), Version: v(3, 3)}, []string{"adopt lu=5'3 entries=3"}},
		step{Adopted{}, []string{"forget-lost [] revert=[b]"}}))
}

// Marked with revert before peering found b unfound (earlier in the
// attempt, or before this interval: Loaded says so), peering reverts
// at once; a later mark replaces the mode, and delete after revert
// deletes.
func TestMachineRevertMarkedEarly(t *testing.T) {
	early := lagging(false)
	loaded := &early[1]
	ev := loaded.ev.(Loaded)
	ev.LoseUnfound, ev.Revert = true, true
	loaded.ev = ev
	for _, early := range [][]step{
		append(lagging(false), step{MarkedLost{Revert: true}, nil}),
		early,
	} {
		steps := append(early, unfoundB()...)
		last := &steps[len(steps)-1]
		last.want = []string{"unfound [b]", revertStep, "check-copy b"}
		steps = append(steps, []step{
			{CopyChecked{Object: obj("b")}, []string{"pull osd.5 [b] want=4'9", "timer #7 5s"}},
			{push(5, "b", v(4, 9)), []string{"apply-push b from osd.5 revert"}},
			{PushApplied{Object: obj("b")}, []string{"adopt lu=5'3 entries=3"}},
		}...)
		drive(t, append(steps, revertTail(8)...))
	}

	steps := append(lagging(false), step{MarkedLost{Revert: true}, nil}, step{MarkedLost{}, nil})
	steps = append(steps, unfoundB()...)
	last := &steps[len(steps)-1]
	last.want = []string{"unfound [b]", "adopt lu=5'3 entries=3"}
	drive(t, append(steps, step{Adopted{}, []string{"forget-lost [b]"}}))
}

// An unfound object whose newest write deleted it (this OSD, the
// authority, has yet to apply the removal, and nobody holds the
// object's absence at that version) is deleted by revert too: the
// older copies the members hold would bring back what a client
// deleted.
func TestMachineRevertKeepsADeletionDeleted(t *testing.T) {
	log := append(slices.Clone(fullLog), pglog.Entry{Version: v(5, 4), Kind: pglog.Delete, Object: obj("b"),
		Req: wire.ReqID{Client: "client.a", Tid: 4}})
	self := les(member(0, v(0, 0), log), 5)
	self.Missing = []objid.ID{obj("b")}
	up := upSet(0, 1, 2, 3)
	steps := []step{
		{Start{Interval: 10}, []string{"load-local"}},
		{Loaded{Self: self, Replicas: []int32{1, 2}, PoolSize: 3, Up: up, MaxOSD: 4, LoseUnfound: true, Revert: true, UpThru: 10},
			[]string{"read-past since=5"}},
		{PastRead{Past: pastOf012}, []string{"step: querying osd [1 2] (have 0 of 2)", "refresh-map"}},
		{MapRefreshed{Up: up, MaxOSD: 4}, []string{"query osd.1", "query osd.2", "timer #1 5s"}},
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), fullLog), 5)}, nil},
		// The members lack b too (they have yet to delete it): the
		// search asks them, and each sends the copy it still holds.
		{Notify{Interval: 10, Member: les(member(2, v(0, 0), fullLog), 5)}, []string{
			"note-recovery copies=3",
			fmt.Sprintf("step: searching osd [1 2 3] for %v at 5'4", obj("b")), "pull osd.1 [b] want=5'4", "timer #2 5s"}},
		{push(1, "b", v(5, 2)), []string{"pull osd.2 [b] want=5'4", "timer #3 5s"}},
		{push(2, "b", v(5, 2)), []string{"pull osd.3 [b] want=5'4", "timer #4 5s"}},
		{refused(3, "b", 2), []string{"unfound [b]", "forget-lost [b]"}},
	}
	drive(t, steps)
}
