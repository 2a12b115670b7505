package rados

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Admin commands to OSDs (`cuttle tell osd.N ...`, Ceph's `ceph tell`):
// sent on the client's session with the OSD, answered there.

// commandWaiters matches command replies to their callers by tid.
type commandWaiters struct {
	mu      sync.Mutex
	tid     uint64
	waiting map[uint64]chan wire.Reply
}

func (w *commandWaiters) add() (uint64, chan wire.Reply) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting == nil {
		w.waiting = map[uint64]chan wire.Reply{}
	}
	w.tid++
	ch := make(chan wire.Reply, 1)
	w.waiting[w.tid] = ch
	return w.tid, ch
}

func (w *commandWaiters) remove(tid uint64) {
	w.mu.Lock()
	delete(w.waiting, tid)
	w.mu.Unlock()
}

// deliver hands a decoded reply to its caller, if it still waits.
func (w *commandWaiters) deliver(payload []byte) error {
	r, err := wire.DecodeMonCommandReply(payload)
	if err != nil {
		return err
	}
	w.mu.Lock()
	ch := w.waiting[r.Tid]
	delete(w.waiting, r.Tid)
	w.mu.Unlock()
	if ch != nil {
		ch <- r.Reply
	}
	return nil
}

// OSDCommand sends an admin command (status, dump_ops_in_flight,
// dump_pgs, "pg scrub" with "pgid", ...) to OSD id at its address in the
// client's map, with arguments given as alternating names and values,
// and returns its reply. A refusal is an *OpError with the OSD's errno.
func (c *Conn) OSDCommand(ctx context.Context, id int32, prefix string, args ...string) (MonReply, error) {
	m := c.obj.currentMap()
	if !m.Exists(id) || !m.IsUp(id) {
		return MonReply{}, fmt.Errorf("rados: tell osd.%d: it is not up in map epoch %d", id, m.Epoch())
	}
	tid, ch := c.obj.commands.add()
	defer c.obj.commands.remove(tid)
	msg := wire.MonCommand{Tid: tid, Cmd: wire.NewCommand(prefix, args...)}
	peer := auth.EntityName{Type: "osd", ID: strconv.Itoa(int(id))}
	if err := c.ms.Send(ctx, peer, m.OSD(id).Addr, msgr.Message{Type: wire.TypeDaemonCommand, Version: 1, Payload: msg.Encode()}); err != nil {
		return MonReply{}, fmt.Errorf("rados: tell osd.%d: %w", id, err)
	}
	select {
	case r := <-ch:
		out := MonReply{Status: r.Status, Data: r.Data, Text: r.Text}
		if r.Code != 0 {
			return out, &OpError{Op: prefix, Index: -1, Errno: int(r.Code), Status: r.Status}
		}
		return out, nil
	case <-ctx.Done():
		return MonReply{}, fmt.Errorf("rados: tell osd.%d %s: %w", id, prefix, ctxError(ctx))
	}
}

// PGCommand sends an admin command about placement group pgid (POOL.SEED,
// e.g. "1.1f"), with arguments kv (name, value, ...), to its acting
// primary in the client's map: "pg scrub", "pg deep-scrub" or "pg
// repair", which the primary queues and answers at once, or "pg
// mark_unfound_lost" (mode delete).
func (c *Conn) PGCommand(ctx context.Context, pgid, prefix string, kv ...string) (MonReply, error) {
	pg, err := osdmap.ParsePG(pgid)
	if err != nil {
		return MonReply{}, fmt.Errorf("rados: %s: %w", prefix, err)
	}
	m := c.obj.currentMap()
	if p := m.Pool(pg.Pool); p == nil || pg.Seed >= p.PGNum {
		return MonReply{}, fmt.Errorf("rados: %s: pg %v does not exist in map epoch %d", prefix, pg, m.Epoch())
	}
	mp, err := m.PGToUpActing(pg, &osdmap.Scratch{})
	if err != nil {
		return MonReply{}, fmt.Errorf("rados: %s %v: %w", prefix, pg, err)
	}
	if mp.ActingPrimary < 0 {
		return MonReply{}, fmt.Errorf("rados: %s: pg %v has no primary in map epoch %d", prefix, pg, m.Epoch())
	}
	return c.OSDCommand(ctx, mp.ActingPrimary, prefix, append([]string{"pgid", pg.String()}, kv...)...)
}
