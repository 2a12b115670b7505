package peering

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// The protocol of one interval's peering on its primary, as a state
// machine: the OSD feeds it events (Step) and carries out the actions it
// returns, in order; an action that asks for something (LoadLocal,
// ReadPast, RefreshMap, RequestTemp, ApplyPush, ReadVersion, CheckCopy,
// Adopt, ForgetLost, ListObjects, Finish) is answered by the event its comment
// names, which the driver feeds before any other. The machine does no
// I/O, keeps no clock and starts no goroutine: a timer is an action
// (SetTimer) and its expiry an event (TimerFired).
//
//	Start -> LoadLocal -> Loaded -> ReadPast -> PastRead
//	      -> querying: (SetStep, RefreshMap -> MapRefreshed, SendQuery..., SetTimer)
//	         until every OSD to probe has answered (Notify); a round times
//	         out after RetryInterval and is sent again
//	      -> a past interval with no OSD up: GoDown (until the interval ends)
//	      -> this OSD needs a backfill: RequestTemp -> TempRequested, then
//	         wait AnswerWait for the map that ends the interval
//	      -> RequestUpThru, unless the map records this OSD's up_thru
//	         at or after the interval's start already
//	      -> NoteRecovery, then complete this OSD's copy (complete.go):
//	         pulling: SendPull to the authority of what this OSD lacks;
//	           Push -> ApplyPush -> PushApplied, PullRefused; AnswerWait
//	           of silence (reset by each push applied) fails the attempt
//	         pulling again, one object at a time, from each other member
//	           whose copy is current, for what the authority refused
//	         searching: SendPull to each other up OSD in turn for the
//	           object at its authoritative version (ReadVersion ->
//	           VersionRead when the log does not give it), RetryInterval
//	           each
//	         unfound: ReportUnfound; wait RetryInterval for MarkedLost,
//	           then start over
//	         reverting (MarkedLost with Revert): CheckCopy ->
//	           CopyChecked, and SendPull of the newest older copy ->
//	           Push -> ApplyPush -> PushApplied, one object at a time
//	         adopting: Adopt -> Adopted, ForgetLost -> LostForgotten,
//	           ListObjects -> ObjectsListed (each only if needed)
//	      -> waiting for up_thru: until UpThruRecorded reaches the
//	         interval's start (RequestUpThru again each RetryInterval)
//	      -> activating: SendActivate..., SetTimer, until every replica
//	         acknowledged (ActivateAck)
//	      -> Finish -> Finished -> Serve
//
// A failed attempt (Failed) starts over after RetryInterval with the
// newest map; one whose OSDs to ask changed, or that waited in vain for
// unfound objects (StartOver), starts over at once. The end of the
// interval is not an event: the driver drops the machine and starts a
// new one (a Start resets a machine, too). Events that the current state
// does not wait for (a late push, another interval's answer, a stale
// timer) are ignored.

// RetryInterval is how often an unanswered query is sent again, and how
// long a failed attempt waits before it starts over.
const RetryInterval = 5 * time.Second

// AnswerWait bounds the silence while peering waits for members'
// acknowledgements, or for the map a pg_temp request should bring: a
// member that restarted outside the acting set, or a lost message, must
// not stall the PG; peering then starts over with the newest map (pushes
// and activation are idempotent).
const AnswerWait = 20 * time.Second

// ErrPriorChanged means an OSD peering asked went down, or a pg_temp
// request did not change the acting set: peering starts over at once.
var ErrPriorChanged = errors.New("peering: the OSDs to ask changed")

// ErrNoAnswer means a member did not answer in time.
var ErrNoAnswer = errors.New("peering: no answer")

// TimerID names one SetTimer; a TimerFired for any but the newest is
// stale and ignored.
type TimerID uint64

// Event is something the machine learns.
type Event interface{ isEvent() }

// Start begins the peering of the interval that started at epoch
// Interval.
type Start struct{ Interval uint64 }

