package rados_test

import (
	"context"
	"strconv"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// fakeOSD serves client ops by the protocol contract, over the
// cluster's shared store.
type fakeOSD struct {
	c  *cluster
	id int32
	ms *msgr.Messenger
}

func (c *cluster) startOSD(id int32) (*fakeOSD, error) {
	o := &fakeOSD{c: c, id: id}
	ms, err := newDaemonMessenger(c, auth.EntityName{Type: "osd", ID: itoa(id)}, osdAddr(id), o, "osd")
	if err != nil {
		return nil, err
	}
	o.ms = ms
	return o, nil
}

func (o *fakeOSD) HandleEvent(msgr.Event) {}

func (o *fakeOSD) Dispatch(from msgr.Peer, msg msgr.Message) {
	if msg.Type != wire.TypeOSDOp {
		return
	}
	op, err := wire.DecodeOSDOp(msg.Payload)
	if err != nil {
		o.c.t.Errorf("osd.%d: bad op: %v", o.id, err)
		return
	}
	c := o.c
	c.mu.Lock()
	c.recv = append(c.recv, received{osd: o.id, op: op, from: from.Session})
	script := c.script
	m := c.maps[len(c.maps)-1]
	primary := o.primarySinceLocked(op)
	c.mu.Unlock()

	act := actServe
	if script != nil {
		act = script(o.id, &op)
	}
	switch act {
	case actIgnore:
		return
	case actDropBefore:
		from.Session.Close()
		return
	}
	if act == actStale || !primary {
		o.send(from, &op, wire.OSDOpReply{Tid: op.Req.Tid, Epoch: uint64(m.Epoch()), Result: -wire.ESTALE}, false)
		return
	}
	if len(op.Ops) == 1 && op.Ops[0].Code == wire.OpListObjects {
		o.list(from, m, op)
		return
	}
	if pg, err := m.ObjectIDToPG(op.Object); err != nil || pg != op.PG {
		c.t.Errorf("osd.%d: op on %v names pg %v, the object is in %v (%v)", o.id, op.Object, op.PG, pg, err)
		o.send(from, &op, wire.OSDOpReply{Tid: op.Req.Tid, Epoch: uint64(m.Epoch()), Result: -wire.EINVAL, Flags: wire.ReplyApplied | wire.ReplyCommitted}, false)
		return
	}
	o.execute(from, m, op, act)
}

// primarySinceLocked reports whether this OSD has been the acting
// primary of op's PG in every epoch from the op's on: otherwise the op
// is stale.
func (o *fakeOSD) primarySinceLocked(op wire.OSDOp) bool {
	var s osdmap.Scratch
	first := max(op.Epoch, 1)
	if first > uint64(len(o.c.maps)) {
		return false
	}
	for _, m := range o.c.maps[first-1:] {
		mp, err := m.PGToUpActing(op.PG, &s)
		if err != nil || mp.ActingPrimary != o.id {
			return false
		}
	}
	return true
}

func (o *fakeOSD) execute(from msgr.Peer, m *osdmap.Map, op wire.OSDOp, act action) {
	c := o.c
	dup := act == actDupReplies
	write := c.classes.IsWrite(op.Ops)
	c.mu.Lock()
	if prev := c.done[op.Req]; write && prev != nil {
		r := *prev
		r.Tid = op.Req.Tid
		c.mu.Unlock()
		if op.Flags&wire.FlagWantApplied != 0 && r.Result == 0 {
			a := r
			a.Flags = wire.ReplyApplied
			o.send(from, &op, a, dup)
		}
		o.send(from, &op, r, dup)
		return
	}
	c.counter++
	ver := wire.Version{Epoch: uint64(m.Epoch()), Counter: c.counter}
	env := &ops.Env{Store: c.store, Collection: objectstore.PGCollection(op.PG.Pool, op.PG.Seed), Object: op.Object,
		Classes: c.classes, Version: ver, Now: time.Now(), Caller: op.Req.Client}
	res, err := ops.Execute(context.Background(), env, op.Ops)
	reply := wire.OSDOpReply{Tid: op.Req.Tid, Epoch: uint64(m.Epoch()), Flags: wire.ReplyApplied | wire.ReplyCommitted}
	switch {
	case err != nil:
		reply.Result = -wire.EIO
	case res.Code != 0:
		reply.Result, reply.Ops = -res.Code, res.Ops
	default:
		reply.Ops, reply.Version = res.Ops, res.Info.Version
		if write {
			if !res.Txn.Empty() {
				if err := objectstore.Apply(context.Background(), c.store, &res.Txn); err != nil {
					c.t.Errorf("osd.%d: apply: %v", o.id, err)
				}
			}
			reply.Version = ver
			c.applies[op.Req]++
		}
	}
	if write {
		r := reply
		c.done[op.Req] = &r
	}
	hold := c.hold
	c.mu.Unlock()

	switch act {
	case actApplyNoReply:
		return
	case actApplyThenDrop:
		from.Session.Close()
		return
	}
	if !write || reply.Result != 0 {
		o.send(from, &op, reply, dup)
		return
	}
	if op.Flags&wire.FlagWantApplied != 0 {
		a := reply
		a.Flags = wire.ReplyApplied
		o.send(from, &op, a, dup)
	}
	if hold == nil {
		o.send(from, &op, reply, dup)
		return
	}
	go func() {
		<-hold
		o.send(from, &op, reply, dup)
	}()
}

// list answers a PG listing from the op's cursor.
func (o *fakeOSD) list(from msgr.Peer, m *osdmap.Map, op wire.OSDOp) {
	lop := op.Ops[0]
	limit := int(max(lop.Length, 1))
	coll := objectstore.PGCollection(op.PG.Pool, op.PG.Seed)
	cursor := op.Object
	var out []objid.ID
	for len(out) < limit && !cursor.IsMax() {
		objs, next, err := o.c.store.ListObjects(context.Background(), coll, cursor, limit-len(out))
		if err != nil {
			o.send(from, &op, wire.OSDOpReply{Tid: op.Req.Tid, Epoch: uint64(m.Epoch()), Result: -wire.EIO, Flags: wire.ReplyApplied | wire.ReplyCommitted}, false)
			return
		}
		for _, id := range objs {
			if lop.Flags&wire.ListAllNamespaces != 0 || id.Namespace == lop.Name {
				out = append(out, id)
			}
		}
		cursor = next
	}
	res := wire.ObjectOpResult{Objects: out, More: !cursor.IsMax()}
	if _, end := osdmap.BitwiseRange(op.PG.Seed, m.Pool(op.PG.Pool).PGNum); res.More {
		res.Cursor = cursor
	} else if end < 1<<32 {
		res.Cursor = objid.ID{Pool: op.PG.Pool, Hash: objid.ReverseBits(uint32(end))}
	}
	o.send(from, &op, wire.OSDOpReply{Tid: op.Req.Tid, Epoch: uint64(m.Epoch()), Flags: wire.ReplyApplied | wire.ReplyCommitted,
		Ops: []wire.ObjectOpResult{res}}, false)
}

// send answers op; like an OSD, it echoes the op's tid and attempt.
func (o *fakeOSD) send(from msgr.Peer, op *wire.OSDOp, r wire.OSDOpReply, twice bool) {
	r.Tid, r.Attempt = op.Req.Tid, op.Attempt
	msg := msgr.Message{Type: wire.TypeOSDOpReply, Version: 1, Payload: r.Encode()}
	_ = from.Session.Send(context.Background(), msg)
	if twice {
		_ = from.Session.Send(context.Background(), msgr.Message{Type: wire.TypeOSDOpReply, Version: 1, Payload: r.Encode()})
	}
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }
