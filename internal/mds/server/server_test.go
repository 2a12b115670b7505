package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
	"github.com/cuttlestore/cuttle/rados"
)

// scriptMap is the monitors' side of the beacons, as the tests script
// it: publish sets what the next reply says; SetState is taken when the
// map's rules allow it (mdsmap.CanAdvance), as the monitors take it.
type scriptMap struct {
	poke    func()
	mu      sync.Mutex
	last    wire.MDSBeaconReply
	m       *mdsmap.Map
	states  []mdsmap.State
	seen    uint64 // the newest reply Next returned
	changed chan struct{}
}

func newScriptMap() *scriptMap { return &scriptMap{changed: make(chan struct{})} }

func (f *scriptMap) publish(rep wire.MDSBeaconReply, m *mdsmap.Map) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m != nil {
		f.m = m
	}
	f.publishLocked(rep)
}

func (f *scriptMap) publishLocked(rep wire.MDSBeaconReply) {
	rep.Seq = f.last.Seq + 1
	f.last = rep
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *scriptMap) Next(ctx context.Context, seq uint64) (wire.MDSBeaconReply, error) {
	for {
		f.mu.Lock()
		last, ch := f.last, f.changed
		f.mu.Unlock()
		if last.Seq > seq {
			f.mu.Lock()
			f.seen = max(f.seen, last.Seq)
			f.mu.Unlock()
			f.poke()
			return last, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return wire.MDSBeaconReply{}, ctx.Err()
		}
	}
}

func (f *scriptMap) Map() *mdsmap.Map {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m
}

func (f *scriptMap) SetState(st mdsmap.State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.states = append(f.states, st)
	if mdsmap.CanAdvance(f.last.State, st) {
		rep := f.last
		rep.State = st
		f.publishLocked(rep)
	}
}

func (f *scriptMap) reported() []mdsmap.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.states)
}

// recEngine is a test engine that records the calls the server makes,
// in order, and answers requests: a change unsafe then safe, a read
// once.
type recEngine struct {
	mu     sync.Mutex
	calls  []string
	outbox Outbox
	cfg    OpenConfig
	poke   func()
	late   []LateRelease // what Health reports
	// held, if set, takes the reply functions of getattrs instead of
	// answering them (requests in flight).
	held chan func(*wire.ClientReply)
}

func (e *recEngine) note(format string, args ...any) {
	e.mu.Lock()
	e.calls = append(e.calls, fmt.Sprintf(format, args...))
	e.mu.Unlock()
	e.poke()
}

func (e *recEngine) log() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

func (e *recEngine) Reconnect(c ClientID, m *wire.ClientReconnect) error {
	e.note("reconnect %d caps=%d more=%v", c, len(m.Caps), m.More)
	return nil
}
func (e *recEngine) Resume() { e.note("resume") }
func (e *recEngine) Handle(_ context.Context, c ClientID, req *wire.ClientRequest, reply func(*wire.ClientReply)) {
	e.note("handle %d %s", c, req.Op)
	e.mu.Lock()
	held := e.held
	e.mu.Unlock()
	if held != nil && req.Op == wire.MetaGetattr {
		held <- reply
		return
	}
	if req.Op.IsWrite() {
		reply(&wire.ClientReply{Tid: req.Tid, Op: req.Op, CreatedIno: 0x10000000001})
	}
	reply(&wire.ClientReply{Tid: req.Tid, Op: req.Op, Safe: true, CreatedIno: 0x10000000001})
}
func (e *recEngine) HandleCaps(_ context.Context, c ClientID, m *wire.ClientCaps) {
	e.note("caps %d %s", c, m.Op)
}
func (e *recEngine) SessionOpened(c ClientID) { e.note("opened %d", c) }
func (e *recEngine) SessionEnded(c ClientID, r locker.EndReason) {
	e.note("ended %d %d", c, r)
}
func (e *recEngine) Fenced(c ClientID) { e.note("fenced %d", c) }
func (e *recEngine) Tick(time.Time)    {}
func (e *recEngine) Health(time.Time) EngineHealth {
	e.mu.Lock()
	defer e.mu.Unlock()
	return EngineHealth{LateReleases: slices.Clone(e.late)}
}
func (e *recEngine) Close(context.Context) error { e.note("close"); return nil }