// Loaded answers LoadLocal: this OSD's own report, the other acting
// OSDs, the pool's size, and which OSDs are up in the driver's map.
type Loaded struct {
	Self     Member
	Replicas []int32
	PoolSize int
	Up       func(int32) bool
	// Lost reports whether an OSD was declared lost after an epoch
	// (PriorSet; nil: none was).
	Lost func(id int32, first uint64) bool
	// MaxOSD bounds the OSD ids of the map (a search for an object
	// asks every up OSD below it).
	MaxOSD int32
	// LoseUnfound says an operator marked the PG's unfound objects lost,
	// and Revert that they go back to older copies (see MarkedLost).
	LoseUnfound bool
	Revert      bool
	// UpThru is this OSD's up_thru in the driver's map.
	UpThru uint64
}

// PastRead answers ReadPast: the PG's past intervals, or why they could
// not be read (tried again after RetryInterval).
type PastRead struct {
	Past []Interval
	Err  error
}

// MapRefreshed answers RefreshMap: which OSDs are up in the driver's
// newest map, and the bound of its OSD ids.
type MapRefreshed struct {
	Up     func(int32) bool
	Lost   func(id int32, first uint64) bool
	MaxOSD int32
}

// Notify is an OSD's answer to a query (PGNotify): its info, log and
// missing set, for the interval that started at Interval.
type Notify struct {
	Interval uint64
	Member   Member
}

// ActivateAck is a replica's acknowledgement of activation (a PGAck
// with Activate set); Result is 0 or a negative errno. Current, from a
// replica being backfilled, lists the objects it holds at this OSD's
// version already: they are not pushed.
type ActivateAck struct {
	From     int32
	Interval uint64
	Result   int32
	Current  []objid.ID
}

// TempRequested answers RequestTemp.
type TempRequested struct{ Err error }

// Finished answers Finish.
type Finished struct{ Err error }

// TimerFired says the timer of SetTimer ID expired.
type TimerFired struct{ ID TimerID }

// UpThruRecorded says the driver's newest map records this OSD's
// up_thru as UpThru (fed after RequestUpThru, once a map reaches the
// epoch asked for).
type UpThruRecorded struct{ UpThru uint64 }

func (Start) isEvent()          {}
func (Loaded) isEvent()         {}
func (PastRead) isEvent()       {}
func (MapRefreshed) isEvent()   {}
func (Notify) isEvent()         {}
func (ActivateAck) isEvent()    {}
func (TempRequested) isEvent()  {}
func (Finished) isEvent()       {}
func (TimerFired) isEvent()     {}
func (UpThruRecorded) isEvent() {}

// Action is something the driver must do.
type Action interface{ isAction() }

// LoadLocal asks for this OSD's own info, log and missing set, its
// replicas and pool size (answer: Loaded). With NewerMap the driver
// first moves to its newest map, if newer than the one it uses.
type LoadLocal struct{ NewerMap bool }

// ReadPast asks for the PG's past intervals since epoch Since (answer:
// PastRead).
type ReadPast struct{ Since uint64 }

// RefreshMap asks the driver to move to its newest map, if newer, and
// say who is up in it (answer: MapRefreshed). Queries and activations go
// to the OSDs' addresses in the driver's map.
type RefreshMap struct{}

// RequestUpThru asks the monitors to record this OSD's up_thru as at
// least Want, the interval's start, as Ceph's OSD does with MOSDAlive:
// an interval whose primary's up_thru never reached its start never went
// read-write, and later peering skips it (BuildIntervals). The driver
// answers UpThruRecorded once its map records it; the machine does not
// activate before.
type RequestUpThru struct{ Want uint64 }

// SendQuery asks OSD To for its info, log and missing set (PGQuery).
type SendQuery struct{ To int32 }

// SetTimer arms the timer ID to fire After from now, replacing any
// armed before.
type SetTimer struct {
	ID    TimerID
	After time.Duration
}

// SetStep records what peering is doing, for operators.
type SetStep struct{ What string }

