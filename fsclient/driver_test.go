package fsclient

import (
	"bytes"
	"context"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/fsclient/internal/session"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// scriptedMDS is a test's stand-in for an MDS daemon on the memnet: it
// answers session opens and hands every other message to the test,
// which answers through reply and sendCaps. It tests the client's
// driver (mds.go) on its own; the real MDS's tests are end to end.
type scriptedMDS struct {
	t    *testing.T
	name string
	ms   *msgr.Messenger
	addr string

	mu       sync.Mutex
	conn     *msgr.Session
	requests chan *wire.ClientRequest
	caps     chan *wire.ClientCaps
	recon    chan *wire.ClientReconnect
	opens    chan wire.ClientSession
	// closes gets, at each session close, the cap messages received
	// before it (in arrival order).
	closes chan []*wire.ClientCaps
	before []*wire.ClientCaps
}

func newScriptedMDS(t *testing.T, c *sim.Cluster, name string) *scriptedMDS {
	t.Helper()
	m := &scriptedMDS{t: t, name: name, addr: "mds-" + name + ":6800",
		requests: make(chan *wire.ClientRequest, 16), caps: make(chan *wire.ClientCaps, 16),
		recon: make(chan *wire.ClientReconnect, 4), opens: make(chan wire.ClientSession, 4),
		closes: make(chan []*wire.ClientCaps, 4)}
	ms, err := msgr.New(msgr.Config{Name: auth.EntityName{Type: "mds", ID: name}, Network: c.Net.Host(m.addr),
		Dispatcher: m, ServerAuth: func() auth.ServerHandshake { return &auth.NoneServer{} },
		ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{} }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Listen(context.Background(), m.addr); err != nil {
		t.Fatal(err)
	}
	m.ms = ms
	t.Cleanup(func() { ms.Close() })
	return m
}

func (m *scriptedMDS) Dispatch(from msgr.Peer, msg msgr.Message) {
	m.mu.Lock()
	m.conn = from.Session
	m.mu.Unlock()
	switch msg.Type {
	case wire.TypeClientSession:
		s, err := wire.DecodeClientSession(msg.Payload)
		if err != nil {
			m.t.Error(err)
			return
		}
		if s.Op == wire.SessionRequestOpen {
			m.opens <- s
			m.send(wire.TypeClientSession, wire.ClientSession{Op: wire.SessionOpen, TimeoutSec: 60}.Encode())
		}
		if s.Op == wire.SessionRequestClose {
			m.mu.Lock()
			m.closes <- m.before
			m.mu.Unlock()
			m.send(wire.TypeClientSession, wire.ClientSession{Op: wire.SessionClose, Seq: s.Seq}.Encode())
		}
	case wire.TypeClientRequest:
		r, err := wire.DecodeClientRequest(msg.Payload)
		if err != nil {
			m.t.Error(err)
			return
		}
		m.requests <- r
	case wire.TypeClientCaps:
		cm, err := wire.DecodeClientCaps(msg.Payload)
		if err != nil {
			m.t.Error(err)
			return
		}
		m.mu.Lock()
		m.before = append(m.before, cm)
		m.mu.Unlock()
		m.caps <- cm
	case wire.TypeClientReconnect:
		rc, err := wire.DecodeClientReconnect(msg.Payload)
		if err != nil {
			m.t.Error(err)
			return
		}
		m.recon <- rc
	}
}

func (m *scriptedMDS) HandleEvent(msgr.Event) {}

func (m *scriptedMDS) send(typ uint16, payload []byte) {
	m.mu.Lock()
	conn := m.conn
	m.mu.Unlock()
	if err := conn.Send(context.Background(), msgr.Message{Type: typ, Version: 1, Payload: payload}); err != nil {
		m.t.Error(err)
	}
}

func (m *scriptedMDS) reply(r *wire.ClientReply) { m.send(wire.TypeClientReply, r.Encode()) }

func (m *scriptedMDS) sendCaps(c *wire.ClientCaps) { m.send(wire.TypeClientCaps, c.Encode()) }

// next returns the next request, which must be op.
func (m *scriptedMDS) next(op wire.MetaOp) *wire.ClientRequest {
	m.t.Helper()
	r := <-m.requests
	if r.Op != op {
		m.t.Fatalf("request %s, want %s", r.Op, op)
	}
	return r
}

var rootStat = wire.InodeStat{Ino: RootIno, Mode: syscall.S_IFDIR | 0o755, Nlink: 2}

// The driver against a scripted MDS: mount, create, buffered writes, a
// revocation of Fb that writes the data back before the ack (which
// carries the size), fsync's flush and its ack, and a failover to
// another daemon, where the client opens its session and reports its
// cap.
func TestDriverScripted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 5, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
		for _, h := range []string{"h1", "h2", "h3"} {
			c.AddOSD(h)
		}
		c.Run("osd pool create", "pool", "data", "pg_num", "8", "size", "2")
		c.WaitForEpoch(c.Epoch())
		conn := c.Client("client.fs")
		ioc, err := conn.OpenIOContext("data")
		if err != nil {
			t.Fatal(err)
		}
		a := newScriptedMDS(t, c, "a")
		ctx := context.Background()
		info := fsInfo{DataPools: []int64{ioc.PoolID()}, Rank0: session.Holder{GID: 1, Name: "a", Addr: a.addr, State: session.HolderActive}}

		type result struct {
			cl  *Client
			err error
		}
		mounted := make(chan result)
		go func() {
			cl, err := mount(ctx, conn, "scripted", Options{Caller: &Caller{UID: 7, GID: 8}}, info)
			mounted <- result{cl, err}
		}()
		if open := <-a.opens; open.ClientID == 0 || open.Root != "/" {
			t.Fatalf("session open %+v", open)
		}
		r := a.next(wire.MetaGetattr)
		a.reply(&wire.ClientReply{Tid: r.Tid, Op: r.Op, Safe: true, Trace: []wire.TraceStep{{Inode: rootStat}}})
		res := <-mounted
		if res.err != nil {
			t.Fatal(res.err)
		}
		cl := res.cl
		defer cl.Close(ctx)

		// Create /f: a lookup of the root is cached (As? no: the root
		// has no cap), so the walk asks getattr again.
		const ino = 0x10000000000
		fileCaps := locker.Pin | locker.AuthShared | locker.LinkShared | locker.XattrShared | capsBuffered
		created := make(chan *File)
		go func() {
			f, err := cl.Create(ctx, "/f", 0o644)
			if err != nil {
				t.Error(err)
			}
			created <- f
		}()
		r = a.next(wire.MetaGetattr)
		a.reply(&wire.ClientReply{Tid: r.Tid, Op: r.Op, Safe: true, Trace: []wire.TraceStep{{Inode: rootStat}}})
		r = a.next(wire.MetaCreate)
		if r.Path != (wire.FilePath{Ino: RootIno, Path: "f"}) || r.UID != 7 || r.GID != 8 || r.Mode != syscall.S_IFREG|0o644 {
			t.Fatalf("create request %+v", r)
		}
		fstat := wire.InodeStat{Ino: ino, Mode: syscall.S_IFREG | 0o644, Nlink: 1,
			Layout: wire.FSLayout{ObjectSize: 64 << 10, StripeUnit: 64 << 10, StripeCount: 1, Pool: ioc.PoolID()},
			Cap:    wire.InodeCap{ID: 7, Seq: 1, IssueSeq: 1, Caps: uint32(fileCaps)}}
		a.reply(&wire.ClientReply{Tid: r.Tid, Op: r.Op, Trace: []wire.TraceStep{{Inode: rootStat}, {Name: "f", Inode: fstat}}})
		// Create truncates (O_TRUNC): it waits for the safe reply, before
		// which the MDS cuts old data.
		a.reply(&wire.ClientReply{Tid: r.Tid, Op: r.Op, Safe: true})
		f := <-created
		if f == nil {
			t.FailNow()
		}

		data := bytes.Repeat([]byte("cuttle"), 20000) // 120000 bytes: two objects
		if _, err := f.Write(ctx, data); err != nil {
			t.Fatal(err)
		}
		if n := len(fileObjects(t, ioc, ino)); n != 0 {
			t.Fatalf("%d objects under Fb before a flush", n)
		}
		// The MDS revokes Fb (another client opened the file).
		a.sendCaps(&wire.ClientCaps{Op: wire.CapRevoke, Ino: ino, CapID: 7, Seq: 2, IssueSeq: 1,
			Caps: uint32(locker.Pin | locker.AuthShared | locker.LinkShared | locker.XattrShared | capsSync)})
		ack := <-a.caps
		if ack.Op != wire.CapAck || ack.Seq != 2 || ack.Dirty == 0 || ack.Size != uint64(len(data)) {
			t.Fatalf("ack %+v", ack)
		}
		st := newStriper(t, ioc, layout.Layout{ObjectSize: 64 << 10, StripeUnit: 64 << 10, StripeCount: 1})
		if got := osdBytes(t, st, ino, uint64(len(data))); !bytes.Equal(got, data) {
			t.Fatal("the OSDs do not hold the written bytes after the revocation's ack")
		}
		a.sendCaps(&wire.ClientCaps{Op: wire.CapFlushAck, Ino: ino, CapID: 7, Seq: 2, FlushTID: ack.FlushTID})

		// Synchronous now: a write goes to the OSDs at once; fsync
		// flushes the size and waits for the ack.
		if _, err := f.WriteAt(ctx, []byte("tail"), int64(len(data))); err != nil {
			t.Fatal(err)
		}
		synced := make(chan error)
		go func() { synced <- f.Sync(ctx) }()
		fl := <-a.caps
		if fl.Op != wire.CapFlush || fl.Size != uint64(len(data)+4) {
			t.Fatalf("flush %+v", fl)
		}
		a.sendCaps(&wire.ClientCaps{Op: wire.CapFlushAck, Ino: ino, CapID: 7, Seq: 2, FlushTID: fl.FlushTID})
		if err := <-synced; err != nil {
			t.Fatal(err)
		}

		// Failover: daemon b takes the rank and is in reconnect.
		b := newScriptedMDS(t, c, "b")
		cl.mu.Lock()
		cl.sess.MapChanged(session.Holder{GID: 2, Name: "b", Addr: b.addr, State: session.HolderReconnect}, cl.clock.Now())
		cl.runLocked()
		cl.mu.Unlock()
		<-b.opens
		rc := <-b.recon
		if len(rc.Caps) != 1 || rc.Caps[0].Ino != ino || rc.Caps[0].CapID != 7 || rc.Caps[0].Seq != 2 {
			t.Fatalf("reconnect %+v", rc.Caps)
		}
		if err := f.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Close gives every cap back before it closes the session, so that the
// MDS sees a session end holding no write caps (it fences one that
// does, and other clients wait on its files until the fence is done).
func TestCloseReleasesCapsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 6, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
		for _, h := range []string{"h1", "h2"} {
			c.AddOSD(h)
		}
		c.Run("osd pool create", "pool", "data", "pg_num", "8", "size", "2")
		c.WaitForEpoch(c.Epoch())
		conn := c.Client("client.fs")
		ioc, err := conn.OpenIOContext("data")
		if err != nil {
			t.Fatal(err)
		}
		a := newScriptedMDS(t, c, "a")
		ctx := context.Background()
		info := fsInfo{DataPools: []int64{ioc.PoolID()}, Rank0: session.Holder{GID: 1, Name: "a", Addr: a.addr, State: session.HolderActive}}
		mounted := make(chan *Client)
		go func() {
			cl, err := mount(ctx, conn, "scripted", Options{}, info)
			if err != nil {
				t.Error(err)
			}
			mounted <- cl
		}()
		<-a.opens
		r := a.next(wire.MetaGetattr)
		a.reply(&wire.ClientReply{Tid: r.Tid, Op: r.Op, Safe: true, Trace: []wire.TraceStep{{Inode: rootStat}}})
		cl := <-mounted
		if cl == nil {
			t.FailNow()
		}
		const ino = 0x10000000000
		created := make(chan *File)
		go func() {
			f, err := cl.Create(ctx, "/f", 0o644)
			if err != nil {
				t.Error(err)
			}
			created <- f
		}()
		r = a.next(wire.MetaGetattr)
		a.reply(&wire.ClientReply{Tid: r.Tid, Op: r.Op, Safe: true, Trace: []wire.TraceStep{{Inode: rootStat}}})
		r = a.next(wire.MetaCreate)
		fstat := wire.InodeStat{Ino: ino, Mode: syscall.S_IFREG | 0o644, Nlink: 1,
			Layout: wire.FSLayout{ObjectSize: 64 << 10, StripeUnit: 64 << 10, StripeCount: 1, Pool: ioc.PoolID()},
			Cap:    wire.InodeCap{ID: 7, Seq: 1, IssueSeq: 1, Caps: uint32(locker.Pin | locker.AuthShared | capsBuffered)}}
		a.reply(&wire.ClientReply{Tid: r.Tid, Op: r.Op, Safe: true, Trace: []wire.TraceStep{{Inode: rootStat}, {Name: "f", Inode: fstat}}})
		f := <-created
		if f == nil {
			t.FailNow()
		}
		if err := f.Close(ctx); err != nil {
			t.Fatal(err)
		}
		closed := make(chan error)
		go func() { closed <- cl.Close(ctx) }()
		before := <-a.closes
		var released bool
		for _, m := range before {
			if m.Ino == ino && m.CapID == 7 && m.Op == wire.CapRelease {
				released = true
			}
		}
		if !released {
			t.Fatalf("session close before the release of cap 7: cap messages before it %v", before)
		}
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
	})
}