// recCluster records fences; memSessions is a session map in memory.
type recCluster struct {
	mu     sync.Mutex
	fences []string
	full   map[int64]bool // pools the test marks full
	elog   *recEngine
}

func (c *recCluster) Fence(_ context.Context, addr string, _ time.Duration) error {
	c.mu.Lock()
	c.fences = append(c.fences, addr)
	c.mu.Unlock()
	if c.elog != nil {
		c.elog.note("fence %s", addr)
	}
	return nil
}

func (c *recCluster) Meta(int64) (*rados.IOContext, error) { return nil, nil }

func (c *recCluster) Full(pools []int64) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range pools {
		if c.full[p] {
			return p, true
		}
	}
	return 0, false
}

type memSessions struct {
	mu sync.Mutex
	m  map[ClientID]sessionRecord
}

func (s *memSessions) Load(context.Context, int) ([]sessionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sessionRecord
	for _, r := range s.m {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b sessionRecord) int { return cmpClient(a.Client, b.Client) })
	return out, nil
}

func (s *memSessions) Save(_ context.Context, _ int, r sessionRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[r.Client] = r
	return nil
}

func (s *memSessions) Remove(_ context.Context, _ int, c ClientID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, c)
	return nil
}

func (s *memSessions) clients() []ClientID {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ClientID
	for c := range s.m {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// rig is a server on an in-memory network with its test engine,
// script, cluster and session map.
type rig struct {
	t       *testing.T
	net     *memnet.Network
	srv     *Server
	ms      *msgr.Messenger
	script  *scriptMap
	eng     *recEngine
	cluster *recCluster
	store   *memSessions
	cancel  context.CancelFunc
	done    chan error

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every change
}

// poke says that the server, the engine or the cluster changed.
func (r *rig) poke() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *rig) changes() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

const mdsAddr = "10.0.0.1:6800"

// fsMap is a map with file system 1 whose rank 0 is held by mds.old
// (gid 1), and this daemon (gid 2) a standby.
func fsMap() *mdsmap.Map {
	m := mdsmap.New()
	m.Epoch = 5
	m.FS[1] = &mdsmap.FS{ID: 1, Name: "cephfs", MetadataPool: 1, DataPools: []int64{2}, MaxMDS: 1, Flags: mdsmap.Joinable,
		SessionTimeout: mdsmap.DefaultSessionTimeout, SessionAutoclose: mdsmap.DefaultSessionAutoclose, In: []mdsmap.Rank{0},
		Up: map[mdsmap.Rank]mdsmap.GID{0: 1}}
	m.Daemons[1] = &mdsmap.Daemon{GID: 1, Name: "old", Addr: "10.0.0.9:6800", Nonce: 99, State: mdsmap.StateActive, FS: 1, Rank: 0}
	m.Daemons[2] = &mdsmap.Daemon{GID: 2, Name: "a", Addr: mdsAddr, Nonce: 5, State: mdsmap.StateStandby, Rank: mdsmap.NoRank}
	return m
}

func newRig(t *testing.T, records ...sessionRecord) *rig {
	t.Helper()
	r := &rig{t: t, net: memnet.New(memnet.Config{}), script: newScriptMap(), eng: &recEngine{},
		store: &memSessions{m: map[ClientID]sessionRecord{}}, done: make(chan error, 1), changed: make(chan struct{})}
	r.eng.poke = r.poke
	r.script.poke = r.poke
	r.cluster = &recCluster{elog: r.eng}
	for _, rec := range records {
		r.store.m[rec.Client] = rec
	}
	srv, err := New(Config{Name: "a", Map: r.script, ReconnectTimeout: 300 * time.Millisecond, TickInterval: time.Hour,
		Open: func(_ context.Context, cfg OpenConfig) (Engine, error) {
			r.eng.note("open rank %d incarnation %d", cfg.Rank, cfg.Incarnation)
			r.eng.outbox, r.eng.cfg = cfg.Outbox, cfg
			return r.eng, nil
		},
		cluster: r.cluster, sessions: func(*rados.IOContext) sessionStore { return r.store }, changed: r.poke})
	if err != nil {
		t.Fatal(err)
	}
	r.srv = srv
	name := auth.EntityName{Type: "mds", ID: "a"}
	ms, err := msgr.New(msgr.Config{Name: name, Network: r.net.Host(mdsAddr), Dispatcher: srv,
		ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: name} },
		ServerAuth: func() auth.ServerHandshake { return &auth.NoneServer{} }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Listen(t.Context(), mdsAddr); err != nil {
		t.Fatal(err)
	}
	r.ms = ms
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- srv.Run(ctx) }()
	t.Cleanup(func() { r.stop(); ms.Close(); r.net.Close() })
	return r
}

