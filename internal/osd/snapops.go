package osd

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/osd/snaps"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Copy-on-write for snapshots (docs/SNAPSHOTS.md): the primary carries
// out what internal/osd/snaps decides. An object's snap set is the
// attribute SnapSetAttr of its head, or, once the head is deleted while
// clones remain, of its snapdir object (objid.SnapDir). A write that
// must preserve the head clones it (objectstore's Clone) in the write's
// own transaction, with a log entry of its own for the clone, so that
// replicas apply it with the write and recovery and backfill move clones
// like heads. A read at a snapshot reads the version the snap set says.

// SnapSetAttr is the internal attribute holding an object's snap set
// (beside ops.InfoAttr; user attributes carry ops.UserAttrPrefix).
const SnapSetAttr = "@snapset"

// snapRefusal returns the errno that refuses op for its snapshot fields
// in pool (0: none): a write names the head and carries a well-formed
// snap context; a read may name a snapshot or the head.
func snapRefusal(pool *osdmap.Pool, op *wire.OSDOp, write bool) int32 {
	if len(op.Ops) == 1 && op.Ops[0].Code == wire.OpListObjects {
		return 0 // its object is a cursor
	}
	if op.Object.Snap == objid.SnapDir || slices.ContainsFunc(op.Ops, func(o wire.ObjectOp) bool { return o.Code == opSnapTrim }) {
		return -wire.EINVAL // the snapdir is internal, and so are trims
	}
	if len(op.Ops) > 1 && slices.ContainsFunc(op.Ops, func(o wire.ObjectOp) bool {
		return o.Code == wire.OpListSnaps || o.Code == wire.OpRollback
	}) {
		return -wire.EINVAL // each alone in its request
	}
	if !write {
		return 0
	}
	if op.Object.Snap != objid.NoSnap {
		return -wire.EROFS
	}
	if _, err := snaps.ForWrite(pool, snaps.Context{Seq: op.SnapSeq, Snaps: op.Snaps}); err != nil {
		return -wire.EINVAL
	}
	return 0
}

// snapState is what the store holds of an object's snapshots, and the
// head as a write's execution starts from it (read in the same load).
type snapState struct {
	ss          snaps.SnapSet
	headExists  bool
	headSize    uint64
	fromSnapdir bool      // the snap set is the snapdir's (the head is gone)
	head        ops.State // the head's existence, size, info and snap set
}

// loadSnapState reads head's object once (ops.Load, with its snap set)
// and its snap set: the head's attribute, or the snapdir's when the head
// does not exist.
func (p *pg) loadSnapState(head objid.ID) (snapState, error) {
	var st snapState
	obj, err := ops.Load(p.o.ctx, p.o.cfg.Store, p.coll, head, SnapSetAttr)
	if err != nil {
		return st, fmt.Errorf("snap set of %v: %w", head, err)
	}
	st.head, st.headExists, st.headSize = obj, obj.Exists, obj.Size
	from, b := head, obj.Extra
	if !obj.Exists {
		from = head.WithSnap(objid.SnapDir)
		b, err = p.o.cfg.Store.GetAttr(p.o.ctx, p.coll, from, SnapSetAttr)
		switch {
		case errors.Is(err, objectstore.ErrNotFound) || errors.Is(err, objectstore.ErrNoAttr):
			return st, nil
		case err != nil:
			return st, fmt.Errorf("snap set of %v: %w", from, err)
		}
		st.fromSnapdir = true
	} else if b == nil {
		return st, nil // the head has no snap set
	}
	ss, err := snaps.Unmarshal(b)
	if err != nil {
		return st, fmt.Errorf("snap set of %v: %w: %w", from, objectstore.ErrCorrupt, err)
	}
	st.ss = ss
	return st, nil
}