// The kernel (Invalidate) is told of a size a cap message changes while
// it may still keep the attributes it was given, and only then: a grant
// that grows the file drops its attributes; one that comes after, while
// it keeps nothing, sends nothing; a getattr served under the cap carries
// the size the grant brought; and a revocation that shrinks the file
// drops the attributes and the pages past the new end before the ack.
func TestKernelToldOfSizeChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 7, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
		for _, h := range []string{"h1", "h2"} {
			c.AddOSD(h)
		}
		c.Run("osd pool create", "pool", "data", "pg_num", "8", "size", "2")
		c.WaitForEpoch(c.Epoch())
		conn := c.Client("client.fs")
		ioc, err := conn.OpenIOContext("data")
		if err != nil {
			t.Fatal(err)
		}
		a := newScriptedMDS(t, c, "a")
		ctx := context.Background()
		info := fsInfo{DataPools: []int64{ioc.PoolID()}, Rank0: session.Holder{GID: 1, Name: "a", Addr: a.addr, State: session.HolderActive}}
		mounted := make(chan *Client)
		go func() {
			cl, err := mount(ctx, conn, "scripted", Options{}, info)
			if err != nil {
				t.Error(err)
			}
			mounted <- cl
		}()
		<-a.opens
		r := a.next(wire.MetaGetattr)
		a.reply(&wire.ClientReply{Tid: r.Tid, Op: r.Op, Safe: true, Trace: []wire.TraceStep{{Inode: rootStat}}})
		cl := <-mounted
		if cl == nil {
			t.FailNow()
		}
		defer cl.Close(ctx)
		attrs, pages := make(chan uint64, 8), make(chan int64, 8)
		cl.SetInvalidate(Invalidate{Inode: func(ino uint64) { attrs <- ino }, Data: func(ino uint64, off int64) { pages <- off }})
		told := func() (n int, offs []int64) {
			synctest.Wait()
			for {
				select {
				case <-attrs:
					n++
				case off := <-pages:
					offs = append(offs, off)
				default:
					return n, offs
				}
			}
		}

		const ino = 0x10000000000
		shared := locker.Pin | locker.AuthShared | locker.LinkShared | locker.XattrShared | capsCached
		type created struct {
			st  *Stat
			err error
		}
		done := make(chan created)
		go func() {
			_, st, err := cl.Inodes().Create(ctx, RootIno, "f", syscall.O_RDONLY, 0o644)
			done <- created{st, err}
		}()
		r = a.next(wire.MetaCreate)
		fstat := wire.InodeStat{Ino: ino, Mode: syscall.S_IFREG | 0o644, Nlink: 1,
			Layout: wire.FSLayout{ObjectSize: 64 << 10, StripeUnit: 64 << 10, StripeCount: 1, Pool: ioc.PoolID()},
			Cap:    wire.InodeCap{ID: 7, Seq: 1, IssueSeq: 1, Caps: uint32(shared)}}
		a.reply(&wire.ClientReply{Tid: r.Tid, Op: r.Op, Safe: true, Trace: []wire.TraceStep{{Inode: rootStat}, {Name: "f", Inode: fstat}}})
		cr := <-done
		if cr.err != nil {
			t.Fatal(cr.err)
		}
		if cr.st.AttrValid <= 0 {
			t.Fatalf("create gave the kernel its attributes for %v", cr.st.AttrValid)
		}

		// Another client wrote 8192 bytes; the grant brings the size.
		a.sendCaps(&wire.ClientCaps{Op: wire.CapGrant, Ino: ino, CapID: 7, Seq: 2, IssueSeq: 2, Caps: uint32(shared), Size: 8192})
		if got := <-attrs; got != ino {
			t.Fatalf("attributes of %#x dropped", got)
		}
		// Told already, the kernel keeps nothing: another grant, and a
		// revocation (whose ack says both were taken), send nothing.
		a.sendCaps(&wire.ClientCaps{Op: wire.CapGrant, Ino: ino, CapID: 7, Seq: 3, IssueSeq: 3, Caps: uint32(shared), Size: 100})
		a.sendCaps(&wire.ClientCaps{Op: wire.CapRevoke, Ino: ino, CapID: 7, Seq: 4, IssueSeq: 3,
			Caps: uint32(shared &^ locker.FileCache), Size: 100})
		if ack := <-a.caps; ack.Op != wire.CapAck || ack.Seq != 4 {
			t.Fatalf("ack %+v", ack)
		}
		if n, offs := told(); n != 0 || len(offs) != 0 {
			t.Fatalf("the kernel keeps nothing, yet %d attribute and %v page invalidations", n, offs)
		}

		st, err := cl.Inodes().Getattr(ctx, ino)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size != 100 || st.AttrValid <= 0 {
			t.Fatalf("getattr under the cap: size %d valid %v, want 100 and a time", st.Size, st.AttrValid)
		}

		// Fs goes, and the file is 50 bytes now: the attributes and the
		// pages past 50 are dropped, once.
		a.sendCaps(&wire.ClientCaps{Op: wire.CapRevoke, Ino: ino, CapID: 7, Seq: 5, IssueSeq: 3,
			Caps: uint32(locker.Pin | locker.AuthShared | locker.LinkShared | locker.XattrShared | locker.FileRead), Size: 50})
		if ack := <-a.caps; ack.Op != wire.CapAck || ack.Seq != 5 {
			t.Fatalf("ack %+v", ack)
		}
		if n, offs := told(); n != 1 || len(offs) != 1 || offs[0] != 50 {
			t.Fatalf("revocation that shrank the file: %d attribute and %v page invalidations, want 1 and [50]", n, offs)
		}
	})
}
