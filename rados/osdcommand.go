package rados

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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
// and returns its reply. A refusal is an *OpError with the OSD's errno;
// an OSD the client's map does not have or has down is an
// *OSDUnavailableError (the first also ErrNotFound).
func (c *Conn) OSDCommand(ctx context.Context, id int32, prefix string, args ...string) (MonReply, error) {
	return c.command(ctx, prefix, args, func(m *osdmap.Map) (int32, error) {
		if !m.IsUp(id) {
			return 0, newOSDUnavailableError(m, id)
		}
		return id, nil
	})
}

// OSDUnavailableError is the error of an admin command to an OSD that
// cannot take it in the client's map: one that does not exist (the
// error is then also ErrNotFound) or one that is down.
type OSDUnavailableError struct {
	ID     int32
	Epoch  osdmap.Epoch
	Exists bool
	// OSDs lists the OSDs the map has, as "osd.0-osd.2, osd.5" ("none"
	// if it has none), for a message about one that does not exist.
	OSDs string
}

func newOSDUnavailableError(m *osdmap.Map, id int32) *OSDUnavailableError {
	e := &OSDUnavailableError{ID: id, Epoch: m.Epoch(), Exists: m.Exists(id)}
	if !e.Exists {
		e.OSDs = osdRanges(m)
	}
	return e
}

// Reason says why the OSD cannot take the command, without naming the
// package or the command.
func (e *OSDUnavailableError) Reason() string {
	if !e.Exists {
		return fmt.Sprintf("osd.%d does not exist (the map at epoch %d has %s)", e.ID, e.Epoch, e.OSDs)
	}
	return fmt.Sprintf("osd.%d is down in map epoch %d", e.ID, e.Epoch)
}

func (e *OSDUnavailableError) Error() string { return "rados: tell: " + e.Reason() }

// Unwrap returns ErrNotFound for an OSD that does not exist.
func (e *OSDUnavailableError) Unwrap() error {
	if !e.Exists {
		return ErrNotFound
	}
	return nil
}

// osdRanges lists the OSDs of m in runs: "osd.0-osd.2, osd.5".
func osdRanges(m *osdmap.Map) string {
	var b strings.Builder
	for id := int32(0); id < m.MaxOSD(); id++ {
		if !m.Exists(id) {
			continue
		}
		end := id
		for end+1 < m.MaxOSD() && m.Exists(end+1) {
			end++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "osd.%d", id)
		if end > id {
			fmt.Fprintf(&b, "-osd.%d", end)
		}
		id = end
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// command sends an admin command to the OSD that target picks in the
// client's newest map and waits for the answer. If the session it went
// on fails first (the OSD died or restarted: client sessions are lossy),
// the command goes out again after a backoff, to whichever OSD target
// then picks, as stranded ops do; otherwise a command sent just as its
// OSD restarted would wait out the caller's whole deadline. Commands
// report state or queue work (a scrub), so one received twice is
// harmless.
func (c *Conn) command(ctx context.Context, prefix string, args []string, target func(*osdmap.Map) (int32, error)) (MonReply, error) {
	for attempt := 0; ; attempt++ {
		m := c.obj.currentMap()
		id, err := target(m)
		if err != nil {
			return MonReply{}, err
		}
		r, lost, err := c.sendCommand(ctx, id, m.OSD(id).Addr, prefix, args)
		if !lost {
			return r, err
		}
		c.log.Debug("rados: command's session failed; sending it again", "osd", id, "command", prefix, "err", err)
		t := c.obj.clk.NewTimer(sessionBackoff(attempt))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return MonReply{}, fmt.Errorf("rados: tell osd.%d %s: %w", id, prefix, ctxError(ctx))
		}
	}
}

// sendCommand sends one command to OSD id at addr and waits for its
// answer; lost reports that the session failed before one came.
func (c *Conn) sendCommand(ctx context.Context, id int32, addr, prefix string, args []string) (_ MonReply, lost bool, _ error) {
	peer := auth.EntityName{Type: "osd", ID: strconv.Itoa(int(id))}
	s, err := c.ms.Connect(peer, addr)
	if err != nil {
		return MonReply{}, false, fmt.Errorf("rados: tell osd.%d: %w", id, err)
	}
	tid, ch := c.obj.commands.add()
	defer c.obj.commands.remove(tid)
	msg := wire.MonCommand{Tid: tid, Cmd: wire.NewCommand(prefix, args...)}
	if err := s.Send(ctx, msgr.Message{Type: wire.TypeDaemonCommand, Version: 1, Payload: msg.Encode()}); err != nil {
		if ctx.Err() != nil {
			return MonReply{}, false, fmt.Errorf("rados: tell osd.%d %s: %w", id, prefix, ctxError(ctx))
		}
		return MonReply{}, true, err
	}
	select {
	case r := <-ch:
		return commandReply(prefix, r)
	case <-s.Done():
		select {
		case r := <-ch: // answered just before the session closed
			return commandReply(prefix, r)
		default:
			return MonReply{}, true, s.Err()
		}
	case <-ctx.Done():
		return MonReply{}, false, fmt.Errorf("rados: tell osd.%d %s: %w", id, prefix, ctxError(ctx))
	}
}

func commandReply(prefix string, r wire.Reply) (MonReply, bool, error) {
	out := MonReply{Status: r.Status, Data: r.Data, Text: r.Text}
	if r.Code != 0 {
		return out, false, &OpError{Op: prefix, Index: -1, Errno: int(r.Code), Status: r.Status}
	}
	return out, false, nil
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
	return c.command(ctx, prefix, append([]string{"pgid", pg.String()}, kv...), func(m *osdmap.Map) (int32, error) {
		if p := m.Pool(pg.Pool); p == nil || pg.Seed >= p.PGNum {
			return 0, fmt.Errorf("rados: %s: pg %v does not exist in map epoch %d", prefix, pg, m.Epoch())
		}
		mp, err := m.PGToUpActing(pg, &osdmap.Scratch{})
		if err != nil {
			return 0, fmt.Errorf("rados: %s %v: %w", prefix, pg, err)
		}
		if mp.ActingPrimary < 0 {
			return 0, fmt.Errorf("rados: %s: pg %v has no primary in map epoch %d", prefix, pg, m.Epoch())
		}
		return mp.ActingPrimary, nil
	})
}