// GoDown marks the PG down until its interval ends (Prior.Reason says
// why, Prior.BlockedBy which OSDs it waits for).
type GoDown struct{ Prior Prior }

// RequestTemp asks the monitors for Acting as the PG's temporary acting
// set (answer: TempRequested).
type RequestTemp struct{ Acting []int32 }

// NoteRecovery records how many object copies the plan has to make, and
// whether some member is backfilled.
type NoteRecovery struct {
	Copies   int64
	Backfill bool
}

// SendActivate has replica To adopt Info and Log (PGActivate), lacking
// Missing, or everything with Backfill; Versions are then this OSD's
// version of each object of Missing (if known), so that the replica
// keeps the copies it holds at that version and says which
// (ActivateAck.Current), as Ceph's backfill compares versions.
type SendActivate struct {
	To       int32
	Info     pglog.Info
	Log      []pglog.Entry
	Backfill bool
	Missing  []objid.ID
	Versions []wire.Version
}

// Finish records the start of the interval, notes what each replica
// lacks and lets the parked requests in (answer: Finished).
type Finish struct {
	Plan    Result
	Missing map[int32][]objid.ID
}

// Serve says the PG is active: the driver recovers the replicas behind
// client I/O and releases the strays among Asked (every OSD queried).
// Peering is over.
type Serve struct{ Asked []int32 }

// Failed says the attempt failed; another starts after RetryInterval.
type Failed struct{ Err error }

// StartOver says peering starts over at once, and why.
type StartOver struct{ Why error }

func (LoadLocal) isAction()     {}
func (ReadPast) isAction()      {}
func (RefreshMap) isAction()    {}
func (SendQuery) isAction()     {}
func (RequestUpThru) isAction() {}
func (SetTimer) isAction()      {}
func (SetStep) isAction()       {}
func (GoDown) isAction()        {}
func (RequestTemp) isAction()   {}
func (NoteRecovery) isAction()  {}
func (SendActivate) isAction()  {}
func (Finish) isAction()        {}
func (Serve) isAction()         {}
func (Failed) isAction()        {}
func (StartOver) isAction()     {}

// state is where the machine is; each waits for one kind of event (and
// some for their timer).
type state int

const (
	idle           state = iota // before Start
	loading                     // LoadLocal sent
	readingPast                 // ReadPast sent
	pastWait                    // ReadPast failed: timer
	refreshing                  // RefreshMap sent, to begin a query round
	querying                    // queries sent: Notify, timer
	down                        // until the interval ends
	requesting                  // RequestTemp sent
	tempWait                    // pg_temp asked: timer
	pulling                     // SendPull sent to a member: Push, PullRefused, PushApplied, timer
	readingVersion              // ReadVersion sent
	searching                   // SendPull sent to another up OSD: Push, PullRefused, PushApplied, timer
	unfound                     // objects unfound: MarkedLost, timer
	checkingCopy                // CheckCopy sent, to revert an object
	reverting                   // SendPull of an older copy sent: Push, PullRefused, PushApplied, timer
	adopting                    // Adopt sent
	forgetting                  // ForgetLost sent
	listing                     // ListObjects sent
	activating                  // activations sent: ActivateAck, timer
	finishing                   // Finish sent
	serving                     // peering is over
	retryWait                   // an attempt failed: timer
	waitingUpThru               // RequestUpThru sent: UpThruRecorded, timer
)

func (s state) String() string {
	return [...]string{"idle", "loading", "reading-past", "past-wait", "refreshing", "querying", "down",
		"requesting-temp", "temp-wait",
		"pulling", "reading-version", "searching", "unfound", "checking-copy", "reverting", "adopting", "forgetting", "listing", "activating", "finishing", "serving", "retry-wait", "waiting-up-thru"}[s]
}

