package osd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// handleRepOp applies a write the primary sent, once this OSD has the
// primary's map. RepOps of one primary arrive in version order on its
// session and are queued to the store in that order. release returns the
// message's buffer, which the transaction's data aliases, once the store
// has committed it (or refused it).
//
// The answers go from the store's completion callbacks rather than from
// a goroutine parked per write: they run in the store's pipeline, so they
// only queue the reply (sendNow).
func (o *OSD) handleRepOp(from msgr.Peer, m wire.RepOp, release func()) {
	o.whenMap(from.Session, m.Epoch, func() {
		epoch := o.Epoch()
		reply := func(flags uint32, result int32) {
			r := wire.RepOpReply{PG: m.PG, Tid: m.Tid, Epoch: epoch, Flags: flags, Result: result}
			o.sendNow(from, msgr.Message{Type: wire.TypeRepOpReply, Version: 1, Payload: r.Encode()})
		}
		p, _ := o.lookupPG(m.PG)
		if p == nil {
			release()
			reply(wire.ReplyCommitted, -wire.ESTALE)
			return
		}
		c, result := p.applyRepOp(from, m)
		if c == nil {
			release()
			if result != storeFailedResult {
				reply(wire.ReplyCommitted, result)
			}
			return
		}
		if m.WantApplied {
			c.OnApplied(func() { reply(wire.ReplyApplied, 0) })
		}
		c.OnCommitted(func(err error) {
			release()
			switch {
			case isStoreFailure(err):
				go o.storeFailed(err) // no answer: the write goes on without this OSD
			case err != nil:
				o.log.Error("replica commit failed", "pg", m.PG.String(), "err", err)
				reply(wire.ReplyCommitted, storeErrno(err))
			default:
				reply(wire.ReplyApplied|wire.ReplyCommitted, 0)
			}
		})
	})
}

// applyRepOp checks and queues a replicated write. It returns the store's
// completion, or nil and the errno to answer with.
func (p *pg) applyRepOp(from msgr.Peer, m wire.RepOp) (*objectstore.Completion, int32) {
	entry, err := pglog.DecodeEntry(m.Entry)
	if err != nil {
		p.o.log.Warn("bad rep op entry", "from", from.Name.String(), "err", err)
		return nil, -wire.EINVAL
	}
	info, err := pglog.DecodeInfo(m.Info)
	if err != nil || info.PG != m.PG {
		p.o.log.Warn("bad rep op info", "from", from.Name.String(), "err", err)
		return nil, -wire.EINVAL
	}
	txn := m.Txn
	if err := txn.Validate(); err != nil {
		p.o.log.Warn("bad rep op transaction", "from", from.Name.String(), "err", err)
		return nil, -wire.EINVAL
	}
	if err := p.checkTxnScope(txn); err != nil {
		p.o.log.Warn("rep op outside its PG", "from", from.Name.String(), "err", err)
		return nil, -wire.EINVAL
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	sender, _ := osdID(from.Name.String())
	switch {
	case m.IntervalStart != p.info.SameIntervalSince || sender != p.primary:
		return nil, -wire.ESTALE // from another interval or another primary
	case entry.Version != m.Version:
		return nil, -wire.EINVAL
	case !p.log.Head().Less(entry.Version):
		// A write this OSD committed before it restarted, sent again
		// by a primary that never heard: it is here already.
		if e, ok := p.log.Lookup(entry.Req); ok && e.Version == entry.Version {
			return nil, 0
		}
		return nil, -wire.EINVAL
	}
	c, err := p.o.cfg.Store.Queue(p.o.ctx, txn)
	if isStoreFailure(err) || errors.Is(err, objectstore.ErrNoSpace) {
		// A replica cannot refuse a write the primary applied: out of
		// space, it would miss this version and take the next ones,
		// its copy silently behind its log. It stops instead, as Ceph's
		// OSDs do; the PG goes on without it and recovers it from the
		// log when it returns with space. The full ratios and the
		// failsafe (full.go) are there so that this does not happen.
		go p.o.storeFailed(err)
		return nil, storeFailedResult
	} else if err != nil {
		p.o.log.Error("rep op failed in the store", "pg", p.id.String(), "err", err)
		return nil, storeErrno(err)
	}
	if err := p.log.Append(entry); err != nil {
		return nil, -wire.EINVAL
	}
	// The primary chose the tail, and the transaction deleted the
	// trimmed entries' keys: the log in memory follows it, so that it
	// matches the log on disk.
	p.log.TrimThrough(info.LogTail)
	p.info.LastUpdate, p.info.LastComplete, p.info.LogTail = entry.Version, entry.Version, p.log.Tail()
	p.info.Stats = info.Stats
	return c, 0
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
