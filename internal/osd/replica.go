package osd

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// handleRepOp applies a write the primary sent, once this OSD has the
// primary's map. RepOps of one primary arrive in version order on its
// session; each enters the PG's op queue on the PG's one rep-op key
// (class Replica), so they are queued to the store in that order even if
// the queue's policy holds one back. Today's policy never does: the rep
// op starts at once and runs here, in the dispatcher, under one take of
// the PG lock. release returns the message's buffer, which the
// transaction's data aliases, once the store has committed it (or
// refused it).
//
// The answers go from the store's completion callbacks rather than from
// a goroutine parked per write: they run in the store's pipeline, so they
// only queue the reply (sendNow).
func (o *OSD) handleRepOp(from msgr.Peer, m wire.RepOp, release func()) {
	o.whenMap(from.Session, m.Epoch, func() {
		op := &repOp{o: o, from: from, m: m, epoch: o.Epoch(), release: release}
		p, _ := o.lookupPG(m.PG)
		if p == nil {
			op.abandon(op.epoch)
			return
		}
		if result := p.checkRepOp(op); result != 0 {
			release()
			op.reply(wire.ReplyCommitted, result)
			return
		}
		key := repOpsKey()
		p.mu.Lock()
		if !p.queue.Add(key, opq.Replica, opq.CostOf(op.bytes()), op) {
			p.mu.Unlock()
			return // runs when the queue hands it out (runKey)
		}
		c, result := p.applyRepOpLocked(op)
		next, more := p.queue.Done(key)
		p.startWaitingLocked()
		p.mu.Unlock()
		p.answerRepOp(op, c, result)
		if more {
			o.spawn(func() { p.runKey(key, next) })
		}
	})
}

// repOp is a write a replica received from its primary, an item of the
// PG's op queue; entry and info are decoded from m by checkRepOp.
type repOp struct {
	o       *OSD
	from    msgr.Peer
	m       wire.RepOp
	epoch   uint64 // this OSD's map epoch when it came, for the answers
	release func()
	entry   pglog.Entry
	info    pglog.Info
	// entries are entry and the extra ones (a snapshot's clone, the
	// snapdir: snapops.go), in version order; one holds them when there
	// are no extra ones, which saves a rep op an allocation.
	entries []pglog.Entry
	one     [1]pglog.Entry
}

// bytes is how many bytes of data the rep op's transaction writes.
func (op *repOp) bytes() int {
	n := 0
	if op.m.Txn != nil {
		for i := range op.m.Txn.Ops {
			n += len(op.m.Txn.Ops[i].Data)
		}
	}
	return n
}

// reply answers the primary.
func (op *repOp) reply(flags uint32, result int32) {
	r := wire.RepOpReply{PG: op.m.PG, Tid: op.m.Tid, Epoch: op.epoch, Flags: flags, Result: result}
	op.o.sendNow(op.from, msgr.Message{Type: wire.TypeRepOpReply, Version: 1, Payload: r.Encode()})
}

// abandon answers a rep op that will not run: its PG is gone here, or
// its interval ended while it waited in the queue.
func (op *repOp) abandon(uint64) {
	op.release()
	op.reply(wire.ReplyCommitted, -wire.ESTALE)
}

// answerRepOp answers the primary once the store has applied and
// committed the rep op's transaction c, or at once with result if it
// queued none.
func (p *pg) answerRepOp(op *repOp, c *objectstore.Completion, result int32) {
	if c == nil {
		op.release()
		if result != storeFailedResult {
			op.reply(wire.ReplyCommitted, result)
		}
		return
	}
	if op.m.WantApplied {
		c.OnApplied(func() { op.reply(wire.ReplyApplied, 0) })
	}
	c.OnCommitted(func(err error) {
		op.release()
		switch {
		case isStoreFailure(err):
			go p.o.storeFailed(err) // no answer: the write goes on without this OSD
		case err != nil && !stopping(err):
			// The log in memory took the write's entries when it was
			// queued, but the store did not: record them again, with
			// the write's objects missing (as above).
			p.o.log.Error("replica commit failed: its objects are now missing here", "pg", op.m.PG.String(), "err", err)
			p.mu.Lock()
			rerr := p.persistRejectedRepOpLocked(op, nil)
			p.mu.Unlock()
			if rerr != nil {
				go p.o.storeFailed(rerr)
				return
			}
			op.reply(wire.ReplyCommitted, rejectedRepOp)
		case err != nil:
			op.reply(wire.ReplyCommitted, storeErrno(err))
		default:
			op.reply(wire.ReplyApplied|wire.ReplyCommitted, 0)
		}
	})
}