// Machine is one interval's peering on its primary. It is not safe for
// concurrent use: one driver goroutine steps it.
type Machine struct {
	interval uint64
	state    state
	timer    TimerID
	armed    bool // the newest timer is the current state's

	self     Member
	replicas []int32
	poolSize int
	up       func(int32) bool
	lost     func(id int32, first uint64) bool
	maxOSD   int32
	// upThru is this OSD's up_thru as the newest map the machine heard
	// of records it.
	upThru uint64
	// lose says an operator marked the unfound objects lost, revert
	// that they go back to older copies; they hold for the interval's
	// later attempts.
	lose    bool
	revert  bool
	past    []Interval
	probe   []int32 // the OSDs to query: replicas, then past intervals'
	got     map[int32]Member
	plan    Result
	members []Member
	temp    []int32
	missing map[int32][]objid.ID
	// versions are this OSD's version of each object, listed for a
	// backfill (nil if none).
	versions map[objid.ID]wire.Version
	waiting  map[int32]bool // replicas yet to acknowledge activation
	c        completion     // completing this OSD's copy (complete.go)

	out []Action
}

// NewMachine returns a machine waiting for Start.
func NewMachine() *Machine { return &Machine{} }

// State names the machine's state, for tests and operators.
func (m *Machine) State() string { return m.state.String() }

// Step feeds one event and returns the actions it calls for, in the
// order the driver must carry them out.
func (m *Machine) Step(ev Event) []Action {
	m.out = nil
	switch ev := ev.(type) {
	case Start:
		*m = Machine{interval: ev.Interval, timer: m.timer}
		m.load(false)
	case Loaded:
		if m.state == loading {
			m.loaded(ev)
		}
	case PastRead:
		if m.state == readingPast {
			m.pastRead(ev)
		}
	case MapRefreshed:
		if m.state == refreshing {
			m.up, m.lost, m.maxOSD = ev.Up, ev.Lost, ev.MaxOSD
			m.sendQueries()
		}
	case Notify:
		if m.state == querying && ev.Interval == m.interval && slices.Contains(m.probe, ev.Member.OSD) {
			m.got[ev.Member.OSD] = ev.Member
			if len(m.got) == len(m.probe) {
				m.decide()
			}
		}
	case TempRequested:
		if m.state == requesting {
			if ev.Err != nil {
				m.fail(ev.Err)
				break
			}
			m.to(tempWait)
			m.setTimer(AnswerWait)
		}
	case ActivateAck:
		if m.state == activating && ev.Interval == m.interval && m.waiting[ev.From] {
			m.acked(ev)
		}
	case Finished:
		if m.state == finishing {
			if ev.Err != nil {
				m.fail(ev.Err)
				break
			}
			m.to(serving)
			m.emit(Serve{Asked: slices.Clone(m.probe)})
		}
	case UpThruRecorded:
		m.upThru = max(m.upThru, ev.UpThru)
		if m.state == waitingUpThru && m.upThru >= m.interval {
			m.activateReplicas()
		}
	case TimerFired:
		if m.armed && ev.ID == m.timer {
			m.armed = false
			m.expired()
		}
	default:
		m.stepComplete(ev)
	}
	return m.out
}

func (m *Machine) emit(a Action) { m.out = append(m.out, a) }

// to moves to state s; a timer armed for the state left is stale.
func (m *Machine) to(s state) {
	m.state, m.armed = s, false
}

func (m *Machine) setTimer(d time.Duration) {
	m.timer++
	m.armed = true
	m.emit(SetTimer{ID: m.timer, After: d})
}

// load begins an attempt by asking for this OSD's own history.
func (m *Machine) load(newerMap bool) {
	m.to(loading)
	m.emit(LoadLocal{NewerMap: newerMap})
}

func (m *Machine) loaded(ev Loaded) {
	m.self, m.replicas, m.poolSize, m.up, m.lost, m.maxOSD = ev.Self, slices.Clone(ev.Replicas), ev.PoolSize, ev.Up, ev.Lost, ev.MaxOSD
	if ev.LoseUnfound {
		m.lose, m.revert = true, ev.Revert
	}
	m.upThru = max(m.upThru, ev.UpThru)
	m.to(readingPast)
	m.emit(ReadPast{Since: m.self.Info.LastEpochStarted})
}