// stop stops the server (once) and returns Run's error.
func (r *rig) stop() error {
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return err
	case <-time.After(10 * time.Second):
		r.t.Fatal("the server did not stop")
	}
	return nil
}

// activate scripts the takeover of rank 0 and waits until the server is
// active.
func (r *rig) activate() {
	r.t.Helper()
	r.script.publish(wire.MDSBeaconReply{GID: 2, Epoch: 5, State: mdsmap.StateStandby, Rank: mdsmap.NoRank}, fsMap())
	// The standby sees the holder before it is given the rank, as it
	// does when its beacons are answered every interval.
	r.waitFor("the standby's first reply", func() bool {
		r.script.mu.Lock()
		defer r.script.mu.Unlock()
		return r.script.seen >= 1
	})
	m := fsMap()
	m.Epoch = 6
	delete(m.Daemons, 1)
	m.Daemons[2].State, m.Daemons[2].FS, m.Daemons[2].Rank = mdsmap.StateReplay, 1, 0
	r.script.publish(wire.MDSBeaconReply{GID: 2, Epoch: 6, State: mdsmap.StateReplay, FS: 1, Rank: 0}, m)
}

// waitPhase waits until the server is in phase p.
func (r *rig) waitPhase(p string) {
	r.t.Helper()
	r.waitFor("phase "+p, func() bool { return r.srv.Status().Phase == p })
}

// waitFor checks cond after each change the server, the engine, the
// cluster or the script reports.
func (r *rig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		ch := r.changes()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			r.t.Fatalf("timed out waiting for %s; engine calls %v", what, r.eng.log())
		}
	}
}

// client is a file-system client speaking the wire protocol on the
// in-memory network.
type client struct {
	t    *testing.T
	ms   *msgr.Messenger
	sess *msgr.Session
	in   chan msgr.Message
}

type clientDispatcher struct{ in chan msgr.Message }

func (d clientDispatcher) Dispatch(_ msgr.Peer, m msgr.Message) { d.in <- m }
func (d clientDispatcher) HandleEvent(msgr.Event)               {}

func (r *rig) client(host string) *client {
	r.t.Helper()
	name := auth.EntityName{Type: "client", ID: "admin"}
	in := make(chan msgr.Message, 64)
	ms, err := msgr.New(msgr.Config{Name: name, Network: r.net.Host(host), Dispatcher: clientDispatcher{in},
		ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: name} }})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { ms.Close() })
	sess, err := ms.Connect(auth.EntityName{Type: "mds", ID: "a"}, mdsAddr)
	if err != nil {
		r.t.Fatal(err)
	}
	return &client{t: r.t, ms: ms, sess: sess, in: in}
}

