package server

import (
	"slices"
	"time"
)

// SessionState is where a client's session is.
type SessionState uint8

// Session states. A session is open from the client's request_open (or
// its reconnect after a takeover) until it closes; it is stale while the
// client has not renewed it for the file system's session timeout (its
// caps suspended, not revoked), and it is closed by the rank — the
// client evicted — once it has not renewed for the autoclose time.
const (
	SessionOpen SessionState = iota + 1
	SessionStale
)

func (s SessionState) String() string {
	switch s {
	case SessionOpen:
		return "open"
	case SessionStale:
		return "stale"
	}
	return "none"
}

// Session is one client's session with this rank.
type Session struct {
	Client ClientID
	Name   string // the client's entity name (client.admin)
	Root   string // the mount's root
	State  SessionState
	// Opened and Renewed: when it opened, when the client last
	// renewed it (or sent anything that proves it alive).
	Opened, Renewed time.Time
}

// SessionChangeKind says what Tick did to a session.
type SessionChangeKind uint8

// Session changes.
const (
	// ChangeStale: silent for the session timeout; tell the client
	// (wire.SessionStale).
	ChangeStale SessionChangeKind = iota + 1
	// ChangeAutoclose: silent for the autoclose time; the session is
	// gone: end it in the engine (locker.EndTimeout) and tell the
	// client if it can still hear.
	ChangeAutoclose
)

// SessionChange is one change Tick made.
type SessionChange struct {
	Kind   SessionChangeKind
	Client ClientID
}

// Sessions is the rank's session table, a pure state machine: events in
// (open, renew, close, tick with the time), changes out. It holds no
// lock: the Server serializes calls.
type Sessions struct {
	timeout, autoclose time.Duration
	m                  map[ClientID]*Session
}

// NewSessions returns an empty table with the file system's session
// timeout and autoclose time (mdsmap.FS's).
func NewSessions(timeout, autoclose time.Duration) *Sessions {
	s := &Sessions{m: map[ClientID]*Session{}}
	s.SetTimeouts(timeout, autoclose)
	return s
}

// SetTimeouts changes the timeouts (the operator changed the file
// system's session_timeout or session_autoclose). An autoclose shorter
// than the timeout is raised to it.
func (s *Sessions) SetTimeouts(timeout, autoclose time.Duration) {
	s.timeout, s.autoclose = timeout, max(autoclose, timeout)
}

// Timeout is the session timeout clients renew within.
func (s *Sessions) Timeout() time.Duration { return s.timeout }

// Open opens client's session, or renews it if it is open already
// (a client that lost its reply asks again); it reports whether the
// session is new.
func (s *Sessions) Open(client ClientID, name, root string, now time.Time) bool {
	if ss, ok := s.m[client]; ok {
		ss.State, ss.Renewed = SessionOpen, now
		return false
	}
	s.m[client] = &Session{Client: client, Name: name, Root: root, State: SessionOpen, Opened: now, Renewed: now}
	return true
}

// Renew renews client's session: ok is false without one; wasStale
// says that the client's caps are live again.
func (s *Sessions) Renew(client ClientID, now time.Time) (ok, wasStale bool) {
	ss, ok := s.m[client]
	if !ok {
		return false, false
	}
	wasStale = ss.State == SessionStale
	ss.State, ss.Renewed = SessionOpen, now
	return true, wasStale
}

// Close removes client's session and reports whether there was one.
func (s *Sessions) Close(client ClientID) bool {
	_, ok := s.m[client]
	delete(s.m, client)
	return ok
}

// Get returns client's session.
func (s *Sessions) Get(client ClientID) (Session, bool) {
	ss, ok := s.m[client]
	if !ok {
		return Session{}, false
	}
	return *ss, true
}

// Len is the number of sessions.
func (s *Sessions) Len() int { return len(s.m) }

// List returns the sessions in client order.
func (s *Sessions) List() []Session {
	out := make([]Session, 0, len(s.m))
	for _, ss := range s.m {
		out = append(out, *ss)
	}
	slices.SortFunc(out, func(a, b Session) int { return cmpClient(a.Client, b.Client) })
	return out
}

func cmpClient(a, b ClientID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Tick marks the sessions silent for the timeout stale and removes those
// silent for the autoclose time, in client order.
func (s *Sessions) Tick(now time.Time) []SessionChange {
	var out []SessionChange
	for _, ss := range s.List() {
		silent := now.Sub(ss.Renewed)
		switch {
		case silent >= s.autoclose:
			delete(s.m, ss.Client)
			out = append(out, SessionChange{Kind: ChangeAutoclose, Client: ss.Client})
		case silent >= s.timeout && ss.State == SessionOpen:
			s.m[ss.Client].State = SessionStale
			out = append(out, SessionChange{Kind: ChangeStale, Client: ss.Client})
		}
	}
	return out
}
