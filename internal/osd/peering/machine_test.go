package peering

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// The machine's tests feed it events, one at a time, and compare the
// actions it returns, written one per line as render shows them, with
// the ones expected. No goroutine, network or clock is involved: a timer
// is an action, its expiry an event.

// step is one event and the actions it must produce.
type step struct {
	ev   Event
	want []string
}

// drive feeds steps to a new machine and checks each one's actions; it
// returns the machine.
func drive(t *testing.T, steps []step) *Machine {
	t.Helper()
	m := NewMachine()
	for i, s := range steps {
		var got []string
		for _, a := range m.Step(s.ev) {
			got = append(got, render(a))
		}
		if !slices.Equal(got, s.want) {
			t.Fatalf("step %d, %s (now %s):\ngot\n\t%s\nwant\n\t%s", i, renderEvent(s.ev), m.State(),
				strings.Join(got, "\n\t"), strings.Join(s.want, "\n\t"))
		}
	}
	return m
}

func render(a Action) string {
	switch a := a.(type) {
	case LoadLocal:
		if a.NewerMap {
			return "load-local newer-map"
		}
		return "load-local"
	case ReadPast:
		return fmt.Sprintf("read-past since=%d", a.Since)
	case RefreshMap:
		return "refresh-map"
	case SendQuery:
		return fmt.Sprintf("query osd.%d", a.To)
	case RequestUpThru:
		return fmt.Sprintf("request-up-thru %d", a.Want)
	case SetTimer:
		return fmt.Sprintf("timer #%d %v", a.ID, a.After)
	case SetStep:
		return "step: " + a.What
	case GoDown:
		return fmt.Sprintf("down blocked_by=%v", a.Prior.BlockedBy)
	case RequestTemp:
		return fmt.Sprintf("pg_temp %v", a.Acting)
	case NoteRecovery:
		s := fmt.Sprintf("note-recovery copies=%d", a.Copies)
		if a.Backfill {
			s += " backfill"
		}
		return s
	case SendPull:
		if a.Want != (wire.Version{}) {
			return fmt.Sprintf("pull osd.%d %s want=%v", a.To, names(a.Objects), a.Want)
		}
		return fmt.Sprintf("pull osd.%d %s", a.To, names(a.Objects))
	case ApplyPush:
		s := fmt.Sprintf("apply-push %s from osd.%d", a.Object.Name, a.From)
		if a.Search {
			s += " search"
		}
		if a.Revert {
			s += " revert"
		}
		return s
	case ReadVersion:
		return "read-version " + a.Object.Name
	case ReportUnfound:
		return "unfound " + names(a.Objects)
	case Adopt:
		return fmt.Sprintf("adopt lu=%v entries=%d", a.Info.LastUpdate, len(a.Log))
	case ForgetLost:
		s := "forget-lost " + names(a.Objects)
		if len(a.Reverted) > 0 {
			s += " revert=" + names(a.Reverted)
		}
		return s
	case CheckCopy:
		return "check-copy " + a.Object.Name
	case ListObjects:
		return "list-objects"
	case SendActivate:
		s := fmt.Sprintf("activate osd.%d les=%d lu=%v entries=%d missing=%s", a.To, a.Info.LastEpochStarted,
			a.Info.LastUpdate, len(a.Log), names(a.Missing))
		if a.Backfill {
			s += " backfill"
		}
		if len(a.Versions) > 0 {
			s += fmt.Sprintf(" versions=%v", a.Versions)
		}
		return s
	case Finish:
		return fmt.Sprintf("finish auth=osd.%d missing=%s", a.Plan.Auth, renderMissing(a.Missing))
	case Serve:
		return fmt.Sprintf("serve asked=%v", a.Asked)
	case Failed:
		return "failed: " + a.Err.Error()
	case StartOver:
		return "start-over: " + a.Why.Error()
	}
	return fmt.Sprintf("unknown %T", a)
}

