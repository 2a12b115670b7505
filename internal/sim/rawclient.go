package sim

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// RawClient sends OSDOps to the OSD a test names and collects every
// reply, so tests see exactly what an OSD answers (ESTALE, applied before
// committed, a resend answered once) without a client library deciding
// for them.
type RawClient struct {
	t    testing.TB
	ms   *msgr.Messenger
	name string
	inc  uint64

	mu      sync.Mutex
	tid     uint64
	replies map[uint64]chan wire.OSDOpReply
}

// NewRawClient starts a client called name ("client.N").
func (c *Cluster) NewRawClient(name string) *RawClient {
	c.t.Helper()
	en, err := auth.ParseEntityName(name)
	if err != nil {
		c.t.Fatal(err)
	}
	rc := &RawClient{t: c.t, name: name, inc: 0x5eed, replies: map[uint64]chan wire.OSDOpReply{}}
	ms, err := msgr.New(msgr.Config{Name: en, Network: c.network(name), Dispatcher: rc,
		ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: en} }})
	if err != nil {
		c.t.Fatal(err)
	}
	rc.ms = ms
	c.t.Cleanup(func() { ms.Close() })
	return rc
}

// Dispatch implements msgr.Dispatcher.
func (rc *RawClient) Dispatch(_ msgr.Peer, msg msgr.Message) {
	if msg.Type != wire.TypeOSDOpReply {
		return
	}
	r, err := wire.DecodeOSDOpReply(msg.Payload)
	if err != nil {
		rc.t.Errorf("undecodable reply: %v", err)
		return
	}
	rc.mu.Lock()
	ch := rc.replies[r.Tid]
	rc.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// HandleEvent implements msgr.Dispatcher.
func (rc *RawClient) HandleEvent(msgr.Event) {}

// Op is a request built for one object.
type Op struct {
	Epoch  uint64
	Object objid.ID
	PG     osdmap.PG
	Flags  uint32
	Tid    uint64 // 0: the next one
	Ops    []wire.ObjectOp
	// SnapSeq and Snaps are a write's snap context.
	SnapSeq uint64
	Snaps   []uint64
}

// Send sends op to OSD osd and returns the channel its replies arrive on.
func (rc *RawClient) Send(o *OSD, op Op) (uint64, <-chan wire.OSDOpReply) {
	rc.t.Helper()
	rc.mu.Lock()
	if op.Tid == 0 {
		rc.tid++
		op.Tid = rc.tid
	}
	ch := rc.replies[op.Tid]
	if ch == nil {
		ch = make(chan wire.OSDOpReply, 16)
		rc.replies[op.Tid] = ch
	}
	rc.mu.Unlock()
	m := wire.OSDOp{Req: wire.ReqID{Client: rc.name, Incarnation: rc.inc, Tid: op.Tid}, Epoch: op.Epoch,
		PG: op.PG, Object: op.Object, Flags: op.Flags, Ops: op.Ops, SnapSeq: op.SnapSeq, Snaps: op.Snaps}
	peer := auth.EntityName{Type: "osd", ID: fmt.Sprint(o.ID)}
	if err := rc.ms.Send(context.Background(), peer, o.Addr, msgr.Message{Type: wire.TypeOSDOp, Version: 1, Payload: m.Encode()}); err != nil {
		rc.t.Fatalf("send to osd.%d: %v", o.ID, err)
	}
	return op.Tid, ch
}

// Wait returns the next reply on ch, failing the test after a minute of
// virtual time.
func (rc *RawClient) Wait(ch <-chan wire.OSDOpReply) wire.OSDOpReply {
	rc.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(time.Minute):
		rc.t.Fatal("no reply within a minute")
		return wire.OSDOpReply{}
	}
}

// WaitCommitted returns the reply that ends the request (committed, or a
// failure), skipping an applied one.
func (rc *RawClient) WaitCommitted(ch <-chan wire.OSDOpReply) wire.OSDOpReply {
	rc.t.Helper()
	for {
		r := rc.Wait(ch)
		if r.Flags&wire.ReplyCommitted != 0 {
			return r
		}
	}
}