// pastRead works out whom to ask, replicas first, and starts asking.
func (m *Machine) pastRead(ev PastRead) {
	if ev.Err != nil {
		m.to(pastWait)
		m.setTimer(RetryInterval)
		return
	}
	m.past = ev.Past
	prior := PriorSet(m.past, m.self.Info.LastEpochStarted, m.up, m.lost)
	m.probe = slices.Clone(m.replicas)
	for _, x := range prior.Probe {
		if x != m.self.OSD && !slices.Contains(m.probe, x) {
			m.probe = append(m.probe, x)
		}
	}
	m.got = map[int32]Member{}
	m.round()
}

// round starts a round of queries to the OSDs that have not answered,
// at their addresses in the newest map.
func (m *Machine) round() {
	if len(m.got) == len(m.probe) {
		m.decide()
		return
	}
	m.emit(SetStep{What: fmt.Sprintf("querying osd %v (have %d of %d)", m.probe, len(m.got), len(m.probe))})
	m.to(refreshing)
	m.emit(RefreshMap{})
}

// sendQueries sends the round's queries. An OSD outside the acting set
// may go down or restart without ending the interval: one that went
// down makes peering start over, with a new prior set.
func (m *Machine) sendQueries() {
	var sends []Action
	for _, x := range m.probe {
		if _, ok := m.got[x]; ok {
			continue
		}
		if !m.up(x) {
			m.startOver(fmt.Errorf("osd.%d went down while peering asked it: %w", x, ErrPriorChanged))
			return
		}
		sends = append(sends, SendQuery{To: x})
	}
	m.out = append(m.out, sends...)
	m.to(querying)
	m.setTimer(RetryInterval)
}

// decide acts on every answer: stay down if a past interval that may
// have taken writes has no OSD up (counting only intervals since the
// newest activation any member saw), ask for pg_temp if this OSD must be
// backfilled, and otherwise complete this OSD's copy.
func (m *Machine) decide() {
	m.members = []Member{m.self}
	for _, x := range m.probe {
		m.members = append(m.members, m.got[x])
	}
	prior := PriorSet(m.past, MaxStarted(m.members), m.up, m.lost)
	// An OSD of a past interval that came up after the OSDs to ask were
	// chosen (the map was refreshed while querying) must be asked too:
	// counting it as up without its answer would let a write only it
	// holds be lost.
	var late []int32
	for _, x := range prior.Probe {
		if x != m.self.OSD && !slices.Contains(m.probe, x) {
			late = append(late, x)
		}
	}
	if len(late) > 0 {
		m.probe = append(m.probe, late...)
		m.round()
		return
	}
	if len(prior.Down) > 0 {
		m.to(down)
		m.emit(GoDown{Prior: prior})
		return
	}
	plan, err := Plan(m.members)
	if err != nil {
		m.fail(err)
		return
	}
	m.plan = plan
	if slices.Contains(plan.Backfill, m.self.OSD) {
		m.temp = TempActing(plan, m.members, m.replicas, m.self.OSD, m.poolSize, m.up)
		m.emit(SetStep{What: fmt.Sprintf("asking for pg_temp %v to backfill this OSD while others serve", m.temp)})
		m.to(requesting)
		m.emit(RequestTemp{Acting: slices.Clone(m.temp)})
		return
	}
	if m.upThru < m.interval {
		// Asked once every OSD to probe answered, not before: a primary
		// that waits in vain for an answer leaves an interval later
		// peering may skip. The map recording it comes while this OSD's
		// copy is completed, or activation waits for it.
		m.emit(RequestUpThru{Want: m.interval})
	}
	copies, backfill := recoveryCopies(plan, append([]int32{m.self.OSD}, m.replicas...))
	m.emit(NoteRecovery{Copies: copies, Backfill: backfill})
	m.complete(plan)
}