func renderEvent(ev Event) string {
	switch ev := ev.(type) {
	case Notify:
		return fmt.Sprintf("Notify{osd.%d interval %d}", ev.Member.OSD, ev.Interval)
	case Loaded:
		return fmt.Sprintf("Loaded{osd.%d replicas %v}", ev.Self.OSD, ev.Replicas)
	case MapRefreshed:
		return "MapRefreshed"
	}
	return fmt.Sprintf("%T%+v", ev, ev)
}

func names(ids []objid.ID) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.Name
	}
	return "[" + strings.Join(out, " ") + "]"
}

func renderMissing(m map[int32][]objid.ID) string {
	var parts []string
	for _, x := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d:%s", x, names(m[x])))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func upSet(ids ...int32) func(int32) bool {
	return func(x int32) bool { return slices.Contains(ids, x) }
}

// les returns mem with last_epoch_started e.
func les(mem Member, e uint64) Member {
	mem.Info.LastEpochStarted = e
	return mem
}

// The interval [5,9] of osd 0, 1 and 2 went active at 5 and took writes.
var pastOf012 = []Interval{{First: 5, Last: 9, Acting: []int32{0, 1, 2}, Primary: 0, Acted: true, MaybeWentRW: true}}

// start is the steps every test begins with: the primary, osd.0, of
// interval 10 loads its history, reads the past intervals and sends its
// first queries.
func start(self Member, replicas []int32, past []Interval, up func(int32) bool, want ...string) []step {
	return []step{
		{Start{Interval: 10}, []string{"load-local"}},
		{Loaded{Self: self, Replicas: replicas, PoolSize: 3, Up: up, UpThru: 10}, []string{fmt.Sprintf("read-past since=%d", self.Info.LastEpochStarted)}},
		{PastRead{Past: past}, want[:2]},
		{MapRefreshed{Up: up}, want[2:]},
	}
}

// Three OSDs with the same history: query both replicas, activate them,
// serve.
func TestMachineCleanPeer(t *testing.T) {
	log := history(5, 1, "a", "b", "c")
	self := les(member(0, v(0, 0), log), 5)
	steps := start(self, []int32{1, 2}, pastOf012, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	steps = append(steps, []step{
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), log), 5)}, nil},
		{Notify{Interval: 10, Member: les(member(2, v(0, 0), log), 5)}, []string{
			"note-recovery copies=0",
			// Nothing to complete: the replicas are activated at once.
			"step: activating osd [1 2]",
			"activate osd.1 les=10 lu=5'3 entries=3 missing=[]",
			"activate osd.2 les=10 lu=5'3 entries=3 missing=[]",
			"timer #2 20s"}},
		{ActivateAck{From: 1, Interval: 10}, nil},
		{ActivateAck{From: 1, Interval: 10}, nil}, // a duplicate counts once
		{TimerFired{ID: 1}, nil},                  // the query round's, stale
		{ActivateAck{From: 2, Interval: 10}, []string{"finish auth=osd.0 missing={1:[] 2:[]}"}},
		{Finished{}, []string{"serve asked=[1 2]"}},
		{TimerFired{ID: 2}, nil}, // the activation's, no longer armed
	}...)
	if m := drive(t, steps); m.State() != "serving" {
		t.Fatalf("state %s, want serving", m.State())
	}
}

// A replica that does not answer is asked again each RetryInterval, at
// its newest address; answers from elsewhere, or for another interval,
// do not count.
func TestMachineQueryTimesOut(t *testing.T) {
	log := history(5, 1, "a")
	self := les(member(0, v(0, 0), log), 5)
	steps := start(self, []int32{1, 2}, pastOf012, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	steps = append(steps, []step{
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), log), 5)}, nil},
		{Notify{Interval: 9, Member: les(member(2, v(0, 0), log), 5)}, nil},  // an older interval's
		{Notify{Interval: 10, Member: les(member(7, v(0, 0), log), 5)}, nil}, // not asked
		{TimerFired{ID: 1}, []string{"step: querying osd [1 2] (have 1 of 2)", "refresh-map"}},
		{MapRefreshed{Up: upSet(0, 1, 2)}, []string{"query osd.2", "timer #2 5s"}},
		{TimerFired{ID: 2}, []string{"step: querying osd [1 2] (have 1 of 2)", "refresh-map"}},
		{MapRefreshed{Up: upSet(0, 1, 2)}, []string{"query osd.2", "timer #3 5s"}},
		{Notify{Interval: 10, Member: les(member(2, v(0, 0), log), 5)}, []string{
			"note-recovery copies=0",
			"step: activating osd [1 2]",
			"activate osd.1 les=10 lu=5'1 entries=1 missing=[]",
			"activate osd.2 les=10 lu=5'1 entries=1 missing=[]",
			"timer #4 20s"}},
		{TimerFired{ID: 3}, nil}, // the round is over
	}...)
	drive(t, steps)
}

// An OSD peering asks goes down: it starts over at once, with the
// newest map and a new prior set.
func TestMachineQueriedOSDGoesDown(t *testing.T) {
	log := history(5, 1, "a")
	self := les(member(0, v(0, 0), log), 5)
	steps := start(self, []int32{1, 2}, pastOf012, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	steps = append(steps, []step{
		{TimerFired{ID: 1}, []string{"step: querying osd [1 2] (have 0 of 2)", "refresh-map"}},
		{MapRefreshed{Up: upSet(0, 1)}, []string{
			"start-over: osd.2 went down while peering asked it: peering: the OSDs to ask changed",
			"load-local newer-map"}},
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), log), 5)}, nil}, // between attempts
		{Loaded{Self: self, Replicas: []int32{1}, PoolSize: 3, Up: upSet(0, 1), UpThru: 10}, []string{"read-past since=5"}},
		{PastRead{Past: pastOf012}, []string{"step: querying osd [1] (have 0 of 1)", "refresh-map"}},
		{MapRefreshed{Up: upSet(0, 1)}, []string{"query osd.1", "timer #2 5s"}},
	}...)
	drive(t, steps)
}

// A past interval that may have taken writes has no OSD up, and no
// member went active after it: a write acknowledged there may exist only
// on its OSDs, so the PG stays down, blocked by them, until the interval
// ends. (The RADOS paper, section 3.4.1: a PG must learn of every
// interval that may have changed it.)
func TestMachinePriorOSDDown(t *testing.T) {
	log := history(5, 1, "a")
	self := les(member(0, v(0, 0), log), 5)
	past := append(slices.Clone(pastOf012), Interval{First: 7, Last: 9, Acting: []int32{3, 4}, Primary: 3, Acted: true, MaybeWentRW: true})
	steps := start(self, []int32{1, 2}, past, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	steps = append(steps, []step{
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), log), 5)}, nil},
		{Notify{Interval: 10, Member: les(member(2, v(0, 0), log), 5)}, []string{"down blocked_by=[3 4]"}},
		{TimerFired{ID: 1}, nil},
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), log), 5)}, nil},
		{Finished{}, nil},
	}...)
	if m := drive(t, steps); m.State() != "down" {
		t.Fatalf("state %s, want down", m.State())
	}
}

// The same past interval, but a replica went active after it: that
// activation gathered every write acknowledged before it, so the
// interval no longer matters.
func TestMachineLaterActivationCoversDownInterval(t *testing.T) {
	log := history(5, 1, "a")
	self := les(member(0, v(0, 0), log), 5)
	past := append(slices.Clone(pastOf012), Interval{First: 7, Last: 9, Acting: []int32{3, 4}, Primary: 3, Acted: true, MaybeWentRW: true})
	steps := start(self, []int32{1, 2}, past, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	steps = append(steps, []step{
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), log), 5)}, nil},
		{Notify{Interval: 10, Member: les(member(2, v(0, 0), log), 10)}, []string{
			"note-recovery copies=0",
			// osd.2 is the authority: its history is adopted.
			"adopt lu=5'1 entries=1"}},
	}...)
	drive(t, steps)
}

