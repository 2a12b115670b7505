package peering

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// Completing the primary's own copy, the machine's states between the
// plan and the activation (machine.go has the rest of the protocol):
//
//	pulling:    SendPull of every object it lacks to the authority; each
//	            Push is applied (ApplyPush -> PushApplied), each
//	            PullRefused noted; silence of AnswerWait (reset by each
//	            push applied) fails the attempt
//	fetching:   each refused object (or, on an authority that lacks
//	            some objects itself, each of those) is pulled alone from
//	            the members whose copy is current, in turn (pulling again)
//	searching:  then asked of every other up OSD, in id order, one at a
//	            time (RetryInterval each), for a copy at the version the
//	            authoritative history gives it (ReadVersion when its log
//	            does not say); a copy found is applied. The newest older
//	            copy an OSD sent is remembered (who, which version), for
//	            a revert
//	unfound:    what nobody supplied is reported (ReportUnfound); unless
//	            an operator marked it lost (MarkedLost, or Loaded's
//	            LoseUnfound), the machine waits RetryInterval for that
//	            mark and otherwise starts over (an OSD holding a copy may
//	            have returned)
//	reverting:  marked lost with Revert, each unfound object in turn:
//	            CheckCopy of this OSD's own copy (-> CopyChecked); the
//	            newest older copy, this OSD's or the one the search
//	            remembered, is kept or pulled again (SendPull at its
//	            version, Push -> ApplyPush -> PushApplied; anything else
//	            fails the attempt); an object with no older copy, or
//	            whose newest write deleted it, is deleted as without
//	            Revert
//	adopting:   Adopt the authority's history (unless this OSD is the
//	            authority), ForgetLost the objects marked lost (their
//	            removal, or for those reverted a modification, ends the
//	            history), ListObjects if a replica is backfilled; then
//	            the replicas are activated
//
// A pull is per object and source, so a push that arrives late, from
// another OSD, or for another interval is ignored; pushes are whole
// objects and idempotent, so an attempt that starts over pulls again.

// ErrUnfound means no reachable OSD holds a readable copy of an object
// at the version the authoritative history gives it.
var ErrUnfound = errors.New("peering: object unfound")

// Push is an object OSD From sent in answer to a pull (PGPush), in the
// interval that started at Interval: whether it exists and at what
// version, and Body, the driver's own copy of it, handed back in
// ApplyPush.
type Push struct {
	From     int32
	Interval uint64
	Object   objid.ID
	Exists   bool
	Version  wire.Version
	Body     any
}

// PullRefused says OSD From cannot supply Object (a PGAck with a
// non-zero result): it lacks the object, or cannot read its copy. Errno
// is positive.
type PullRefused struct {
	From     int32
	Interval uint64
	Object   objid.ID
	Errno    int32
}

// PushApplied answers ApplyPush: the object is committed here, or Err.
type PushApplied struct {
	Object objid.ID
	Err    error
}

// VersionRead answers ReadVersion: the version of this OSD's copy of
// Object (zero if it has none, or it cannot be read).
type VersionRead struct {
	Object  objid.ID
	Version wire.Version
}

// MarkedLost says an operator marked the PG's unfound objects lost
// (mark_unfound_lost delete): peering goes on without them. With Revert
// (mark_unfound_lost revert) each goes back to the newest older copy an
// OSD holds, and only those with none are deleted. It holds for every
// later attempt of the interval; a later mark replaces the mode.
type MarkedLost struct{ Revert bool }

// CopyChecked answers CheckCopy: the version of this OSD's copy of
// Object if all of it can be read (zero if it has none, or some part
// cannot be read).
type CopyChecked struct {
	Object  objid.ID
	Version wire.Version
}

// Adopted answers Adopt.
type Adopted struct{ Err error }

// LostForgotten answers ForgetLost: this OSD's info and log, which now
// end with the removal of the lost objects.
type LostForgotten struct {
	Info pglog.Info
	Log  []pglog.Entry
	Err  error
}