// checkRepOp decodes and checks what a rep op carries, before it is
// queued; it returns the errno to answer with if it is malformed.
func (p *pg) checkRepOp(op *repOp) int32 {
	from, m := op.from, op.m
	entry, err := pglog.DecodeEntry(m.Entry)
	if err != nil {
		p.o.log.Warn("bad rep op entry", "from", from.Name.String(), "err", err)
		return -wire.EINVAL
	}
	entries, err := repOpEntries(op.one[:0], entry, m.Extra) // with a snapshot's clone (snapops.go)
	if err != nil {
		p.o.log.Warn("bad rep op entries", "from", from.Name.String(), "err", err)
		return -wire.EINVAL
	}
	info, err := pglog.DecodeInfo(m.Info)
	if err != nil || info.PG != m.PG {
		p.o.log.Warn("bad rep op info", "from", from.Name.String(), "err", err)
		return -wire.EINVAL
	}
	if m.Txn == nil {
		p.o.log.Warn("rep op without a transaction", "from", from.Name.String())
		return -wire.EINVAL
	}
	if err := m.Txn.Validate(); err != nil {
		p.o.log.Warn("bad rep op transaction", "from", from.Name.String(), "err", err)
		return -wire.EINVAL
	}
	if err := p.checkTxnScope(m.Txn); err != nil {
		p.o.log.Warn("rep op outside its PG", "from", from.Name.String(), "err", err)
		return -wire.EINVAL
	}
	op.entry, op.info, op.entries = entry, info, entries
	return 0
}

// applyRepOpLocked queues a checked rep op's transaction to the store,
// with the PG lock held. It returns the store's completion, or nil and
// the errno to answer with.
func (p *pg) applyRepOpLocked(op *repOp) (*objectstore.Completion, int32) {
	m, entry, info, entries := op.m, op.entry, op.info, op.entries
	sender, _ := osdID(op.from.Name.String())
	switch {
	case m.IntervalStart != p.info.SameIntervalSince || sender != p.primary:
		return nil, -wire.ESTALE // from another interval or another primary
	case entry.Version != m.Version:
		return nil, -wire.EINVAL
	case !p.log.Head().Less(entries[0].Version):
		// A write this OSD committed before it restarted, sent again
		// by a primary that never heard: it is here already.
		if e, ok := p.log.Lookup(entry.Req); ok && e.Version == entry.Version {
			return nil, 0
		}
		return nil, -wire.EINVAL
	}
	c, err := p.o.cfg.Store.Queue(p.o.ctx, m.Txn)
	if isStoreFailure(err) || errors.Is(err, objectstore.ErrNoSpace) {
		// A replica cannot refuse a write the primary applied: out of
		// space, it would miss this version and take the next ones,
		// its copy silently behind its log. It stops instead, as Ceph's
		// OSDs do; the PG goes on without it and recovers it from the
		// log when it returns with space. The full ratios and the
		// failsafe (full.go) are there so that this does not happen.
		go p.o.storeFailed(err)
		return nil, storeFailedResult
	} else if stopping(err) {
		return nil, storeFailedResult // closing: no answer, the primary resends to the next interval
	} else if err != nil {
		// The store refused the write's transaction (an op whose source
		// is absent or unreadable here: this copy was already wrong).
		// The log must still follow the primary's, with the write's
		// objects recorded as missing, so that its next entries apply
		// in order and the next peering has recovery push those objects
		// here (the primary answers its client with the error).
		p.o.log.Error("rep op refused by the store: its objects are now missing here", "pg", p.id.String(), "err", err)
		if rerr := p.recordRejectedRepOpLocked(op); rerr != nil {
			go p.o.storeFailed(rerr)
			return nil, storeFailedResult
		}
		return nil, rejectedRepOp
	}
	for _, e := range entries {
		if err := p.log.Append(e); err != nil {
			return nil, -wire.EINVAL
		}
	}
	// The primary chose the tail, and the transaction deleted the
	// trimmed entries' keys: the log in memory follows it, so that it
	// matches the log on disk.
	p.log.TrimThrough(info.LogTail)
	last := entries[len(entries)-1].Version
	p.info.LastUpdate, p.info.LastComplete, p.info.LogTail = last, last, p.log.Tail()
	p.info.Stats = info.Stats
	p.info.PurgedSnaps = info.PurgedSnaps                                      // as the primary's transaction stored it
	c.OnApplied(p.replRead.NoteRepOp(m.IntervalStart, m.CommittedBelow, last)) // replread.go
	return c, 0
}