// A replica holds a newer log (the primary restarted and lost writes):
// the replica is the authority, and the primary completes its own copy
// from it before it activates the others with the authority's log.
// (Objects are listed in hash order.)
func TestMachineReplicaHasNewerLog(t *testing.T) {
	log := history(5, 1, "a", "b", "c")
	self := les(member(0, v(0, 0), log[:1]), 5)
	steps := start(self, []int32{1, 2}, pastOf012, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	auth := les(member(1, v(0, 0), log), 5)
	steps = append(steps, []step{
		{Notify{Interval: 10, Member: auth}, nil},
		{Notify{Interval: 10, Member: les(member(2, v(0, 0), log[:2]), 5)}, []string{
			"note-recovery copies=3",
			"step: pulling 2 objects from osd.1",
			"pull osd.1 [c b]",
			"timer #2 20s"}},
		{Push{From: 1, Interval: 10, Object: obj("c"), Exists: true, Version: v(5, 3)}, []string{"apply-push c from osd.1"}},
		{PushApplied{Object: obj("c")}, []string{"timer #3 20s"}},
		{Push{From: 1, Interval: 10, Object: obj("b"), Exists: true, Version: v(5, 2)}, []string{"apply-push b from osd.1"}},
		{PushApplied{Object: obj("b")}, []string{"adopt lu=5'3 entries=3"}},
		{Adopted{}, []string{
			"step: activating osd [1 2]",
			"activate osd.1 les=10 lu=5'3 entries=3 missing=[]",
			"activate osd.2 les=10 lu=5'3 entries=3 missing=[c]",
			"timer #4 20s"}},
		{ActivateAck{From: 2, Interval: 10}, nil},
		{ActivateAck{From: 1, Interval: 10}, []string{"finish auth=osd.1 missing={1:[] 2:[c]}"}},
	}...)
	drive(t, steps)
}

// The interval changes while peering waits for answers: the driver
// starts the machine again, and nothing of the abandoned attempt (its
// answers, its timer) counts.
func TestMachineIntervalChangeRestarts(t *testing.T) {
	log := history(5, 1, "a")
	self := les(member(0, v(0, 0), log), 5)
	steps := start(self, []int32{1, 2}, pastOf012, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	steps = append(steps, []step{
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), log), 5)}, nil},
		{Start{Interval: 12}, []string{"load-local"}},
		{Loaded{Self: self, Replicas: []int32{1}, PoolSize: 3, Up: upSet(0, 1), UpThru: 12}, []string{"read-past since=5"}},
		{PastRead{Past: pastOf012}, []string{"step: querying osd [1] (have 0 of 1)", "refresh-map"}},
		{MapRefreshed{Up: upSet(0, 1)}, []string{"query osd.1", "timer #2 5s"}},
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), log), 5)}, nil}, // the old interval's answer
		{TimerFired{ID: 1}, nil}, // the old interval's timer
		{Notify{Interval: 12, Member: les(member(1, v(0, 0), log), 5)}, []string{
			"note-recovery copies=0",
			"step: activating osd [1]",
			"activate osd.1 les=12 lu=5'1 entries=1 missing=[]",
			"timer #3 20s"}},
		{ActivateAck{From: 1, Interval: 10}, nil}, // the old interval's
		{ActivateAck{From: 1, Interval: 12}, []string{"finish auth=osd.0 missing={1:[]}"}},
	}...)
	drive(t, steps)
}