// readTarget returns the object a read of id reads: id itself for the
// head, or the clone the snap set names for a snapshot; errno ENOENT if
// the object did not exist at that snapshot, or if the pool has removed
// the snapshot (its clone may wait for the trimmer, but it is no longer
// the pool's: Ceph's reads of a removed snap fail the same way).
func (p *pg) readTarget(id objid.ID) (objid.ID, int32, error) {
	if id.Snap == objid.NoSnap {
		return id, 0, nil
	}
	p.mu.Lock()
	removed := p.pool.RemovedSnaps.Contains(id.Snap)
	p.mu.Unlock()
	if removed {
		return id, -wire.ENOENT, nil
	}
	head := id.WithSnap(objid.NoSnap)
	st, err := p.loadSnapState(head)
	if err != nil {
		return id, 0, err
	}
	v, err := st.ss.Resolve(id.Snap, st.headExists)
	if errors.Is(err, snaps.ErrNotFound) {
		return id, -wire.ENOENT, nil
	}
	return head.WithSnap(v), 0, nil
}

// snapWrite is one write's snapshot work: the snap set before it, the
// clone it makes first (if any), and the snap set it leaves.
type snapWrite struct {
	head  objid.ID
	st    snapState
	next  snaps.SnapSet
	clone *snaps.Clone
	// trimmed are the clones a trim removes (snaptrim.go); trims, that
	// the trim changes the snap set at all (it may only drop removed
	// snapshots from clones that still serve others).
	trimmed []snaps.Clone
	trims   bool
}

// prepareSnapWrite decides a write's snapshot work before it executes:
// the snap context (the pool's, or the client's less removed snaps) and
// whether the head must be cloned first. The head as it read it (the
// snap set and the execution's start are one load) is for the write's
// execution (ops.Env.Loaded); nil if it read nothing (the execution
// reads the head itself).
func (p *pg) prepareSnapWrite(r *request) (*snapWrite, *ops.State, error) {
	var c snaps.Context
	if !isSnapOp(r, opSnapTrim) { // a trim preserves nothing
		var err error
		if c, err = snaps.ForWrite(&p.pool, snaps.Context{Seq: r.op.SnapSeq, Snaps: r.op.Snaps}); err != nil {
			return nil, nil, err // refused before it was queued (snapRefusal)
		}
	}
	if c.Empty() && p.pool.SnapSeq == 0 && !isSnapOp(r, wire.OpRollback) && !isSnapOp(r, opSnapTrim) {
		// A pool that never had a snapshot: no object has a snap set,
		// and writes pay no extra read.
		return nil, nil, nil
	}
	head := r.op.Object
	st, err := p.loadSnapState(head)
	if err != nil {
		return nil, nil, err
	}
	if c.Empty() && st.ss.Empty() && !isSnapOp(r, wire.OpRollback) && !isSnapOp(r, opSnapTrim) {
		return nil, &st.head, nil // no snapshot ever touched it: nothing to do
	}
	sw := &snapWrite{head: head, st: st}
	if sw.next, sw.clone, err = st.ss.MakeWriteable(c, st.headExists, st.headSize); err != nil {
		return nil, nil, fmt.Errorf("%v: %w", head, err) // EMLINK (startWriteLocked)
	}
	if isSnapOp(r, opSnapTrim) {
		var gone []uint64
		before := sw.next
		sw.trims = before.Trimmable(p.pool.RemovedSnaps.Contains)
		sw.next, gone = before.Trim(p.pool.RemovedSnaps.Contains)
		for _, id := range gone {
			sw.trimmed = append(sw.trimmed, *before.Find(id))
		}
	}
	return sw, &sw.st.head, nil
}

// entries returns how many log entries the write makes before the head's
// (the clone's).
func (sw *snapWrite) entriesBefore() uint64 {
	if sw == nil {
		return 0
	}
	n := uint64(len(sw.trimmed))
	if sw.clone != nil {
		n++
	}
	return n
}