// ObjectsListed answers ListObjects: every client object of the PG this
// OSD holds, in hash order, and the version of each (Versions, parallel
// to Objects; zero where unknown).
type ObjectsListed struct {
	Objects  []objid.ID
	Versions []wire.Version
	Err      error
}

func (Push) isEvent()          {}
func (PullRefused) isEvent()   {}
func (PushApplied) isEvent()   {}
func (VersionRead) isEvent()   {}
func (MarkedLost) isEvent()    {}
func (CopyChecked) isEvent()   {}
func (Adopted) isEvent()       {}
func (LostForgotten) isEvent() {}
func (ObjectsListed) isEvent() {}

// SendPull asks OSD To for its copies of Objects (PGPull); it answers
// each with a Push or a PullRefused. Want is zero for a member whose
// copy is current, and the version searched for when asking an OSD
// outside them (or the older version a revert pulls): the pull then
// searches (PGPull.Search), and the OSD sends whatever copy it holds.
type SendPull struct {
	To      int32
	Objects []objid.ID
	Want    wire.Version
}

// ApplyPush makes this OSD's copy of Object equal to the pushed one
// (Body, from Push), counts one object copy made, and answers
// PushApplied. Search says the copy was found outside the members whose
// copy is current; Revert, that it is an older copy a revert goes back
// to.
type ApplyPush struct {
	From   int32
	Object objid.ID
	Body   any
	Search bool
	Revert bool
}

// ReadVersion asks the version of this OSD's copy of Object (answer:
// VersionRead); the authoritative log no longer names the object.
type ReadVersion struct{ Object objid.ID }

// ReportUnfound records the objects no reachable OSD could supply, for
// operators (the PG is incomplete while they stay unfound) and for
// mark_unfound_lost.
type ReportUnfound struct{ Objects []objid.ID }

// Adopt makes the authority's Info and Log this OSD's history (answer:
// Adopted).
type Adopt struct {
	Info pglog.Info
	Log  []pglog.Entry
}

// ForgetLost removes Objects, marked lost, from this OSD and appends
// their removal to its log; for each of Reverted, whose copy here is
// the older one a revert went back to, it appends a modification and
// gives the copy that entry's version, so that it is current at the
// new head (answer: LostForgotten).
type ForgetLost struct {
	Objects  []objid.ID
	Reverted []objid.ID
}

// CheckCopy asks whether this OSD's own copy of Object can be read
// whole, and its version (answer: CopyChecked).
type CheckCopy struct{ Object objid.ID }

// ListObjects asks for every client object of the PG on this OSD and
// its version, for the replicas to backfill (answer: ObjectsListed).
type ListObjects struct{}

func (SendPull) isAction()      {}
func (ApplyPush) isAction()     {}
func (ReadVersion) isAction()   {}
func (ReportUnfound) isAction() {}
func (Adopt) isAction()         {}
func (ForgetLost) isAction()    {}
func (ListObjects) isAction()   {}
func (CheckCopy) isAction()     {}

// completion is one attempt's progress in completing this OSD's copy.
type completion struct {
	plan    Result
	members []Member
	// fetch are the objects yet to be fetched one at a time from
	// another source; the first is the one being fetched.
	fetch []objid.ID
	// sources are the members with a current copy of fetch[0] not yet
	// asked; asked are all of them and the authority, whom the search
	// skips.
	sources, asked []int32
	// want is the version searched for; candidates the up OSDs not yet
	// asked for it.
	want       wire.Version
	candidates []int32
	// The pull in progress: from whom, whether it is the authority's
	// of every object this OSD lacks, the objects neither pushed nor
	// refused, those pushed and being applied, how many were asked, and
	// those refused.
	from     int32
	bulk     bool
	awaiting map[objid.ID]bool
	applying map[objid.ID]bool
	total    int
	refused  []objid.ID
	// unfound are the objects nobody could supply, and unfoundAt the
	// version each was searched for (zero when no version was known).
	unfound   []objid.ID
	unfoundAt map[objid.ID]wire.Version
	// older is, per object searched for, the newest copy older than
	// the version wanted that an OSD sent in the search.
	older map[objid.ID]olderCopy
	// Settling the unfound objects marked lost: those yet to revert
	// (the first is in progress), the copy being pulled for it, and
	// those reverted and deleted.
	toRevert []objid.ID
	pulling  olderCopy
	reverted []objid.ID
	lost     []objid.ID
}