// recoveryCopies counts the object copies plan makes for osds, and
// reports whether some are backfilled.
func recoveryCopies(plan Result, osds []int32) (copies int64, backfill bool) {
	for _, x := range osds {
		if slices.Contains(plan.Backfill, x) {
			copies += plan.Info.Stats.Objects
			backfill = true
		} else {
			copies += int64(len(plan.Missing[x]))
		}
	}
	return copies, backfill
}

// activate has every replica adopt the authoritative history, once the
// monitors have recorded this OSD's up_thru at or after the interval's
// start: from then on the interval may go read-write, and later peering
// will ask its OSDs.
func (m *Machine) activate(plan Result, missing map[int32][]objid.ID) {
	m.plan, m.missing = plan, missing
	if m.upThru >= m.interval {
		m.activateReplicas()
		return
	}
	m.emit(SetStep{What: fmt.Sprintf("waiting for the monitors to record up_thru %d (the map has %d)", m.interval, m.upThru)})
	m.to(waitingUpThru)
	m.setTimer(RetryInterval)
}

// activateReplicas sends the activations.
func (m *Machine) activateReplicas() {
	plan, missing := m.plan, m.missing
	info := plan.Info
	info.SameIntervalSince, info.LastEpochStarted = m.interval, m.interval
	m.emit(SetStep{What: fmt.Sprintf("activating osd %v", m.replicas)})
	m.waiting = map[int32]bool{}
	for _, x := range m.replicas {
		a := SendActivate{To: x, Info: info, Log: plan.Log, Backfill: slices.Contains(plan.Backfill, x), Missing: missing[x]}
		if a.Backfill && m.versions != nil {
			a.Versions = make([]wire.Version, len(a.Missing))
			for i, id := range a.Missing {
				a.Versions[i] = m.versions[id] // zero for a lost object: never current
			}
		}
		m.emit(a)
		m.waiting[x] = true
	}
	m.to(activating)
	if len(m.waiting) == 0 {
		m.finish()
		return
	}
	m.setTimer(AnswerWait)
}

func (m *Machine) acked(ev ActivateAck) {
	if ev.Result != 0 {
		m.fail(fmt.Errorf("osd.%d could not activate: errno %d", ev.From, -ev.Result))
		return
	}
	delete(m.waiting, ev.From)
	if len(ev.Current) > 0 && slices.Contains(m.plan.Backfill, ev.From) {
		current := map[objid.ID]bool{}
		for _, id := range ev.Current {
			current[id] = true
		}
		m.missing[ev.From] = slices.DeleteFunc(slices.Clone(m.missing[ev.From]), func(id objid.ID) bool { return current[id] })
	}
	if len(m.waiting) == 0 {
		m.finish()
	}
}

func (m *Machine) finish() {
	m.to(finishing)
	m.emit(Finish{Plan: m.plan, Missing: m.missing})
}

// expired acts on the current state's timer.
func (m *Machine) expired() {
	switch m.state {
	case pastWait:
		m.to(readingPast)
		m.emit(ReadPast{Since: m.self.Info.LastEpochStarted})
	case querying:
		m.round()
	case tempWait:
		m.startOver(fmt.Errorf("pg_temp %v did not change the acting set: %w", m.temp, ErrPriorChanged))
	case activating:
		m.fail(fmt.Errorf("osd %v did not acknowledge activation: %w", slices.Sorted(maps.Keys(m.waiting)), ErrNoAnswer))
	case retryWait:
		m.load(true)
	case waitingUpThru:
		m.emit(RequestUpThru{Want: m.interval})
		m.setTimer(RetryInterval)
	default:
		m.expiredComplete()
	}
}

// fail ends the attempt; the next starts after RetryInterval.
func (m *Machine) fail(err error) {
	m.emit(Failed{Err: err})
	m.to(retryWait)
	m.setTimer(RetryInterval)
}

// startOver ends the attempt and starts the next at once.
func (m *Machine) startOver(why error) {
	m.emit(StartOver{Why: why})
	m.load(true)
}
