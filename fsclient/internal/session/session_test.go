package session

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// step is one event at an offset from t0 and the actions it must make.
type step struct {
	at   time.Duration
	do   func(s *Session, now time.Time)
	want []string
}

func run(t *testing.T, steps []step) *Session {
	t.Helper()
	s := New(Config{Client: "client.a", ClientID: 4100, Root: "/"})
	for i, st := range steps {
		st.do(s, t0.Add(st.at))
		var got []string
		for _, a := range s.Take() {
			got = append(got, a.String())
		}
		if !slices.Equal(got, st.want) {
			t.Fatalf("step %d: actions\n  %s\nwant\n  %s", i, strings.Join(got, "\n  "), strings.Join(st.want, "\n  "))
		}
	}
	return s
}

func holder(gid uint64, st HolderState) func(*Session, time.Time) {
	return func(s *Session, now time.Time) {
		s.MapChanged(Holder{GID: gid, Addr: "10.0.0.1:6800", State: st}, now)
	}
}

func sessionMsg(op wire.SessionOp, seq uint64) func(*Session, time.Time) {
	return func(s *Session, now time.Time) {
		s.SessionMsg(wire.ClientSession{Op: op, Seq: seq, TimeoutSec: 60}, now)
	}
}

func submit(op wire.MetaOp) func(*Session, time.Time) {
	return func(s *Session, _ time.Time) { s.Submit(&wire.ClientRequest{Op: op}) }
}

func reply(tid uint64, safe bool) func(*Session, time.Time) {
	return func(s *Session, _ time.Time) {
		s.Reply(&wire.ClientReply{Tid: tid, Op: wire.MetaCreate, Safe: safe})
	}
}

var opened = []step{
	{do: holder(7, HolderActive), want: []string{"connect gid 7 10.0.0.1:6800", `send session request_open seq 0 client client.a id 4100 root "/"`}},
	{do: sessionMsg(wire.SessionOpen, 0)},
}

// Requests wait for a session; the open sends them; replies complete
// them at the first answer and forget them at the safe one.
func TestRequestsUnsafeThenSafe(t *testing.T) {
	s := run(t, []step{
		{do: submit(wire.MetaMkdir)}, // no holder yet: waits
		{do: holder(7, HolderActive), want: []string{"connect gid 7 10.0.0.1:6800", `send session request_open seq 0 client client.a id 4100 root "/"`}},
		{do: submit(wire.MetaCreate)}, // opening: waits
		{do: sessionMsg(wire.SessionOpen, 0), want: []string{
			"send request tid 1 mkdir attempt 1 oldest 1",
			"send request tid 2 create attempt 1 oldest 1"}},
		{do: reply(2, false), want: []string{"done tid 2 unsafe result 0"}},
		{do: reply(2, false)}, // a duplicate
		{do: reply(1, true), want: []string{"done tid 1 safe result 0", "safe tid 1"}},
		{do: submit(wire.MetaLookup), want: []string{"send request tid 3 lookup attempt 1 oldest 2"}},
		{do: reply(2, true), want: []string{"safe tid 2"}},
		{do: reply(2, true)}, // unknown now
	})
	if s.Pending() != 1 {
		t.Fatalf("%d pending, want 1", s.Pending())
	}
}

// The session is renewed every third of its timeout; caps stay valid
// for the timeout from the last answered renewal's send; a stale
// session suspends them until a renewal is answered.
func TestRenewAndStale(t *testing.T) {
	s := run(t, append(opened,
		step{at: 19 * time.Second, do: (*Session).Tick},
		step{at: 20 * time.Second, do: (*Session).Tick, want: []string{"send session request_renewcaps seq 1"}},
		step{at: 21 * time.Second, do: (*Session).Tick},
		step{at: 22 * time.Second, do: sessionMsg(wire.SessionRenew, 1)},
	))
	if !s.CapsValid(t0.Add(79 * time.Second)) {
		t.Fatal("caps not valid 59 s after the answered renewal's send")
	}
	if s.CapsValid(t0.Add(80 * time.Second)) {
		t.Fatal("caps valid a timeout after the last answered renewal's send")
	}
	run(t, append(opened,
		step{at: 30 * time.Second, do: sessionMsg(wire.SessionStale, 0), want: []string{"caps-stale", "send session request_renewcaps seq 1"}},
		step{at: 31 * time.Second, do: sessionMsg(wire.SessionRenew, 1), want: []string{"caps-renewed"}},
		step{at: 40 * time.Second, do: sessionMsg(wire.SessionRenew, 1)}, // old
	))
}

