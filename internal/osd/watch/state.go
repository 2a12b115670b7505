package watch

import (
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// ConnID is the driver's name for a client session; 0 is none.
type ConnID uint64

// ActionKind says what an Action asks the driver to do.
type ActionKind int

// Actions.
const (
	// ActionSendNotify: send Payload of notify NotifyID from Notifier to
	// Watcher over Conn.
	ActionSendNotify ActionKind = iota + 1
	// ActionSendError: tell Watcher over Conn that its watch is gone
	// (Errno).
	ActionSendError
	// ActionCompleteNotify: answer notify NotifyID with Result.
	ActionCompleteNotify
	// ActionRemoveWatch: Watcher's watch on Object expired; remove its
	// persisted record.
	ActionRemoveWatch
)

// Action is one thing the driver must do. Which fields matter depends
// on Kind.
type Action struct {
	Kind     ActionKind
	Object   objid.ID
	Conn     ConnID
	Watcher  wire.WatchInfo
	NotifyID uint64
	Notifier string
	Payload  []byte
	Errno    int32
	Result   wire.NotifyResult
}

// State is one PG's watches and notifies in progress.
type State struct {
	defaultTimeout time.Duration
	objects        map[objid.ID]*object
	notifies       map[uint64]*notify
	held           bool // no watch expires (Hold)
}

type object struct {
	watchers map[wire.WatcherID]*watcher
}

type watcher struct {
	info    wire.WatchInfo
	conn    ConnID // 0 while its session is lost
	expires time.Time
}

type notify struct {
	id       uint64
	object   objid.ID
	notifier string
	payload  []byte
	deadline time.Time
	// waiting are the watchers that have not answered, each with the
	// session the notify was sent over (0: not sent yet).
	waiting  map[wire.WatcherID]ConnID
	acks     []wire.NotifyAck
	timedOut []wire.WatcherID
}

// New returns an empty State; defaultTimeout is the watch timeout of a
// watch that asks for none (osd_client_watch_timeout).
func New(defaultTimeout time.Duration) *State {
	return &State{defaultTimeout: defaultTimeout, objects: map[objid.ID]*object{}, notifies: map[uint64]*notify{}}
}

// SetDefaultTimeout changes the timeout of watches that ask for none
// (the option changed): a watch timed after this, at its registration,
// ping, reconnect or load, takes the new one; deadlines already set stay.
func (s *State) SetDefaultTimeout(d time.Duration) { s.defaultTimeout = d }

// Hold stops watches from expiring: the PG serves no ops (it peers, or
// fewer OSDs act than min_size), so its watchers' pings wait unanswered
// and their silence says nothing. As Ceph's primary, which times no
// watch out while its PG is not active. Notifies still time out.
func (s *State) Hold() { s.held = true }

// Release ends a Hold at now, the PG serving ops again: each watch has
// its timeout from now for its client to ping or reconnect, as the
// watches a new primary loads (Ceph's primary loads them at activation).
// Without a Hold it does nothing.
func (s *State) Release(now time.Time) {
	if !s.held {
		return
	}
	s.held = false
	for _, o := range s.objects {
		for _, w := range o.watchers {
			w.expires = maxTime(w.expires, now.Add(s.timeout(w.info)))
		}
	}
}

// Held reports whether watches are held from expiring (Hold).
func (s *State) Held() bool { return s.held }

// Loaded reports whether obj's persisted watches were loaded (Load), or
// registered since the State began.
func (s *State) Loaded(obj objid.ID) bool { return s.objects[obj] != nil }

// Load registers obj's persisted watches, once: each as a watch whose
// session is lost, so its client has the timeout from now to reconnect.
// A second Load of the same object does nothing.
func (s *State) Load(obj objid.ID, ws []wire.WatchInfo, now time.Time) {
	if s.objects[obj] != nil {
		return
	}
	o := s.object(obj)
	for _, w := range ws {
		o.watchers[w.WatcherID] = &watcher{info: w, expires: now.Add(s.timeout(w))}
	}
}

func (s *State) object(obj objid.ID) *object {
	o := s.objects[obj]
	if o == nil {
		o = &object{watchers: map[wire.WatcherID]*watcher{}}
		s.objects[obj] = o
	}
	return o
}

func (s *State) timeout(w wire.WatchInfo) time.Duration {
	if w.TimeoutSec == 0 {
		return s.defaultTimeout
	}
	return time.Duration(w.TimeoutSec) * time.Second
}

// Watch registers (or re-registers, after a reconnect) a watch on obj
// over conn: it is connected, its timeout starts again, and the notifies
// it has not acked go out now unless they went over conn already (a
// watcher may see a notify twice; its second ack is ignored).
func (s *State) Watch(obj objid.ID, w wire.WatchInfo, conn ConnID, now time.Time) []Action {
	o := s.object(obj)
	o.watchers[w.WatcherID] = &watcher{info: w, conn: conn, expires: now.Add(s.timeout(w))}
	var out []Action
	for _, n := range s.sortedNotifies() {
		if sent, ok := n.waiting[w.WatcherID]; ok && n.object == obj && sent != conn {
			n.waiting[w.WatcherID] = conn
			out = append(out, n.send(w, conn))
		}
	}
	return out
}

// Unwatch ends a watch; notifies waiting for it no longer do.
func (s *State) Unwatch(obj objid.ID, id wire.WatcherID) []Action {
	if o := s.objects[obj]; o != nil {
		delete(o.watchers, id)
	}
	var out []Action
	for _, n := range s.sortedNotifies() {
		if _, ok := n.waiting[id]; ok && n.object == obj {
			delete(n.waiting, id)
			out = s.maybeComplete(n, out)
		}
	}
	return out
}

// Ping refreshes a watch's timeout. It returns ENOTCONN if obj has no
// such watch: it expired, or the client's reconnect is due.
func (s *State) Ping(obj objid.ID, id wire.WatcherID, now time.Time) int32 {
	o := s.objects[obj]
	if o == nil || o.watchers[id] == nil {
		return wire.ENOTCONN
	}
	w := o.watchers[id]
	w.expires = now.Add(s.timeout(w.info))
	return 0
}

// Watchers returns obj's watches in watcher order.
func (s *State) Watchers(obj objid.ID) []wire.WatchInfo {
	o := s.objects[obj]
	if o == nil {
		return nil
	}
	out := make([]wire.WatchInfo, 0, len(o.watchers))
	for _, w := range o.watchers {
		out = append(out, w.info)
	}
	slices.SortFunc(out, func(a, b wire.WatchInfo) int { return a.Compare(b.WatcherID) })
	return out
}

// Notify starts notify id on obj: it goes to every watcher connected now
// (the others get it when they reconnect) and completes by now+timeout.
// With no watcher it completes at once.
func (s *State) Notify(obj objid.ID, id uint64, notifier string, payload []byte, timeout time.Duration, now time.Time) []Action {
	n := &notify{id: id, object: obj, notifier: notifier, payload: payload, deadline: now.Add(timeout),
		waiting: map[wire.WatcherID]ConnID{}}
	s.notifies[id] = n
	var out []Action
	for _, w := range s.sortedWatchers(obj) {
		n.waiting[w.info.WatcherID] = w.conn
		if w.conn != 0 {
			out = append(out, n.send(w.info, w.conn))
		}
	}
	return s.maybeComplete(n, out)
}

// Ack records a watcher's answer to notify id (ignored if the notify is
// over or did not wait for that watcher).
func (s *State) Ack(id uint64, from wire.WatcherID, payload []byte) []Action {
	n := s.notifies[id]
	if n == nil {
		return nil
	}
	if _, ok := n.waiting[from]; !ok {
		return nil
	}
	delete(n.waiting, from)
	n.acks = append(n.acks, wire.NotifyAck{WatcherID: from, Payload: payload})
	return s.maybeComplete(n, nil)
}

// ConnLost marks the watches of session conn disconnected: each keeps
// its timeout, counted from now, for its client to reconnect.
func (s *State) ConnLost(conn ConnID, now time.Time) {
	for _, o := range s.objects {
		for _, w := range o.watchers {
			if w.conn == conn {
				w.conn = 0
				w.expires = maxTime(w.expires, now.Add(s.timeout(w.info)))
			}
		}
	}
}

// Evict ends at once the watches connected over the sessions in conns,
// whose clients the OSD map now blocklists (Ceph's OSD does the same
// with check_blocklisted_watchers): nothing is sent to them — a fenced
// client hears no more from the OSDs — their records are to be removed,
// and notifies waiting for them count them timed out.
func (s *State) Evict(conns map[ConnID]bool) []Action {
	var out []Action
	if len(conns) == 0 {
		return nil
	}
	for _, obj := range s.sortedObjects() {
		for _, w := range s.sortedWatchers(obj) {
			if w.conn == 0 || !conns[w.conn] {
				continue
			}
			delete(s.objects[obj].watchers, w.info.WatcherID)
			out = append(out, Action{Kind: ActionRemoveWatch, Object: obj, Watcher: w.info})
			out = s.dropWaiting(obj, w.info.WatcherID, out)
		}
	}
	return out
}

// dropWaiting counts watcher id of obj timed out in the notifies waiting
// for it.
func (s *State) dropWaiting(obj objid.ID, id wire.WatcherID, out []Action) []Action {
	for _, n := range s.sortedNotifies() {
		if _, ok := n.waiting[id]; ok && n.object == obj {
			delete(n.waiting, id)
			n.timedOut = append(n.timedOut, id)
			out = s.maybeComplete(n, out)
		}
	}
	return out
}

// Deleted drops obj's watches, its object having been deleted: each
// connected watcher is told (ENOTCONN), and the notifies on obj complete
// with the watchers that had not answered as timed out.
func (s *State) Deleted(obj objid.ID) []Action {
	var out []Action
	for _, w := range s.sortedWatchers(obj) {
		if w.conn != 0 {
			out = append(out, Action{Kind: ActionSendError, Object: obj, Conn: w.conn, Watcher: w.info, Errno: wire.ENOTCONN})
		}
	}
	delete(s.objects, obj)
	for _, n := range s.sortedNotifies() {
		if n.object == obj {
			out = s.complete(n, out)
		}
	}
	return out
}

// Tick expires the watches not heard from within their timeout, unless
// held (Hold): a connected watcher is told (ENOTCONN), as Ceph's primary
// sends a disconnect, for it must watch again and re-read; the records
// are to be removed; notifies waiting for them count them timed out.
// It also completes the notifies whose timeout passed.
func (s *State) Tick(now time.Time) []Action {
	var out []Action
	if !s.held {
		out = s.expire(now, out)
	}
	for _, n := range s.sortedNotifies() {
		if !now.Before(n.deadline) {
			out = s.complete(n, out)
		}
	}
	return out
}

// expire ends the watches whose timeout passed by now (Tick).
func (s *State) expire(now time.Time, out []Action) []Action {
	for _, obj := range s.sortedObjects() {
		for _, w := range s.sortedWatchers(obj) {
			if now.Before(w.expires) {
				continue
			}
			delete(s.objects[obj].watchers, w.info.WatcherID)
			if w.conn != 0 {
				out = append(out, Action{Kind: ActionSendError, Object: obj, Conn: w.conn, Watcher: w.info, Errno: wire.ENOTCONN})
			}
			out = append(out, Action{Kind: ActionRemoveWatch, Object: obj, Watcher: w.info})
			out = s.dropWaiting(obj, w.info.WatcherID, out)
		}
	}
	return out
}

// Deadline returns when Tick next has something to do: the earliest
// watch expiry (none while held) or notify timeout; false if nothing is
// pending.
func (s *State) Deadline() (time.Time, bool) {
	var d time.Time
	ok := false
	take := func(t time.Time) {
		if !ok || t.Before(d) {
			d, ok = t, true
		}
	}
	for _, o := range s.objects {
		for _, w := range o.watchers {
			if !s.held {
				take(w.expires)
			}
		}
	}
	for _, n := range s.notifies {
		take(n.deadline)
	}
	return d, ok
}

// Reset forgets everything, the PG's interval having ended, and returns
// the ids of the notifies in progress: their notifiers resend them to
// the new primary, which loads the watches from the objects again.
func (s *State) Reset() []uint64 {
	ids := make([]uint64, 0, len(s.notifies))
	for _, n := range s.sortedNotifies() {
		ids = append(ids, n.id)
	}
	clear(s.objects)
	clear(s.notifies)
	return ids
}

// Empty reports whether the State holds no watch and no notify.
func (s *State) Empty() bool {
	for _, o := range s.objects {
		if len(o.watchers) > 0 {
			return false
		}
	}
	return len(s.notifies) == 0
}

func (n *notify) send(w wire.WatchInfo, conn ConnID) Action {
	return Action{Kind: ActionSendNotify, Object: n.object, Conn: conn, Watcher: w, NotifyID: n.id,
		Notifier: n.notifier, Payload: n.payload}
}

// maybeComplete completes n if no watcher is left to wait for.
func (s *State) maybeComplete(n *notify, out []Action) []Action {
	if len(n.waiting) > 0 {
		return out
	}
	return s.complete(n, out)
}

// complete ends n: the watchers still waited for have timed out.
func (s *State) complete(n *notify, out []Action) []Action {
	for id := range n.waiting {
		n.timedOut = append(n.timedOut, id)
	}
	delete(s.notifies, n.id)
	r := wire.NotifyResult{Acks: n.acks, TimedOut: n.timedOut}
	slices.SortFunc(r.Acks, func(a, b wire.NotifyAck) int { return a.Compare(b.WatcherID) })
	slices.SortFunc(r.TimedOut, wire.WatcherID.Compare)
	return append(out, Action{Kind: ActionCompleteNotify, Object: n.object, NotifyID: n.id, Result: r})
}

func (s *State) sortedNotifies() []*notify {
	ns := make([]*notify, 0, len(s.notifies))
	for _, n := range s.notifies {
		ns = append(ns, n)
	}
	slices.SortFunc(ns, func(a, b *notify) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	return ns
}

func (s *State) sortedWatchers(obj objid.ID) []*watcher {
	o := s.objects[obj]
	if o == nil {
		return nil
	}
	ws := make([]*watcher, 0, len(o.watchers))
	for _, w := range o.watchers {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b *watcher) int { return a.info.Compare(b.info.WatcherID) })
	return ws
}

func (s *State) sortedObjects() []objid.ID {
	ids := make([]objid.ID, 0, len(s.objects))
	for id := range s.objects {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, objid.Compare)
	return ids
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