// olderCopy is a copy of an object older than the version searched
// for, on OSD from.
type olderCopy struct {
	from    int32
	version wire.Version
}

// complete begins completing this OSD's copy to plan: everything it
// lacks is pulled from the authority first, and what the authority
// cannot supply (or, when this OSD is the authority, what an
// interrupted recovery left it lacking) is fetched one at a time.
func (m *Machine) complete(plan Result) {
	self := m.self.OSD
	m.c = completion{plan: plan, members: m.members}
	lacks := plan.Missing[self]
	switch {
	case plan.Auth == self:
		m.c.fetch = slices.Clone(lacks)
		m.nextFetch()
	case len(lacks) > 0:
		m.c.bulk = true
		m.pull(plan.Auth, lacks, wire.Version{})
	default:
		m.settle()
	}
}

// pull asks from for objs; a search (want non-zero) waits RetryInterval
// for one object, a member AnswerWait of silence.
func (m *Machine) pull(from int32, objs []objid.ID, want wire.Version) {
	m.pullIn(searching, from, objs, want)
}

// pullIn is pull, the state for a search (want non-zero) being s.
func (m *Machine) pullIn(s state, from int32, objs []objid.ID, want wire.Version) {
	c := &m.c
	c.from, c.total, c.refused = from, len(objs), nil
	c.awaiting, c.applying = map[objid.ID]bool{}, map[objid.ID]bool{}
	for _, id := range objs {
		c.awaiting[id] = true
	}
	if want == (wire.Version{}) {
		m.emit(SetStep{What: fmt.Sprintf("pulling %d objects from osd.%d", len(objs), from)})
		m.emit(SendPull{To: from, Objects: slices.Clone(objs)})
		m.to(pulling)
		m.setTimer(AnswerWait)
		return
	}
	m.emit(SendPull{To: from, Objects: slices.Clone(objs), Want: want})
	m.to(s)
	m.setTimer(RetryInterval)
}

// pushed acts on a push in a pull's state.
func (m *Machine) pushed(ev Push) {
	c := &m.c
	if ev.Interval != m.interval || ev.From != c.from || !c.awaiting[ev.Object] {
		return
	}
	delete(c.awaiting, ev.Object)
	switch {
	case m.state == reverting && (!ev.Exists || ev.Version != c.pulling.version):
		m.fail(fmt.Errorf("osd.%d no longer holds %v at %v to revert to", ev.From, ev.Object, c.pulling.version))
		return
	case m.state == searching && (!ev.Exists || ev.Version != c.want):
		if ev.Exists && ev.Version != (wire.Version{}) && ev.Version.Less(c.want) {
			m.noteOlder(ev.Object, olderCopy{from: ev.From, version: ev.Version})
		}
		m.nextCandidate() // an older copy, or none: not the one wanted
		return
	}
	c.applying[ev.Object] = true
	m.emit(ApplyPush{From: ev.From, Object: ev.Object, Body: ev.Body, Search: m.state == searching, Revert: m.state == reverting})
}

// noteOlder remembers cp if it is the newest older copy of id seen.
func (m *Machine) noteOlder(id objid.ID, cp olderCopy) {
	c := &m.c
	if best, ok := c.older[id]; ok && !best.version.Less(cp.version) {
		return
	}
	if c.older == nil {
		c.older = map[objid.ID]olderCopy{}
	}
	c.older[id] = cp
}

// applied acts on a push applied.
func (m *Machine) applied(ev PushApplied) {
	c := &m.c
	if !c.applying[ev.Object] {
		return
	}
	delete(c.applying, ev.Object)
	if ev.Err != nil {
		m.fail(ev.Err)
		return
	}
	switch m.state {
	case searching:
		m.fetched()
		return
	case reverting:
		m.revertedOne(true)
		return
	}
	if len(c.awaiting)+len(c.applying) == 0 {
		m.pulled()
		return
	}
	m.setTimer(AnswerWait) // the wait is for silence, not for the whole copy
}