// A replica whose history ends before the authority's log begins is
// backfilled: counted as every object, and activated to take them all.
func TestMachineBackfillTarget(t *testing.T) {
	log := history(6, 4, "d", "e")
	self := les(member(0, v(6, 3), log), 5)
	self.Info.Stats.Objects = 5
	steps := start(self, []int32{1, 2}, pastOf012, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	behind := les(member(2, v(0, 0), history(5, 1, "a")), 5)
	steps = append(steps, []step{
		{Notify{Interval: 10, Member: les(member(1, v(6, 3), log), 5)}, nil},
		{Notify{Interval: 10, Member: behind}, []string{
			"note-recovery copies=5 backfill",
			"list-objects"}},
		{ObjectsListed{Objects: []objid.ID{obj("a"), obj("b"), obj("c"), obj("d"), obj("e")}}, []string{
			"step: activating osd [1 2]",
			"activate osd.1 les=10 lu=6'5 entries=2 missing=[]",
			"activate osd.2 les=10 lu=6'5 entries=2 missing=[a b c d e] backfill",
			"timer #2 20s"}},
	}...)
	drive(t, steps)
}

// A backfill compares versions, as Ceph's does: the replica is told this
// OSD's version of every object, keeps the copies it holds at that
// version and names them in its acknowledgement, and only the others
// are left for recovery to push. A name from the replica that is not
// missing changes nothing; a replica not backfilled cannot drop objects
// this way.
func TestMachineBackfillSkipsCurrentCopies(t *testing.T) {
	log := history(6, 4, "d", "e")
	self := les(member(0, v(6, 3), log), 5)
	self.Info.Stats.Objects = 5
	steps := start(self, []int32{1, 2}, pastOf012, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	behind := les(member(2, v(0, 0), history(5, 1, "a")), 5)
	lagging := les(member(1, v(6, 3), log[:1]), 5) // lacks e
	all := []objid.ID{obj("a"), obj("b"), obj("c"), obj("d"), obj("e")}
	vers := []wire.Version{v(5, 1), v(5, 2), v(5, 3), v(6, 4), v(6, 5)}
	steps = append(steps, []step{
		{Notify{Interval: 10, Member: lagging}, nil},
		{Notify{Interval: 10, Member: behind}, []string{
			"note-recovery copies=6 backfill",
			"list-objects"}},
		{ObjectsListed{Objects: all, Versions: vers}, []string{
			"step: activating osd [1 2]",
			"activate osd.1 les=10 lu=6'5 entries=2 missing=[e]",
			"activate osd.2 les=10 lu=6'5 entries=2 missing=[a b c d e] backfill versions=[5'1 5'2 5'3 6'4 6'5]",
			"timer #2 20s"}},
		{ActivateAck{From: 1, Interval: 10, Current: []objid.ID{obj("e")}}, nil}, // not backfilled: ignored
		{ActivateAck{From: 2, Interval: 10, Current: []objid.ID{obj("a"), obj("c"), obj("z")}}, []string{
			"finish auth=osd.0 missing={1:[e] 2:[b d e]}"}},
	}...)
	drive(t, steps)
}

// The primary itself must be backfilled: it asks for a temporary acting
// set led by the authority, and starts over if no map brings it.
func TestMachinePrimaryBackfillAsksForPGTemp(t *testing.T) {
	log := history(6, 4, "d", "e")
	self := les(member(0, v(0, 0), history(5, 1, "a")), 5)
	steps := start(self, []int32{1, 2}, pastOf012, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	steps = append(steps, []step{
		{Notify{Interval: 10, Member: les(member(1, v(6, 3), log), 5)}, nil},
		{Notify{Interval: 10, Member: les(member(2, v(6, 3), log), 5)}, []string{
			"step: asking for pg_temp [1 2 0] to backfill this OSD while others serve",
			"pg_temp [1 2 0]"}},
		{TempRequested{}, []string{"timer #2 20s"}},
		{TimerFired{ID: 2}, []string{
			"start-over: pg_temp [1 2 0] did not change the acting set: peering: the OSDs to ask changed",
			"load-local newer-map"}},
	}...)
	drive(t, steps)

	// The monitors cannot be reached: the attempt fails, and the next
	// starts after RetryInterval.
	steps = steps[:len(steps)-2]
	steps = append(steps, []step{
		{TempRequested{Err: errors.New("no monitor")}, []string{"failed: no monitor", "timer #2 5s"}},
		{TimerFired{ID: 2}, []string{"load-local newer-map"}},
	}...)
	drive(t, steps)
}

// TempActing puts the authority first, then the complete members (the
// replicas, then up OSDs of past intervals with a history, to the pool's
// size), then those to backfill.
func TestTempActing(t *testing.T) {
	plan := Result{Auth: 3, Backfill: []int32{0, 1}}
	members := []Member{
		{OSD: 0}, {OSD: 1}, {OSD: 2, Info: pglog.Info{LastUpdate: v(5, 1)}},
		{OSD: 3, Info: pglog.Info{LastUpdate: v(5, 2)}},
		{OSD: 4, Info: pglog.Info{LastUpdate: v(5, 2)}}, // down
		{OSD: 5}, // no history
		{OSD: 6, Info: pglog.Info{LastUpdate: v(5, 2)}},
	}
	got := TempActing(plan, members, []int32{1, 2}, 0, 3, upSet(0, 1, 2, 3, 5, 6))
	if want := []int32{3, 2, 6, 0, 1}; !slices.Equal(got, want) {
		t.Fatalf("TempActing = %v, want %v", got, want)
	}
}

// Activation fails on a replica, or goes unacknowledged: the attempt
// fails, and the next one starts from this OSD's history after
// RetryInterval.
func TestMachineActivationFails(t *testing.T) {
	log := history(5, 1, "a")
	self := les(member(0, v(0, 0), log), 5)
	steps := start(self, []int32{1, 2}, pastOf012, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	steps = append(steps, []step{
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), log), 5)}, nil},
		{Notify{Interval: 10, Member: les(member(2, v(0, 0), log), 5)}, []string{
			"note-recovery copies=0",
			"step: activating osd [1 2]",
			"activate osd.1 les=10 lu=5'1 entries=1 missing=[]",
			"activate osd.2 les=10 lu=5'1 entries=1 missing=[]",
			"timer #2 20s"}},
	}...)
	nack := append(slices.Clone(steps), []step{
		{ActivateAck{From: 2, Interval: 10, Result: -22}, []string{"failed: osd.2 could not activate: errno 22", "timer #3 5s"}},
		{ActivateAck{From: 1, Interval: 10}, nil}, // too late
		{TimerFired{ID: 2}, nil},
		{TimerFired{ID: 3}, []string{"load-local newer-map"}},
	}...)
	drive(t, nack)

	silent := append(slices.Clone(steps), []step{
		{ActivateAck{From: 1, Interval: 10}, nil},
		{TimerFired{ID: 2}, []string{
			"failed: osd [2] did not acknowledge activation: peering: no answer", "timer #3 5s"}},
	}...)
	drive(t, silent)
}