func (c *client) send(typ uint16, payload []byte) {
	c.t.Helper()
	if err := c.sess.Send(c.t.Context(), msgr.Message{Type: typ, Version: 1, Payload: payload}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) recv() msgr.Message {
	c.t.Helper()
	select {
	case m := <-c.in:
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatal("no message from the MDS")
	}
	return msgr.Message{}
}

func (c *client) recvSession() wire.ClientSession {
	c.t.Helper()
	m := c.recv()
	if m.Type != wire.TypeClientSession {
		c.t.Fatalf("got message type %d, want a session message", m.Type)
	}
	s, err := wire.DecodeClientSession(m.Payload)
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

func (c *client) recvReply() *wire.ClientReply {
	c.t.Helper()
	m := c.recv()
	if m.Type != wire.TypeClientReply {
		c.t.Fatalf("got message type %d, want a reply", m.Type)
	}
	r, err := wire.DecodeClientReply(m.Payload)
	if err != nil {
		c.t.Fatal(err)
	}
	return r
}

func (c *client) open(id ClientID, root string) wire.ClientSession {
	c.t.Helper()
	c.send(wire.TypeClientSession, wire.ClientSession{Op: wire.SessionRequestOpen, Client: "client.admin", ClientID: uint64(id), Root: root}.Encode())
	return c.recvSession()
}

// A daemon given a rank fences the rank's previous holder before it
// opens the engine, then reports reconnect, rejoin and active in order;
// with no clients in the session map it resumes at once.
func TestTakeoverFencesThenReplays(t *testing.T) {
	r := newRig(t)
	r.activate()
	r.waitPhase("active")
	r.waitFor("the map to say active", func() bool { return slices.Contains(r.script.reported(), mdsmap.StateActive) })
	want := []string{"fence 10.0.0.9:6800/99", "open rank 0 incarnation 6", "resume"}
	if got := r.eng.log(); !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	if got := r.script.reported(); !slices.Equal(got, []mdsmap.State{mdsmap.StateReconnect, mdsmap.StateRejoin, mdsmap.StateActive}) {
		t.Fatalf("states reported %v", got)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if got := r.eng.log(); got[len(got)-1] != "close" {
		t.Fatalf("the engine was not closed at stop: %v", got)
	}
}

// A session opened, a change answered unsafe then safe, a read once,
// caps routed, renewed, closed: the session map follows.
func TestSessionAndRequests(t *testing.T) {
	r := newRig(t)
	r.activate()
	r.waitPhase("active")
	c := r.client("10.0.0.50:1")
	if s := c.open(7, "/"); s.Op != wire.SessionOpen || s.TimeoutSec != 60 {
		t.Fatalf("open: %+v", s)
	}
	if got := r.store.clients(); !slices.Equal(got, []ClientID{7}) {
		t.Fatalf("session map %v", got)
	}
	c.send(wire.TypeClientRequest, (&wire.ClientRequest{Tid: 1, Op: wire.MetaCreate, Path: wire.FilePath{Ino: 1, Path: "f"}}).Encode())
	if a, b := c.recvReply(), c.recvReply(); a.Safe || !b.Safe || a.Tid != 1 || b.Tid != 1 {
		t.Fatalf("a change's replies: %+v %+v", a, b)
	}
	c.send(wire.TypeClientRequest, (&wire.ClientRequest{Tid: 2, Op: wire.MetaGetattr, Path: wire.FilePath{Ino: 1}}).Encode())
	if a := c.recvReply(); !a.Safe || a.Tid != 2 {
		t.Fatalf("a read's reply: %+v", a)
	}
	c.send(wire.TypeClientCaps, (&wire.ClientCaps{Op: wire.CapUpdate, Ino: 0x10000000001, CapID: 1}).Encode())
	c.send(wire.TypeClientSession, wire.ClientSession{Op: wire.SessionRequestRenew, Seq: 3}.Encode())
	if s := c.recvSession(); s.Op != wire.SessionRenew || s.Seq != 3 {
		t.Fatalf("renew: %+v", s)
	}
	c.send(wire.TypeClientSession, wire.ClientSession{Op: wire.SessionRequestClose, Seq: 4}.Encode())
	if s := c.recvSession(); s.Op != wire.SessionClose {
		t.Fatalf("close: %+v", s)
	}
	if got := r.store.clients(); len(got) != 0 {
		t.Fatalf("session map after close %v", got)
	}
	want := []string{"opened 7", "handle 7 create", "handle 7 getattr", "caps 7 update", fmt.Sprintf("ended 7 %d", locker.EndClosed)}
	if got := r.eng.log()[3:]; !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	// A request without a session is refused.
	c.send(wire.TypeClientRequest, (&wire.ClientRequest{Tid: 5, Op: wire.MetaGetattr}).Encode())
	if a := c.recvReply(); a.Result != -errnoNOTCONN {
		t.Fatalf("request without a session: %+v", a)
	}
}

// The clients of the session map are waited for: one reports and its
// session goes on; the other is given up at the reconnect timeout and
// forgotten; the engine resumes after both.
func TestReconnectPhase(t *testing.T) {
	r := newRig(t, sessionRecord{Client: 7, Name: "client.admin", Root: "/"}, sessionRecord{Client: 8, Name: "client.gone", Root: "/"})
	r.activate()
	r.waitPhase("reconnect")
	c := r.client("10.0.0.50:1")
	if s := c.open(7, "/"); s.Op != wire.SessionOpen {
		t.Fatalf("reopen in reconnect: %+v", s)
	}
	c.send(wire.TypeClientReconnect, (&wire.ClientReconnect{Caps: []wire.ReconnectCap{{Ino: 0x10000000001, CapID: 3}}, More: true}).Encode())
	c.send(wire.TypeClientReconnect, (&wire.ClientReconnect{}).Encode())
	r.waitPhase("active")
	if got := r.store.clients(); !slices.Equal(got, []ClientID{7}) {
		t.Fatalf("session map after reconnect %v, want the reporter only", got)
	}
	got := r.eng.log()
	want := []string{"fence 10.0.0.9:6800/99", "open rank 0 incarnation 6", "reconnect 7 caps=1 more=true",
		"reconnect 7 caps=0 more=false", "opened 7", "resume"}
	if !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	if st := r.srv.Status(); len(st.Sessions) != 1 || st.Sessions[0].Client != 7 || st.Counters.ClientsReconnected != 1 {
		t.Fatalf("status %+v", st)
	}
	// A new client, held during reconnect, is answered once active.
	c2 := r.client("10.0.0.51:1")
	if s := c2.open(9, "/"); s.Op != wire.SessionOpen {
		t.Fatalf("new session: %+v", s)
	}
}

// Sessions go stale at the timeout and are closed at the autoclose time:
// the engine ends them, the map forgets them, the client hears.
func TestStaleAndAutoclose(t *testing.T) {
	r := newRig(t)
	r.activate()
	r.waitPhase("active")
	c := r.client("10.0.0.50:1")
	c.open(7, "/")
	now := time.Now()
	r.srv.tick(t.Context(), now.Add(61*time.Second))
	if s := c.recvSession(); s.Op != wire.SessionStale {
		t.Fatalf("at the timeout: %+v", s)
	}
	r.srv.tick(t.Context(), now.Add(301*time.Second))
	if s := c.recvSession(); s.Op != wire.SessionClose || !strings.Contains(s.Reason, "timed out") {
		t.Fatalf("at autoclose: %+v", s)
	}
	if got := r.store.clients(); len(got) != 0 {
		t.Fatalf("session map %v", got)
	}
	if got := r.eng.log(); got[len(got)-1] != fmt.Sprintf("ended 7 %d", locker.EndTimeout) {
		t.Fatalf("calls %v", got)
	}
}

// A client the engine fences is blocklisted, told, and refused a new
// session.
func TestFenceEvictsClient(t *testing.T) {
	r := newRig(t)
	r.activate()
	r.waitPhase("active")
	c := r.client("10.0.0.50:1")
	c.open(7, "/")
	r.eng.outbox.Fence(7, "did not release caps")
	if s := c.recvSession(); s.Op != wire.SessionClose || !strings.Contains(s.Reason, "evicted") {
		t.Fatalf("fenced: %+v", s)
	}
	r.waitFor("the blocklist", func() bool {
		r.cluster.mu.Lock()
		defer r.cluster.mu.Unlock()
		return slices.Contains(r.cluster.fences, "client.gid.7")
	})
	r.waitFor("the session's end, then the engine told of the fence", func() bool {
		log := r.eng.log()
		end := slices.Index(log, fmt.Sprintf("ended 7 %d", locker.EndEvicted))
		fence := slices.Index(log, "fence client.gid.7")
		fenced := slices.Index(log, "fenced 7")
		return end >= 0 && fence > end && fenced > fence
	})
	if s := c.open(7, "/"); s.Op != wire.SessionReject || !strings.Contains(s.Reason, "EPERM") {
		t.Fatalf("reopen after fence: %+v", s)
	}
	// A client whose key does not reach its root is refused.
	if s := r.client("10.0.0.51:1").open(0, "/"); s.Op != wire.SessionReject {
		t.Fatalf("client id 0: %+v", s)
	}
}