// refusedPull acts on a refusal in a pull's state.
func (m *Machine) refusedPull(ev PullRefused) {
	c := &m.c
	if ev.Interval != m.interval || ev.From != c.from || !c.awaiting[ev.Object] {
		return
	}
	delete(c.awaiting, ev.Object)
	switch m.state {
	case searching:
		m.nextCandidate()
		return
	case reverting:
		m.fail(fmt.Errorf("osd.%d no longer supplies %v at %v to revert to (errno %d)", ev.From, ev.Object, c.pulling.version, ev.Errno))
		return
	}
	c.refused = append(c.refused, ev.Object)
	if len(c.awaiting)+len(c.applying) == 0 {
		m.pulled()
	}
}

// pulled goes on once a member answered for every object asked: the
// authority's refusals are fetched elsewhere, one at a time; a member's
// refusal of the object being fetched moves on to the next member.
func (m *Machine) pulled() {
	c := &m.c
	switch {
	case c.bulk:
		c.bulk = false
		c.fetch = c.refused
		m.nextFetch()
	case len(c.refused) > 0:
		m.nextSource()
	default:
		m.fetched()
	}
}

// nextFetch starts fetching the next object, from the members whose copy
// is current, the authority and this OSD aside; once every object is
// fetched or unfound it settles the unfound ones.
func (m *Machine) nextFetch() {
	c := &m.c
	if len(c.fetch) == 0 {
		m.settle()
		return
	}
	c.sources = Sources(c.plan, c.members, c.fetch[0], c.plan.Auth, m.self.OSD)
	// The authority refused the object already (or is this OSD): the
	// search need not ask it again.
	c.asked = append(slices.Clone(c.sources), c.plan.Auth)
	m.nextSource()
}

// fetched moves on to the next object.
func (m *Machine) fetched() {
	m.c.fetch = m.c.fetch[1:]
	m.nextFetch()
}

// nextSource pulls the object being fetched from the next member; once
// every member refused, it searches the other up OSDs for it.
func (m *Machine) nextSource() {
	c := &m.c
	if len(c.sources) > 0 {
		from := c.sources[0]
		c.sources = c.sources[1:]
		m.pull(from, c.fetch[:1], wire.Version{})
		return
	}
	id := c.fetch[0]
	if v, ok := logVersion(c.plan.Log, id); ok {
		m.search(v)
		return
	}
	m.to(readingVersion)
	m.emit(ReadVersion{Object: id})
}

// logVersion is the version of the newest entry of log for id.
func logVersion(log []pglog.Entry, id objid.ID) (wire.Version, bool) {
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Object == id {
			return log[i].Version, true
		}
	}
	return wire.Version{}, false
}

// search asks every up OSD but this one and those already asked, in id
// order, for a copy at version want (Ceph's search for unfound objects:
// an OSD outside the acting set may keep a copy from an older
// interval); it finds none without a version to look for.
func (m *Machine) search(want wire.Version) {
	c := &m.c
	c.want, c.candidates = want, nil
	if want != (wire.Version{}) {
		for x := range m.maxOSD {
			if x != m.self.OSD && !slices.Contains(c.asked, x) && m.up(x) {
				c.candidates = append(c.candidates, x)
			}
		}
	}
	if len(c.candidates) > 0 {
		m.emit(SetStep{What: fmt.Sprintf("searching osd %v for %v at %v", c.candidates, c.fetch[0], want)})
	}
	m.nextCandidate()
}

// nextCandidate asks the next OSD of the search; with none left the
// object is unfound.
func (m *Machine) nextCandidate() {
	c := &m.c
	if len(c.candidates) == 0 {
		c.unfound = append(c.unfound, c.fetch[0])
		if c.unfoundAt == nil {
			c.unfoundAt = map[objid.ID]wire.Version{}
		}
		c.unfoundAt[c.fetch[0]] = c.want
		m.fetched()
		return
	}
	x := c.candidates[0]
	c.candidates = c.candidates[1:]
	m.pull(x, c.fetch[:1], c.want)
}

