package server

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// A session's life in the table: open, renewed, stale after the
// timeout, live again on renewal, closed by the rank after the
// autoclose time (Ceph's session_timeout and session_autoclose).
func TestSessionsLifecycle(t *testing.T) {
	s := NewSessions(60*time.Second, 300*time.Second)
	type step struct {
		at    time.Duration
		do    string // open, renew, close, tick
		c     ClientID
		want  []SessionChange
		state SessionState // of c after the step (0: none)
	}
	steps := []step{
		{0, "open", 7, nil, SessionOpen},
		{10 * time.Second, "open", 8, nil, SessionOpen},
		{59 * time.Second, "tick", 7, nil, SessionOpen},
		{60 * time.Second, "tick", 7, []SessionChange{{ChangeStale, 7}}, SessionStale},
		{61 * time.Second, "tick", 7, nil, SessionStale}, // reported once
		{70 * time.Second, "tick", 8, []SessionChange{{ChangeStale, 8}}, SessionStale},
		{80 * time.Second, "renew", 7, nil, SessionOpen},
		{310 * time.Second, "tick", 8, []SessionChange{{ChangeStale, 7}, {ChangeAutoclose, 8}}, 0},
		{379 * time.Second, "tick", 7, nil, SessionStale},
		{380 * time.Second, "open", 7, nil, SessionOpen}, // a client that asks again renews
		{390 * time.Second, "close", 7, nil, 0},
		{1000 * time.Second, "tick", 7, nil, 0},
	}
	for i, st := range steps {
		now := t0.Add(st.at)
		var got []SessionChange
		switch st.do {
		case "open":
			s.Open(st.c, "client.admin", "/", now)
		case "renew":
			if ok, wasStale := s.Renew(st.c, now); !ok || !wasStale {
				t.Fatalf("step %d: renew: ok %v, was stale %v", i, ok, wasStale)
			}
		case "close":
			if !s.Close(st.c) {
				t.Fatalf("step %d: close found no session", i)
			}
		case "tick":
			got = s.Tick(now)
		}
		if !slices.Equal(got, st.want) {
			t.Fatalf("step %d (%s at %v): changes %v, want %v", i, st.do, st.at, got, st.want)
		}
		ss, ok := s.Get(st.c)
		if (st.state == 0) == ok || ok && ss.State != st.state {
			t.Fatalf("step %d: client %d: %v %v, want %v", i, st.c, ok, ss.State, st.state)
		}
	}
	if s.Len() != 0 {
		t.Fatalf("sessions left: %v", s.List())
	}
}

// An open of an existing session is not new; an autoclose shorter than
// the timeout is raised to it.
func TestSessionsOpenTwiceAndTimeouts(t *testing.T) {
	s := NewSessions(10*time.Second, 5*time.Second)
	if !s.Open(1, "client.a", "/", t0) || s.Open(1, "client.a", "/", t0) {
		t.Fatal("the first open must be new and the second not")
	}
	if ok, _ := s.Renew(2, t0); ok {
		t.Fatal("renewed a session that does not exist")
	}
	if got := s.Tick(t0.Add(6 * time.Second)); len(got) != 0 {
		t.Fatalf("past the autoclose asked, before the timeout: %v (autoclose below the timeout must be raised to it)", got)
	}
	if got := s.Tick(t0.Add(10 * time.Second)); !slices.Equal(got, []SessionChange{{ChangeAutoclose, 1}}) {
		t.Fatalf("at the timeout: %v", got)
	}
}

// The reconnect phase ends when every client of the session map has
// reported, or at the deadline with those missing named.
func TestReconnectWait(t *testing.T) {
	w := newReconnectWait([]ClientID{9, 4}, t0, 10*time.Second)
	if done, missing := w.Done(t0); done || !slices.Equal(missing, []ClientID{4, 9}) {
		t.Fatalf("at start: %v %v", done, missing)
	}
	w.Reported(4)
	w.Reported(5) // not expected: ignored
	if w.Expected(5) || !w.Expected(9) {
		t.Fatal("Expected")
	}
	if done, missing := w.Done(t0.Add(9 * time.Second)); done || !slices.Equal(missing, []ClientID{9}) {
		t.Fatalf("before the deadline: %v %v", done, missing)
	}
	if done, missing := w.Done(t0.Add(10 * time.Second)); !done || !slices.Equal(missing, []ClientID{9}) {
		t.Fatalf("at the deadline: %v %v", done, missing)
	}
	w.Reported(9)
	if done, missing := w.Done(t0); !done || len(missing) != 0 {
		t.Fatalf("all reported: %v %v", done, missing)
	}
	if done, _ := newReconnectWait(nil, t0, time.Second).Done(t0); !done {
		t.Fatal("no clients to wait for must be done at once")
	}
}

// The previous holder of a rank is the last other incarnation seen
// holding it; the daemon itself never is.
func TestHolders(t *testing.T) {
	h := newHolders()
	m := mdsmap.New()
	m.Daemons[1] = &mdsmap.Daemon{GID: 1, Name: "a", Addr: "10.0.0.1:6800", Nonce: 77, State: mdsmap.StateActive, FS: 1, Rank: 0}
	m.Daemons[2] = &mdsmap.Daemon{GID: 2, Name: "b", Addr: "10.0.0.2:6800", Nonce: 88, State: mdsmap.StateStandby, Rank: mdsmap.NoRank}
	h.Observe(m, 2)
	m2 := mdsmap.New()
	m2.Daemons[2] = &mdsmap.Daemon{GID: 2, Name: "b", Addr: "10.0.0.2:6800", Nonce: 88, State: mdsmap.StateReplay, FS: 1, Rank: 0}
	h.Observe(m2, 2)
	d, ok := h.Previous(1, 0)
	if !ok || d.GID != 1 || FenceAddr(d) != "10.0.0.1:6800/77" {
		t.Fatalf("previous holder: %v %+v %s", ok, d, FenceAddr(d))
	}
	if _, ok := h.Previous(1, 1); ok {
		t.Fatal("rank 1 was never held")
	}
	if got := ClientFenceAddr(4123, ""); got != "client.gid.4123" {
		t.Fatal(got)
	}
	if got := ClientFenceAddr(4123, "client.admin/5eed"); got != "client.admin/5eed" {
		t.Fatal(got)
	}
}