// rejectedRepOp is a replica's answer to a write its store refused: it
// logged the write with its objects missing, for the next peering to
// recover them.
const rejectedRepOp = -wire.EIO

// recordRejectedRepOpLocked logs a checked rep op whose transaction the
// store refused, as applyRepOpLocked logs one it took, but with the
// write's objects recorded as missing here in place of its changes: the
// log and the store never disagree. It returns an error if the store
// takes not even that.
func (p *pg) recordRejectedRepOpLocked(op *repOp) error {
	var trimmed []pglog.Entry
	for _, e := range p.log.Entries() {
		if op.info.LogTail.Less(e.Version) {
			break
		}
		trimmed = append(trimmed, e)
	}
	for _, e := range op.entries {
		if err := p.log.Append(e); err != nil {
			return fmt.Errorf("pg %v: log of a refused rep op: %w", p.id, err)
		}
	}
	p.log.TrimThrough(op.info.LogTail)
	last := op.entries[len(op.entries)-1].Version
	p.info.LastUpdate, p.info.LastComplete, p.info.LogTail = last, last, p.log.Tail()
	p.info.Stats = op.info.Stats
	return p.persistRejectedRepOpLocked(op, trimmed)
}

// persistRejectedRepOpLocked stores a refused rep op's log entries, the
// trimmed entries' removal, the PG's info and the op's objects as
// missing, and marks them missing in memory. The store commits it in
// order with the PG's later transactions.
func (p *pg) persistRejectedRepOpLocked(op *repOp, trimmed []pglog.Entry) error {
	var t objectstore.Transaction
	pglog.AppendTxn(&t, p.id, op.entries...)
	pglog.TrimTxn(&t, p.id, trimmed)
	ids := make([]objid.ID, 0, len(op.entries))
	for _, e := range op.entries {
		if !slices.Contains(ids, e.Object) {
			ids = append(ids, e.Object)
		}
	}
	pglog.SetMissingTxn(&t, p.id, ids...)
	pglog.SaveInfoTxn(&t, p.info)
	if _, err := p.o.cfg.Store.Queue(p.o.ctx, &t); err != nil {
		return fmt.Errorf("pg %v: record a refused rep op: %w", p.id, err)
	}
	for _, id := range ids {
		p.missing[id] = true
	}
	return nil
}

// checkTxnScope refuses a transaction that touches anything but the PG's
// own collection: a replica applies what the primary sends, but only
// within the PG the message names.
func (p *pg) checkTxnScope(t *objectstore.Transaction) error {
	for i, op := range t.Ops {
		if op.Collection != p.coll || (op.Code == objectstore.OpMove && op.DestCollection != p.coll) ||
			op.Code == objectstore.OpCreateCollection || op.Code == objectstore.OpRemoveCollection ||
			op.Code == objectstore.OpSplitCollection {
			return fmt.Errorf("op %d (%s) on %v in a rep op of %v", i, op.Code, op.Collection, p.id)
		}
	}
	return nil
}

// sendToOSD sends msg to OSD id at its address in the current map.
func (o *OSD) sendToOSD(id int32, msg msgr.Message) error {
	return o.sendToOSDIn(o.currentMap(), id, msg)
}

// sendToOSDIn sends msg to OSD id at its address in map m.
func (o *OSD) sendToOSDIn(m *osdmap.Map, id int32, msg msgr.Message) error {
	if m == nil || !m.IsUp(id) {
		return fmt.Errorf("osd.%d is not up", id)
	}
	return o.ms.Send(o.ctx, auth.EntityName{Type: "osd", ID: strconv.Itoa(int(id))}, m.OSD(id).Addr, msg)
}

// osdID parses "osd.N".
func osdID(name string) (int32, bool) {
	s, ok := strings.CutPrefix(name, "osd.")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return int32(n), err == nil && n >= 0
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// storeFailedResult is applyRepOp's result when the store failed: the
// OSD is stopping, and the rep op gets no answer.
const storeFailedResult int32 = 1