// settle acts on the unfound objects: none, or marked lost, and the
// copy is adopted; otherwise peering waits for them to be marked lost.
func (m *Machine) settle() {
	c := &m.c
	if len(c.unfound) == 0 {
		m.adopt()
		return
	}
	m.emit(ReportUnfound{Objects: slices.Clone(c.unfound)})
	if m.lose {
		m.settleLost()
		return
	}
	m.emit(SetStep{What: fmt.Sprintf("%d objects unfound: waiting for an OSD that holds them, or for mark_unfound_lost", len(c.unfound))})
	m.to(unfound)
	m.setTimer(RetryInterval)
}

// settleLost settles the unfound objects an operator marked lost:
// deleted, or with Revert each taken back to its newest older copy.
func (m *Machine) settleLost() {
	c := &m.c
	c.lost, c.reverted, c.toRevert = nil, nil, nil
	if !m.revert {
		c.lost = slices.Clone(c.unfound)
		m.adopt()
		return
	}
	for _, id := range c.unfound {
		if deletedInLog(c.plan.Log, id) {
			// Its newest write removed it: an older copy would bring
			// back what a client deleted.
			c.lost = append(c.lost, id)
			continue
		}
		c.toRevert = append(c.toRevert, id)
	}
	if len(c.toRevert) > 0 {
		m.emit(SetStep{What: fmt.Sprintf("reverting %d unfound objects to the newest older copy an OSD holds", len(c.toRevert))})
	}
	m.nextRevert()
}

// deletedInLog says whether the newest entry of log for id removed it.
func deletedInLog(log []pglog.Entry, id objid.ID) bool {
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Object == id {
			return log[i].Kind == pglog.Delete
		}
	}
	return false
}

// nextRevert reverts the next object: first this OSD's own copy is
// checked.
func (m *Machine) nextRevert() {
	c := &m.c
	if len(c.toRevert) == 0 {
		m.adopt()
		return
	}
	m.to(checkingCopy)
	m.emit(CheckCopy{Object: c.toRevert[0]})
}

// copyChecked picks the copy to revert to: this OSD's own, if older
// than the version lost and no older than the search's best, which is
// pulled otherwise; with neither the object is deleted.
func (m *Machine) copyChecked(ev CopyChecked) {
	c := &m.c
	id := c.toRevert[0]
	want := c.unfoundAt[id]
	best, found := c.older[id]
	own := ev.Version != (wire.Version{}) && (want == (wire.Version{}) || ev.Version.Less(want))
	switch {
	case own && (!found || !ev.Version.Less(best.version)):
		m.revertedOne(true)
	case found:
		c.pulling = best
		m.pullIn(reverting, best.from, []objid.ID{id}, best.version)
	default:
		m.revertedOne(false)
	}
}

// revertedOne moves on from the object being reverted: reverted to a
// copy now here, or (none) to be deleted.
func (m *Machine) revertedOne(reverted bool) {
	c := &m.c
	id := c.toRevert[0]
	c.toRevert = c.toRevert[1:]
	if reverted {
		c.reverted = append(c.reverted, id)
	} else {
		c.lost = append(c.lost, id)
	}
	m.nextRevert()
}

// adopt makes the authority's history this OSD's.
func (m *Machine) adopt() {
	if m.c.plan.Auth == m.self.OSD {
		m.forget()
		return
	}
	m.to(adopting)
	m.emit(Adopt{Info: m.c.plan.Info, Log: m.c.plan.Log})
}

// forget records the removal of the lost objects, and the reverts.
func (m *Machine) forget() {
	if len(m.c.unfound) == 0 {
		m.list()
		return
	}
	m.to(forgetting)
	m.emit(ForgetLost{Objects: slices.Clone(m.c.lost), Reverted: slices.Clone(m.c.reverted)})
}

// list lists this OSD's objects if a replica is to be backfilled, and
// otherwise activates the replicas.
func (m *Machine) list() {
	for _, x := range m.replicas {
		if slices.Contains(m.c.plan.Backfill, x) {
			m.to(listing)
			m.emit(ListObjects{})
			return
		}
	}
	m.listed(nil, nil)
}