// finish adds the snapshot work to a write's transaction: the clone
// first, the snap set after (on the head, or the snapdir if the head is
// gone and clones remain). It returns the log entries for the clone
// (before the head's, version cloneV) and the snapdir (after, version
// afterV), and the PG statistics with the clone and snapdir counted.
//
// The snap index (snapindex.go) changes in the same transaction: the
// entries of a new clone's snapshots come, those of trimmed snapshots and
// deleted clones go.
func (sw *snapWrite) finish(pg osdmap.PG, txn *objectstore.Transaction, res *ops.Result, reqOps []wire.ObjectOp,
	cloneV, afterV wire.Version, stats pglog.Stats) (before, after []pglog.Entry, _ pglog.Stats) {
	if sw == nil {
		return nil, nil, stats
	}
	coll := objectstore.PGCollection(pg.Pool, pg.Seed)
	next := headChanges(sw.next, reqOps, sw.st.headSize)
	add, remove := snaps.IndexChanges(sw.head, sw.st.ss, next)
	indexTxn(txn, pg, add, remove)
	if sw.clone != nil {
		cl := sw.head.WithSnap(sw.clone.ID)
		pre := objectstore.Transaction{}
		pre.Clone(coll, sw.head, cl)
		txn.Ops = append(pre.Ops, txn.Ops...)
		before = append(before, pglog.Entry{Version: cloneV, Kind: pglog.Modify, Object: cl})
		cloneV.Counter++
		stats = stats.Add(false, true, 0, sw.clone.Size)
	}
	for _, c := range sw.trimmed { // removed by snapTrim's transaction
		before = append(before, pglog.Entry{Version: cloneV, Kind: pglog.Delete, Object: sw.head.WithSnap(c.ID)})
		cloneV.Counter++
		stats = stats.Add(true, false, c.Size, 0)
	}
	snapdir := sw.head.WithSnap(objid.SnapDir)
	switch {
	case res.Exists:
		txn.SetAttr(coll, sw.head, SnapSetAttr, next.Marshal())
		if sw.st.fromSnapdir {
			txn.Remove(coll, snapdir)
			after = append(after, pglog.Entry{Version: afterV, Kind: pglog.Delete, Object: snapdir})
			stats = stats.Add(true, false, 0, 0)
		}
	case len(next.Clones) > 0:
		if !sw.st.fromSnapdir {
			txn.Touch(coll, snapdir)
			stats = stats.Add(false, true, 0, 0)
		}
		txn.SetAttr(coll, snapdir, SnapSetAttr, next.Marshal())
		after = append(after, pglog.Entry{Version: afterV, Kind: pglog.Modify, Object: snapdir})
	case sw.st.fromSnapdir:
		txn.Remove(coll, snapdir)
		after = append(after, pglog.Entry{Version: afterV, Kind: pglog.Delete, Object: snapdir})
		stats = stats.Add(true, false, 0, 0)
	}
	return before, after, stats
}

// headChanges records in ss what the ops changed of the head's data, so
// that the newest clone's overlap keeps only what it still shares.
// size is the head's size before them.
func headChanges(ss snaps.SnapSet, reqOps []wire.ObjectOp, size uint64) snaps.SnapSet {
	if len(ss.Clones) == 0 {
		return ss
	}
	for i := range reqOps {
		op := &reqOps[i]
		n := uint64(len(op.Data))
		switch op.Code {
		case wire.OpWrite:
			ss = ss.HeadModified(op.Offset, n)
			size = max(size, op.Offset+n)
		case wire.OpZero:
			ss = ss.HeadModified(op.Offset, op.Length)
		case wire.OpTruncate:
			ss = ss.HeadModified(op.Offset, math.MaxUint64)
			size = op.Offset
		case wire.OpAppend:
			ss = ss.HeadModified(size, math.MaxUint64)
			size += n
		case wire.OpWriteFull, wire.OpDelete, wire.OpCall:
			// A class method may change anything: claim nothing shared.
			ss = ss.HeadReplaced()
			size = n
		}
	}
	return ss
}

// repOpEntries returns a rep op's log entries in version order: its own
// and the extra ones (a clone's, the snapdir's), which must name other
// objects of the same head, each with a version of its own. It appends
// them to buf.
func repOpEntries(buf []pglog.Entry, entry pglog.Entry, extra [][]byte) ([]pglog.Entry, error) {
	entries := append(buf, entry)
	for _, b := range extra {
		e, err := pglog.DecodeEntry(b)
		if err != nil {
			return nil, err
		}
		if e.Object.WithSnap(objid.NoSnap) != entry.Object.WithSnap(objid.NoSnap) || e.Object.Snap == objid.NoSnap {
			return nil, fmt.Errorf("extra entry for %v beside %v", e.Object, entry.Object)
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b pglog.Entry) int {
		switch {
		case a.Version.Less(b.Version):
			return -1
		case b.Version.Less(a.Version):
			return 1
		}
		return 0
	})
	for i := 1; i < len(entries); i++ {
		if !entries[i-1].Version.Less(entries[i].Version) {
			return nil, fmt.Errorf("two entries at version %v", entries[i].Version)
		}
	}
	return entries, nil
}