// A failover: the new daemon is in reconnect; the client reports its
// caps, replays the requests it had an unsafe reply for, and sends the
// others once the rank is active, keeping their tids (the first attempt
// may have reached the dead MDS).
func TestFailoverReconnectReplay(t *testing.T) {
	run(t, append(opened,
		step{do: submit(wire.MetaCreate), want: []string{"send request tid 1 create attempt 1 oldest 1"}},
		step{do: submit(wire.MetaUnlink), want: []string{"send request tid 2 unlink attempt 1 oldest 1"}},
		step{do: submit(wire.MetaMkdir), want: []string{"send request tid 3 mkdir attempt 1 oldest 1"}},
		step{do: reply(1, false), want: []string{"done tid 1 unsafe result 0"}},
		step{do: reply(3, false), want: []string{"done tid 3 unsafe result 0"}},
		step{do: reply(3, true), want: []string{"safe tid 3"}},
		step{do: holder(0, HolderNone)},  // the rank failed
		step{do: submit(wire.MetaRmdir)}, // waits
		step{do: holder(9, HolderReplay)},
		step{do: holder(9, HolderReconnect), want: []string{
			"connect gid 9 10.0.0.1:6800",
			`send session request_open seq 0 client client.a id 4100 root "/"`,
			"send-reconnect",
			"send request tid 1 create attempt 2 oldest 1 replay"}},
		step{do: holder(9, HolderRejoin)},
		step{do: reply(1, true), want: []string{"safe tid 1"}},
		step{do: holder(9, HolderActive), want: []string{
			"send request tid 2 unlink attempt 2 oldest 2",
			"send request tid 4 rmdir attempt 1 oldest 2"}},
	))
}

// A client that missed the reconnect window loses its caps and opens a
// new session; its requests are resent there.
func TestFailoverMissedReconnect(t *testing.T) {
	run(t, append(opened,
		step{do: submit(wire.MetaCreate), want: []string{"send request tid 1 create attempt 1 oldest 1"}},
		step{do: holder(9, HolderActive), want: []string{
			"caps-lost",
			"connect gid 9 10.0.0.1:6800",
			`send session request_open seq 0 client client.a id 4100 root "/"`}},
		step{do: sessionMsg(wire.SessionOpen, 0), want: []string{"send request tid 1 create attempt 2 oldest 1"}},
	))
}

// A lost connection to the same daemon: connect again, open the
// session on the new connection, then replay unsafe requests and resend
// the rest.
func TestConnectionLost(t *testing.T) {
	run(t, append(opened,
		step{do: submit(wire.MetaCreate), want: []string{"send request tid 1 create attempt 1 oldest 1"}},
		step{do: submit(wire.MetaLookup), want: []string{"send request tid 2 lookup attempt 1 oldest 1"}},
		step{do: reply(1, false), want: []string{"done tid 1 unsafe result 0"}},
		step{do: (*Session).ConnectionLost, want: []string{
			"connect gid 7 10.0.0.1:6800", `send session request_open seq 0 client client.a id 4100 root "/"`}},
		step{do: submit(wire.MetaMkdir)}, // waits for the open
		step{do: sessionMsg(wire.SessionOpen, 0), want: []string{
			"send request tid 1 create attempt 2 oldest 1 replay",
			"send request tid 2 lookup attempt 2 oldest 1",
			"send request tid 3 mkdir attempt 1 oldest 1"}},
	))
}