// A client may name only its own entity's RADOS instance as what fences
// it: never an address or host, which would let an evicted client get
// someone else blocklisted.
func TestCheckInstance(t *testing.T) {
	for _, c := range []struct {
		entity, instance string
		ok               bool
	}{
		{"client.admin", "", true},
		{"client.admin", "client.admin/1f2e3d4c5b6a7988", true},
		{"client.admin", "client.admin/0", true},
		{"client.admin", "client.bob/1f", false},
		{"client.admin", "127.0.0.1", false},
		{"client.admin", "127.0.0.1:6800/5", false},
		{"client.admin", "client.admin/", false},
		{"client.admin", "client.admin/xyz", false},
		{"client.admin", "client.admin/1F", false},
		{"client.admin", "client.admin/11112222333344445", false},
		{"client.admin", "client.admin/1 2", false},
	} {
		if err := checkInstance(c.entity, c.instance); (err == nil) != c.ok {
			t.Errorf("%s naming %q: %v, want ok %v", c.entity, c.instance, err, c.ok)
		}
	}
}

// A client key's mds caps limit the roots it may mount.
func TestCheckRoot(t *testing.T) {
	for _, c := range []struct {
		caps auth.Caps
		root string
		ok   bool
	}{
		{nil, "/", true},
		{auth.AllCaps, "/any", true},
		{auth.Caps{"mds": "allow rw path=/home"}, "/home/alice", true},
		{auth.Caps{"mds": "allow rw path=/home"}, "/", false},
		{auth.Caps{"mds": "allow rw path=/home"}, "", false},
		{auth.Caps{"mon": "allow r"}, "/", false},
	} {
		if err := checkRoot(c.caps, c.root); (err == nil) != c.ok {
			t.Errorf("caps %v root %q: %v, want ok %v", c.caps, c.root, err, c.ok)
		}
	}
}

func TestSessionRecordRoundTrip(t *testing.T) {
	r := sessionRecord{Client: 4123, Name: "client.admin", Root: "/home", Instance: "client.admin/abc"}
	got, err := decodeSessionRecord(r.encode())
	if err != nil || got != r {
		t.Fatalf("%+v %v", got, err)
	}
	// A record of version 1 (before Instance) still decodes.
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uvarint(4123)
	e.String("client.admin")
	e.String("/home")
	e.End(mk)
	if got, err := decodeSessionRecord(e.Data()); err != nil || got != (sessionRecord{Client: 4123, Name: "client.admin", Root: "/home"}) {
		t.Fatalf("version 1 record: %+v %v", got, err)
	}
	if _, err := decodeSessionRecord(sessionRecord{Name: "x"}.encode()); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatalf("client 0: %v", err)
	}
	if _, err := decodeSessionRecord(r.encode()[:5]); err == nil {
		t.Fatal("a truncated record decoded")
	}
}

func FuzzDecodeSessionRecord(f *testing.F) {
	f.Add(sessionRecord{Client: 1, Name: "client.admin", Root: "/"}.encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeSessionRecord(b)
		if err != nil {
			return
		}
		again, err := decodeSessionRecord(r.encode())
		if err != nil || again != r {
			t.Fatalf("%+v does not round-trip: %+v %v", r, again, err)
		}
	})
}

// A full file system refuses every metadata update but deletes,
// truncates and locks (Ceph's rule), and never a read.
func TestTakesSpace(t *testing.T) {
	for _, c := range []struct {
		req  wire.ClientRequest
		want bool
	}{
		{wire.ClientRequest{Op: wire.MetaLookup}, false},
		{wire.ClientRequest{Op: wire.MetaGetattr}, false},
		{wire.ClientRequest{Op: wire.MetaReaddir}, false},
		{wire.ClientRequest{Op: wire.MetaOpen}, false},
		{wire.ClientRequest{Op: wire.MetaUnlink}, false},
		{wire.ClientRequest{Op: wire.MetaRmdir}, false},
		{wire.ClientRequest{Op: wire.MetaSetFileLock}, false},
		{wire.ClientRequest{Op: wire.MetaSetattr, Mask: wire.AttrSize}, false},
		{wire.ClientRequest{Op: wire.MetaSetattr, Mask: wire.AttrSize | wire.AttrMtime | wire.AttrCtime}, false},
		{wire.ClientRequest{Op: wire.MetaSetattr, Mask: wire.AttrMode}, true},
		{wire.ClientRequest{Op: wire.MetaSetattr, Mask: wire.AttrSize | wire.AttrUID}, true},
		{wire.ClientRequest{Op: wire.MetaCreate}, true},
		{wire.ClientRequest{Op: wire.MetaMkdir}, true},
		{wire.ClientRequest{Op: wire.MetaSymlink}, true},
		{wire.ClientRequest{Op: wire.MetaLink}, true},
		{wire.ClientRequest{Op: wire.MetaRename}, true},
		{wire.ClientRequest{Op: wire.MetaSetxattr}, true},
	} {
		if got := takesSpace(&c.req); got != c.want {
			t.Errorf("%s mask %#x: takesSpace %v, want %v", c.req.Op, c.req.Mask, got, c.want)
		}
	}
}