// isSnapOp reports whether r is the snapshot op code (alone, as
// snapRefusal makes sure).
func isSnapOp(r *request, code wire.ObjectOpCode) bool {
	return len(r.op.Ops) == 1 && r.op.Ops[0].Code == code
}

// rollback executes an OpRollback (Ceph's _rollback_to) as version v of
// the head: after the clone the write may make first (sw), the head
// becomes a copy of the version the snapshot reads, or is deleted if the
// object did not exist at it. A snapshot the pool does not have (never
// made, or removed) is ENOENT.
func (p *pg) rollback(r *request, sw *snapWrite, v wire.Version) *ops.Result {
	snap := r.op.Ops[0].Version
	st := sw.st
	res := &ops.Result{Ops: make([]wire.ObjectOpResult, 1), FailedOp: -1,
		Existed: st.headExists, SizeBefore: st.headSize, Exists: st.headExists, Size: st.headSize}
	pool := &p.pool
	if snap == 0 || snap > pool.SnapSeq || pool.RemovedSnaps.Contains(snap) || (pool.PoolSnapsMode() && pool.Snap(snap) == nil) {
		res.Code, res.FailedOp, res.Ops[0].Result = wire.ENOENT, 0, -wire.ENOENT
		return res
	}
	info := ops.Info{Version: v, Mtime: p.o.cfg.Clock.Now().UnixNano()}
	res.Info = info
	head := sw.head
	switch act, from := sw.next.Rollback(snap, st.headExists); act {
	case snaps.RollbackFromClone:
		res.Txn.Clone(p.coll, head.WithSnap(from), head)
		res.Txn.SetAttr(p.coll, head, ops.InfoAttr, info.Encode())
		res.Exists, res.Size = true, sw.next.Find(from).Size
		sw.next = sw.next.RolledBack(from)
	case snaps.RollbackDelete:
		res.Txn.Remove(p.coll, head)
		res.Exists, res.Size = false, 0
		sw.next = sw.next.HeadReplaced()
	default:
		if st.headExists || sw.clone != nil {
			// Already as it was: a write all the same (it may have
			// cloned, and it takes the new version).
			res.Txn.SetAttr(p.coll, head, ops.InfoAttr, info.Encode())
		}
	}
	return res
}

// serveListSnaps answers an OpListSnaps: the object's clones, oldest
// first, and its head, as wire.SnapSetInfo; ENOENT if neither exists.
func (p *pg) serveListSnaps(r *request, epoch uint64) {
	head := r.op.Object.WithSnap(objid.NoSnap)
	st, err := p.loadSnapState(head)
	if err != nil {
		p.o.log.Error("list-snaps failed in the store", "pg", p.id.String(), "object", head.String(), "err", err)
		r.replyError(storeErrno(err), epoch)
		return
	}
	if !st.headExists && len(st.ss.Clones) == 0 {
		r.replyError(-wire.ENOENT, epoch)
		return
	}
	info := wire.SnapSetInfo{Seq: st.ss.Seq}
	for _, c := range st.ss.Clones {
		ci := wire.CloneInfo{ID: c.ID, Snaps: c.Snaps, Size: c.Size}
		for _, x := range c.Overlap {
			ci.Overlap = append(ci.Overlap, wire.Extent{Offset: x.Off, Length: x.Len})
		}
		info.Clones = append(info.Clones, ci)
	}
	if st.headExists {
		info.Clones = append(info.Clones, wire.CloneInfo{ID: objid.NoSnap, Size: st.headSize})
	}
	r.reply(wire.OSDOpReply{Epoch: epoch, Flags: wire.ReplyApplied | wire.ReplyCommitted,
		Ops: []wire.ObjectOpResult{{Data: info.Encode()}}})
}