// Forwards resend with the forward count; session messages the MDS
// sends are answered; a rejection or a close fails what is pending.
func TestForwardFlushRecallClose(t *testing.T) {
	run(t, append(opened,
		step{do: submit(wire.MetaLookup), want: []string{"send request tid 1 lookup attempt 1 oldest 1"}},
		step{do: func(s *Session, _ time.Time) { s.Forward(wire.ClientRequestForward{Tid: 1, Dest: 0, NumFwd: 1}) },
			want: []string{"send request tid 1 lookup attempt 2 oldest 1 fwd 1"}},
		step{do: sessionMsg(wire.SessionFlushMsg, 5), want: []string{"send session flushmsg_ack seq 5"}},
		step{do: func(s *Session, now time.Time) {
			s.SessionMsg(wire.ClientSession{Op: wire.SessionRecallState, MaxCaps: 100}, now)
		}, want: []string{"recall caps to 100"}},
		step{do: sessionMsg(wire.SessionRequestFlush, 0), want: []string{"flush-caps"}},
		step{do: func(s *Session, _ time.Time) { s.Close() }, want: []string{"send session request_close seq 0"}},
		step{do: sessionMsg(wire.SessionClose, 0), want: []string{
			"failed tid 1: session: closed", "caps-lost", "session ended: session: closed"}},
		step{do: submit(wire.MetaLookup), want: []string{"failed tid 2: session: closed"}},
	))
	run(t, []step{
		{do: submit(wire.MetaLookup)},
		{do: holder(7, HolderActive), want: []string{"connect gid 7 10.0.0.1:6800", `send session request_open seq 0 client client.a id 4100 root "/"`}},
		{do: func(s *Session, now time.Time) {
			s.SessionMsg(wire.ClientSession{Op: wire.SessionReject, Reason: "blocklisted"}, now)
		}, want: []string{"failed tid 1: session: rejected by the MDS: blocklisted", "caps-lost",
			"session ended: session: rejected by the MDS: blocklisted"}},
	})
}

// A second failover during the reconnect: the next daemon takes the
// reconnect again, with the same replays.
func TestFailoverDuringReconnect(t *testing.T) {
	run(t, append(opened,
		step{do: submit(wire.MetaCreate), want: []string{"send request tid 1 create attempt 1 oldest 1"}},
		step{do: reply(1, false), want: []string{"done tid 1 unsafe result 0"}},
		step{do: holder(9, HolderReconnect), want: []string{
			"connect gid 9 10.0.0.1:6800", `send session request_open seq 0 client client.a id 4100 root "/"`, "send-reconnect", "send request tid 1 create attempt 2 oldest 1 replay"}},
		step{do: holder(11, HolderReplay)},
		step{do: holder(11, HolderReconnect), want: []string{
			"connect gid 11 10.0.0.1:6800", `send session request_open seq 0 client client.a id 4100 root "/"`, "send-reconnect", "send request tid 1 create attempt 3 oldest 1 replay"}},
		step{do: holder(11, HolderActive)},
		step{do: reply(1, true), want: []string{"safe tid 1"}},
		step{do: submit(wire.MetaLookup), want: []string{"send request tid 2 lookup attempt 1 oldest 2"}},
	))
}

// A new rank that did not expect the client refuses its reconnect: the
// caps are lost, and the client opens a new session, where its requests
// are resent (the unsafe one as a replay: the journal may hold it).
func TestReconnectRefused(t *testing.T) {
	run(t, append(opened,
		step{do: submit(wire.MetaCreate), want: []string{"send request tid 1 create attempt 1 oldest 1"}},
		step{do: reply(1, false), want: []string{"done tid 1 unsafe result 0"}},
		step{do: submit(wire.MetaLookup), want: []string{"send request tid 2 lookup attempt 1 oldest 1"}},
		step{do: holder(9, HolderReconnect), want: []string{
			"connect gid 9 10.0.0.1:6800", `send session request_open seq 0 client client.a id 4100 root "/"`,
			"send-reconnect", "send request tid 1 create attempt 2 oldest 1 replay"}},
		step{do: sessionMsg(wire.SessionClose, 0), want: []string{
			"caps-lost", `send session request_open seq 0 client client.a id 4100 root "/"`}},
		step{do: holder(9, HolderActive)},
		step{do: sessionMsg(wire.SessionOpen, 0), want: []string{
			"send request tid 1 create attempt 3 oldest 1 replay",
			"send request tid 2 lookup attempt 2 oldest 1"}},
	))
}