// listed works out what each replica lacks (every object, for one to
// backfill, which keeps the copies it holds at this OSD's version; and
// the lost objects, whose removal or revert the history now ends with)
// and activates them.
func (m *Machine) listed(all []objid.ID, versions []wire.Version) {
	plan := m.c.plan
	missing := make(map[int32][]objid.ID, len(m.replicas))
	m.versions = nil
	if len(versions) == len(all) && len(all) > 0 {
		m.versions = make(map[objid.ID]wire.Version, len(all))
		for i, id := range all {
			m.versions[id] = versions[i]
		}
	}
	for _, x := range m.replicas {
		lacks := plan.Missing[x]
		if slices.Contains(plan.Backfill, x) {
			lacks = all
		}
		lacks = slices.Clone(lacks)
		for _, id := range m.c.unfound {
			if !slices.Contains(lacks, id) {
				lacks = append(lacks, id)
			}
		}
		missing[x] = lacks
	}
	m.activate(plan, missing)
}

// stepComplete feeds an event of the completion's states.
func (m *Machine) stepComplete(ev Event) {
	switch ev := ev.(type) {
	case Push:
		if m.state == pulling || m.state == searching || m.state == reverting {
			m.pushed(ev)
		}
	case PullRefused:
		if m.state == pulling || m.state == searching || m.state == reverting {
			m.refusedPull(ev)
		}
	case PushApplied:
		if m.state == pulling || m.state == searching || m.state == reverting {
			m.applied(ev)
		}
	case VersionRead:
		if m.state == readingVersion && len(m.c.fetch) > 0 && ev.Object == m.c.fetch[0] {
			m.search(ev.Version)
		}
	case MarkedLost:
		m.lose, m.revert = true, ev.Revert
		if m.state == unfound {
			m.settleLost()
		}
	case CopyChecked:
		if m.state == checkingCopy && ev.Object == m.c.toRevert[0] {
			m.copyChecked(ev)
		}
	case Adopted:
		if m.state == adopting {
			if ev.Err != nil {
				m.fail(ev.Err)
				break
			}
			m.forget()
		}
	case LostForgotten:
		if m.state == forgetting {
			if ev.Err != nil {
				m.fail(ev.Err)
				break
			}
			m.c.plan.Info, m.c.plan.Log = ev.Info, ev.Log
			m.list()
		}
	case ObjectsListed:
		if m.state == listing {
			if ev.Err != nil {
				m.fail(ev.Err)
				break
			}
			m.listed(ev.Objects, ev.Versions)
		}
	}
}

// expiredComplete acts on the timer of a completion's state.
func (m *Machine) expiredComplete() {
	c := &m.c
	switch m.state {
	case pulling:
		m.fail(fmt.Errorf("osd.%d sent %d of %d objects: %w", c.from, c.total-len(c.awaiting), c.total, ErrNoAnswer))
	case searching:
		m.nextCandidate()
	case reverting:
		m.fail(fmt.Errorf("osd.%d did not send %v at %v to revert to: %w", c.pulling.from, c.toRevert[0], c.pulling.version, ErrNoAnswer))
	case unfound:
		m.startOver(fmt.Errorf("%d objects, first %v: %w", len(c.unfound), c.unfound[0], ErrUnfound))
	}
}

// Sources lists the members whose copy of id is current (the authority
// first), but none of exclude: those with a history, not backfilled and
// not lacking id.
func Sources(plan Result, members []Member, id objid.ID, exclude ...int32) []int32 {
	var out []int32
	for _, mem := range append([]Member{{OSD: plan.Auth, Info: plan.Info}}, members...) {
		switch {
		case slices.Contains(exclude, mem.OSD) || slices.Contains(out, mem.OSD),
			slices.Contains(plan.Backfill, mem.OSD), slices.Contains(plan.Missing[mem.OSD], id),
			mem.Info.LastUpdate == (wire.Version{}):
			continue
		}
		out = append(out, mem.OSD)
	}
	return out
}