// The primary cannot complete its copy (a store write failed) or record
// the start: the attempt fails and is retried.
func TestMachineCompleteOrFinishFails(t *testing.T) {
	log := history(5, 1, "a")
	self := les(member(0, v(0, 0), log), 5)
	alone := []Interval{{First: 5, Last: 9, Acting: []int32{0}, Primary: 0, Acted: true, MaybeWentRW: true}}
	base := []step{
		{Start{Interval: 10}, []string{"load-local"}},
		{Loaded{Self: self, PoolSize: 1, Up: upSet(0), UpThru: 10}, []string{"read-past since=5"}},
		{PastRead{Err: errors.New("no monitor")}, []string{"timer #1 5s"}},
		{PastRead{Past: pastOf012}, nil}, // not asked for
		{TimerFired{ID: 1}, []string{"read-past since=5"}},
	}
	// Alone, with nobody to ask and nothing to fetch: straight to the
	// finish.
	drive(t, append(slices.Clone(base), []step{
		{PastRead{Past: alone}, []string{
			"note-recovery copies=0", "step: activating osd []", "finish auth=osd.0 missing={}"}},
		{Finished{Err: errors.New("disk full")}, []string{"failed: disk full", "timer #2 5s"}},
		{TimerFired{ID: 2}, []string{"load-local newer-map"}},
	}...))

	// Its own copy of a lacks (an interrupted recovery): with no member
	// to ask, it searches the up OSDs, and osd.1, a stray, has it; but
	// the store cannot take it.
	lacking := self
	lacking.Missing = []objid.ID{obj("a")}
	base[1].ev = Loaded{Self: lacking, PoolSize: 1, Up: upSet(0, 1), MaxOSD: 2, UpThru: 10}
	drive(t, append(slices.Clone(base), []step{
		{PastRead{Past: alone}, []string{
			"note-recovery copies=1", fmt.Sprintf("step: searching osd [1] for %v at 5'1", obj("a")),
			"pull osd.1 [a] want=5'1", "timer #2 5s"}},
		{Push{From: 1, Interval: 10, Object: obj("a"), Exists: true, Version: v(5, 1)}, []string{"apply-push a from osd.1 search"}},
		{PushApplied{Object: obj("a"), Err: errors.New("disk full")}, []string{"failed: disk full", "timer #3 5s"}},
		{TimerFired{ID: 2}, nil},
		{TimerFired{ID: 3}, []string{"load-local newer-map"}},
	}...))
}

