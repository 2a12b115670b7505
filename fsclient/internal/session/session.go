package session

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// Errors a request or the session fails with.
var (
	// ErrRejected: the MDS refused the session (its reason follows).
	ErrRejected = errors.New("session: rejected by the MDS")
	// ErrClosed: the session was closed (unmount, or by the MDS).
	ErrClosed = errors.New("session: closed")
)

// State is the session's state.
type State uint8

// Session states.
const (
	// Idle: no MDS holds the rank, or none is known yet (requests wait).
	Idle State = iota
	// Opening: the open was sent, no answer yet.
	Opening
	// Open: requests are sent as they come.
	Open
	// Stale: the MDS marked the session stale (caps are suspended until
	// a renewal is answered); requests are still sent.
	Stale
	// Reconnecting: a new MDS holds the rank and is in reconnect; the
	// client has reported its caps and replayed its unsafe requests,
	// and waits for the rank to become active.
	Reconnecting
	// Closing: the close was sent.
	Closing
	// Closed: for good (closed, rejected); every request failed.
	Closed
)

var stateNames = [...]string{"idle", "opening", "open", "stale", "reconnecting", "closing", "closed"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Holder is the daemon the MDS map gives the rank to: its gid (a new
// gid is a new incarnation), address and state.
type Holder struct {
	GID   uint64
	Name  string // the daemon's name: its entity is "mds.<Name>"
	Addr  string
	State HolderState
}

// HolderState is what the session needs of the holder's MDS-map state.
type HolderState uint8

// Holder states.
const (
	HolderNone      HolderState = iota // no daemon holds the rank (failed)
	HolderReplay                       // replaying the journal: not yet talking to clients
	HolderReconnect                    // taking clients' reconnects
	HolderRejoin                       // rejoin, clientreplay: replays accepted, new requests not yet
	HolderActive                       // serving
	HolderStopping                     // handing its subtrees away: still serving
)

// Config is the client's identity and tuning.
type Config struct {
	Client   string // entity name, "client.admin"
	ClientID uint64 // the cephx global id
	Hostname string
	Root     string // the mount's root path
	Version  string
	Features uint64
	// Instance is the RADOS instance the client's file data goes
	// through (rados.Conn.Instance): the MDS fences it on eviction.
	Instance string
}

// Session is the client's session with one rank and its requests.
type Session struct {
	cfg    Config
	state  State
	holder Holder // the daemon the session is with (GID 0: none yet)
	// opened: a session was ever open with some incarnation of the
	// rank; a new incarnation then takes a reconnect, not an open.
	opened bool
	// mustReconnect: the holder changed under an opened session, which
	// the next holder must take a reconnect for.
	mustReconnect bool

	timeout   time.Duration // the MDS's session timeout
	renewSeq  uint64        // the last renewal sent
	renewSent time.Time     // when it was sent
	// capsUntil: caps are valid until then (a renewal's send time plus
	// the timeout, once answered).
	capsUntil time.Time
	renewTime map[uint64]time.Time // renewals in flight: seq -> send time

	nextTid uint64
	reqs    map[uint64]*request
	out     []Action
}

type request struct {
	msg    *wire.ClientRequest
	unsafe bool // an unsafe reply came: done for the caller, not yet journaled
	sent   bool // sent to the current holder
}

// New returns an idle session; nothing is sent until the map names a
// holder (MapChanged).
func New(cfg Config) *Session {
	return &Session{cfg: cfg, reqs: map[uint64]*request{}, renewTime: map[uint64]time.Time{}, nextTid: 1}
}

// State returns the session's state.
func (s *Session) State() State { return s.state }

// Holder returns the daemon the session is with.
func (s *Session) Holder() Holder { return s.holder }

// Pending returns how many requests have no safe reply yet.
func (s *Session) Pending() int { return len(s.reqs) }

// CapsValid reports whether the caps the client holds may be used at
// now: the session is open and its last answered renewal (or the open)
// has not timed out.
func (s *Session) CapsValid(now time.Time) bool {
	return (s.state == Open || s.state == Reconnecting) && now.Before(s.capsUntil)
}

// Take returns the actions the events since the last Take produced, in
// order, and forgets them.
func (s *Session) Take() []Action {
	out := s.out
	s.out = nil
	return out
}

func (s *Session) emit(a Action) { s.out = append(s.out, a) }

// oldestTid is the oldest request without a safe reply (0: none).
func (s *Session) oldestTid() uint64 {
	var oldest uint64
	for tid := range s.reqs {
		if oldest == 0 || tid < oldest {
			oldest = tid
		}
	}
	return oldest
}

// sortedTids returns the tids of the requests matching keep, in order.
func (s *Session) sortedTids(keep func(*request) bool) []uint64 {
	var tids []uint64
	for tid, r := range s.reqs {
		if keep(r) {
			tids = append(tids, tid)
		}
	}
	slices.Sort(tids)
	return tids
}

// accepting reports whether new requests may be sent now.
func (s *Session) accepting() bool {
	return (s.state == Open || s.state == Stale) &&
		(s.holder.State == HolderActive || s.holder.State == HolderStopping)
}

// send sends request tid as a new attempt, with flags.
func (s *Session) send(tid uint64, flags uint32) {
	r := s.reqs[tid]
	m := *r.msg
	m.Attempt++
	m.Flags = flags
	m.OldestTid = s.oldestTid()
	r.msg.Attempt = m.Attempt
	r.sent = true
	s.emit(Action{Kind: SendRequest, Request: &m})
}

// Submit adds a metadata request (its Tid, Attempt and OldestTid are
// set here) and returns its tid; it is sent at once if the session can
// take it, else when it can.
func (s *Session) Submit(req *wire.ClientRequest) uint64 {
	tid := s.nextTid
	s.nextTid++
	m := *req
	m.Tid, m.Attempt, m.Flags = tid, 0, 0
	s.reqs[tid] = &request{msg: &m}
	if s.state == Closed {
		s.fail(tid, ErrClosed)
		return tid
	}
	if s.accepting() {
		s.send(tid, 0)
	}
	return tid
}

// fail ends request tid with err.
func (s *Session) fail(tid uint64, err error) {
	delete(s.reqs, tid)
	s.emit(Action{Kind: RequestFailed, Tid: tid, Err: err})
}

// Reply takes the MDS's reply to a request. The first reply (unsafe or
// safe) completes it for the caller (RequestDone); a safe reply after
// an unsafe one reports RequestSafe; a safe reply forgets it. A reply
// to an unknown tid (a duplicate, a reply from before a failover) is
// dropped.
func (s *Session) Reply(m *wire.ClientReply) {
	r, ok := s.reqs[m.Tid]
	if !ok {
		return
	}
	switch {
	case !m.Safe && r.unsafe: // a repeated unsafe reply
		return
	case !m.Safe:
		r.unsafe = true
		s.emit(Action{Kind: RequestDone, Tid: m.Tid, Reply: m})
	case r.unsafe:
		delete(s.reqs, m.Tid)
		s.emit(Action{Kind: RequestSafe, Tid: m.Tid})
	default:
		delete(s.reqs, m.Tid)
		s.emit(Action{Kind: RequestDone, Tid: m.Tid, Reply: m})
		s.emit(Action{Kind: RequestSafe, Tid: m.Tid})
	}
}

// Forward takes a rank's word that another rank owns a request's path.
// With one active rank (part I) the request is resent to the session's
// rank with the forward count it carries, as Ceph's client does when
// the rank it is told is the one it has.
func (s *Session) Forward(f wire.ClientRequestForward) {
	r, ok := s.reqs[f.Tid]
	if !ok || r.unsafe {
		return
	}
	r.msg.NumFwd = f.NumFwd
	if s.accepting() {
		s.send(f.Tid, 0)
	} else {
		r.sent = false
	}
}