// A member whose log is out of order makes Plan refuse it: the attempt
// fails rather than copy garbage.
func TestMachineBadLogFails(t *testing.T) {
	log := history(5, 1, "a", "b")
	self := les(member(0, v(0, 0), log), 5)
	bad := les(member(1, v(0, 0), []pglog.Entry{log[1], log[0]}), 5)
	steps := start(self, []int32{1}, pastOf012, upSet(0, 1),
		"step: querying osd [1] (have 0 of 1)", "refresh-map",
		"query osd.1", "timer #1 5s")
	steps = append(steps, step{Notify{Interval: 10, Member: bad}, []string{
		"failed: peering: osd.1 log entry 1 (5'1) not after 5'2", "timer #2 5s"}})
	drive(t, steps)
}

// The OSDs of a past interval were down when the OSDs to ask were
// chosen, and one of them came up while the replicas were queried: it is
// asked too before anything is decided, since it may hold writes nobody
// else has (the bug a PG split under chaos found: a PG went active
// without the one OSD holding its newest writes, and lost them).
func TestMachinePriorOSDUpWhileQuerying(t *testing.T) {
	log := history(5, 1, "a")
	self := les(member(0, v(0, 0), log), 5)
	past := append(slices.Clone(pastOf012), Interval{First: 7, Last: 9, Acting: []int32{3, 4}, Primary: 3, MaybeWentRW: true})
	steps := start(self, []int32{1, 2}, past, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	newer := history(5, 2, "a", "b")
	steps = append(steps, []step{
		{TimerFired{ID: 1}, []string{"step: querying osd [1 2] (have 0 of 2)", "refresh-map"}},
		{MapRefreshed{Up: upSet(0, 1, 2, 3)}, []string{"query osd.1", "query osd.2", "timer #2 5s"}},
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), log), 5)}, nil},
		{Notify{Interval: 10, Member: les(member(2, v(0, 0), log), 5)}, []string{
			"step: querying osd [1 2 3] (have 2 of 3)", "refresh-map"}},
		{MapRefreshed{Up: upSet(0, 1, 2, 3)}, []string{"query osd.3", "timer #3 5s"}},
		// osd.3 holds the newest history: the authority.
		{Notify{Interval: 10, Member: les(member(3, v(0, 0), newer), 7)}, []string{
			"note-recovery copies=6", "step: pulling 2 objects from osd.3", "pull osd.3 [a b]", "timer #4 20s"}},
	}...)
	drive(t, steps)
}

// A primary whose up_thru the map does not yet record at the interval's
// start asks the monitors for it once every OSD it probes answered (not
// before: a primary that waits in vain for an answer leaves an interval
// that never went read-write), and activates no replica before a map
// records it: until then the interval cannot have gone read-write, and
// later peering may skip it. The request is repeated each
// RetryInterval; an up_thru below the interval's start does not count.
func TestMachineWaitsForUpThru(t *testing.T) {
	log := history(5, 1, "a")
	self := les(member(0, v(0, 0), log), 5)
	up := upSet(0, 1)
	steps := []step{
		{Start{Interval: 10}, []string{"load-local"}},
		{Loaded{Self: self, Replicas: []int32{1}, PoolSize: 3, Up: up, UpThru: 5}, []string{"read-past since=5"}},
		{PastRead{Past: pastOf012}, []string{"step: querying osd [1] (have 0 of 1)", "refresh-map"}},
		{MapRefreshed{Up: up}, []string{"query osd.1", "timer #1 5s"}},
		{TimerFired{ID: 1}, []string{"step: querying osd [1] (have 0 of 1)", "refresh-map"}}, // no up_thru asked yet
		{MapRefreshed{Up: up}, []string{"query osd.1", "timer #2 5s"}},
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), log), 5)}, []string{
			"request-up-thru 10",
			"note-recovery copies=0",
			"step: waiting for the monitors to record up_thru 10 (the map has 5)",
			"timer #3 5s"}},
		{UpThruRecorded{UpThru: 9}, nil}, // an older request's
		{TimerFired{ID: 3}, []string{"request-up-thru 10", "timer #4 5s"}},
		{UpThruRecorded{UpThru: 10}, []string{
			"step: activating osd [1]",
			"activate osd.1 les=10 lu=5'1 entries=1 missing=[]",
			"timer #5 20s"}},
		{TimerFired{ID: 4}, nil}, // the wait's, stale
		{UpThruRecorded{UpThru: 11}, nil},
		{ActivateAck{From: 1, Interval: 10}, []string{"finish auth=osd.0 missing={1:[]}"}},
	}
	if m := drive(t, steps); m.State() != "finishing" {
		t.Fatalf("state %s, want finishing", m.State())
	}
}

// The map recording up_thru that arrives while this OSD's copy is
// completed is remembered: activation does not wait for it again.
func TestMachineUpThruRecordedWhilePulling(t *testing.T) {
	self := les(member(0, v(0, 0), fullLog[:1]), 5)
	up := upSet(0, 1)
	steps := []step{
		{Start{Interval: 10}, []string{"load-local"}},
		{Loaded{Self: self, Replicas: []int32{1}, PoolSize: 3, Up: up}, []string{"read-past since=5"}},
		{PastRead{Past: pastOf012}, []string{"step: querying osd [1] (have 0 of 1)", "refresh-map"}},
		{MapRefreshed{Up: up}, []string{"query osd.1", "timer #1 5s"}},
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), fullLog), 5)}, []string{
			"request-up-thru 10",
			"note-recovery copies=2", "step: pulling 2 objects from osd.1", "pull osd.1 [c b]", "timer #2 20s"}},
		{UpThruRecorded{UpThru: 10}, nil},
		{push(1, "c", v(5, 3)), []string{"apply-push c from osd.1"}},
		{PushApplied{Object: obj("c")}, []string{"timer #3 20s"}},
		{push(1, "b", v(5, 2)), []string{"apply-push b from osd.1"}},
		{PushApplied{Object: obj("b")}, []string{
			"adopt lu=5'3 entries=3",
		}},
		{Adopted{}, []string{
			"step: activating osd [1]",
			"activate osd.1 les=10 lu=5'3 entries=3 missing=[]",
			"timer #4 20s"}},
	}
	drive(t, steps)
}

// A past interval in ack primary mode whose primary is down: its other
// member is up and answers, but cannot vouch for the writes the primary
// acknowledged alone, so the PG stays down, blocked by the primary.
func TestMachineAckPrimaryIntervalWaitsForItsPrimary(t *testing.T) {
	log := history(5, 1, "a")
	self := les(member(0, v(0, 0), log), 5)
	past := append(slices.Clone(pastOf012), Interval{First: 7, Last: 9, Acting: []int32{3, 1}, Primary: 3, Acted: true,
		MaybeWentRW: true, AckPrimary: true})
	steps := start(self, []int32{1, 2}, past, upSet(0, 1, 2),
		"step: querying osd [1 2] (have 0 of 2)", "refresh-map",
		"query osd.1", "query osd.2", "timer #1 5s")
	steps = append(steps, []step{
		{Notify{Interval: 10, Member: les(member(1, v(0, 0), log), 5)}, nil},
		{Notify{Interval: 10, Member: les(member(2, v(0, 0), log), 5)}, []string{"down blocked_by=[3]"}},
	}...)
	if m := drive(t, steps); m.State() != "down" {
		t.Fatalf("state %s, want down", m.State())
	}
}
