package blockstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/alloc"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

// One transaction's path, in the order this file reads:
//
//	Queue          validate, wait for a clone's drain, retry on ErrNoSpace
//	prepare        a txnState against the applied state plus the overlay
//	apply          each op in turn (the op bodies are in txnops.go)
//	finish         the records (writeRecord), allocation bitmap, node-id
//	               counter, collections, pool stats and data blocks into
//	               the batch and the pendingTxn
//	enqueueLocked  to the committer (commit.go: committer, then syncer
//	               and applier)
//
// Below them: the working state (txnState, recState and how a record is
// looked up, created and made private) and its small collections
// (txnRecords, txnBlocks, freshUnits).

// pendingTxn is a prepared transaction on its way through the committer.
type pendingTxn struct {
	seq      uint64
	comp     *objectstore.Completion
	batch    *pebble.Batch
	writes   []format.DeferredWrite // copy-on-write data to write before the batch commits
	deferred []format.DeferredWrite // in-place writes to apply once the batch is durable
	freed    []alloc.Extent         // units to release once the batch is durable
	records  []recordAt             // the records it changed (nil: removed)
	recBuf   [2]recordAt            // records' first backing array
	colls    map[objectstore.CollectionID]bool
	pools    []poolStored // new stored bytes of the pools it changed
}

// recordAt is an object record and its key.
type recordAt struct {
	key string
	rec *format.Onode
}

// overlayRecord is an object record as changed by a queued transaction
// that has not applied yet (rec nil: removed). seq is the transaction
// that last changed it; the committer drops the entry when that
// transaction applies.
type overlayRecord struct {
	rec *format.Onode
	seq uint64
}

// Queue validates t against the current state (the applied state plus
// every queued transaction), allocates its space and hands it to the
// committer. A transaction that fails validation changes nothing.
func (s *Store) Queue(ctx context.Context, t *objectstore.Transaction) (*objectstore.Completion, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if s.closed {
		return nil, objectstore.ErrClosed
	}
	if err := s.pipe.failure(); err != nil {
		return nil, fmt.Errorf("blockstore: store failed earlier: %w", err)
	}
	s.dropApplied()
	p, err := s.prepare(t, s.drainedLocked())
	for errors.Is(err, errCloneNeedsDrain) {
		// A clone of an object with omap entries reads them from Pebble:
		// wait until every queued transaction has applied, and prepare
		// again (a transaction queued meanwhile may have changed it).
		c := s.lastComp
		s.prepMu.Unlock()
		select {
		case <-c.Applied():
		case <-ctx.Done():
			s.prepMu.Lock() // for the deferred Unlock
			return nil, ctx.Err()
		}
		s.prepMu.Lock()
		if s.closed {
			return nil, objectstore.ErrClosed
		}
		if err := s.pipe.failure(); err != nil {
			return nil, fmt.Errorf("blockstore: store failed earlier: %w", err)
		}
		s.dropApplied()
		p, err = s.prepare(t, s.drainedLocked())
	}
	if errors.Is(err, objectstore.ErrNoSpace) && !s.pipe.finishedThrough(s.nextSeq) {
		// Space freed by earlier transactions comes back only when the
		// pipeline has finished them: wait for that and try again.
		seq := s.nextSeq
		s.prepMu.Unlock()
		err = s.pipe.waitFinished(ctx, seq)
		s.prepMu.Lock()
		if err != nil {
			return nil, err
		}
		if s.closed {
			return nil, objectstore.ErrClosed
		}
		if err := s.pipe.failure(); err != nil {
			return nil, fmt.Errorf("blockstore: store failed earlier: %w", err)
		}
		p, err = s.prepare(t, s.drainedLocked())
	}
	if err != nil {
		return nil, err
	}
	s.enqueueLocked(p)
	return p.comp, nil
}

// enqueueLocked hands a prepared transaction to the committer. The caller
// holds prepMu, so transactions queue in the order they were prepared.
func (s *Store) enqueueLocked(p *pendingTxn) {
	s.lastComp = p.comp
	s.pipe.enqueue(p)
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// errCloneNeedsDrain is prepare's answer when a clone must copy omap
// entries while transactions are queued that have not applied: it reads
// the entries from Pebble, which has only what has applied.
var errCloneNeedsDrain = errors.New("blockstore: clone of an object with omap waits for queued transactions")

// drainedLocked reports whether every queued transaction has applied.
// The caller holds prepMu.
func (s *Store) drainedLocked() bool {
	return s.lastComp == nil || isClosed(s.lastComp.Applied())
}

// prepare prepares t against the current state; drained says whether
// every earlier transaction has applied (a clone of an object with omap
// entries needs it, and fails with errCloneNeedsDrain without it).
func (s *Store) prepare(t *objectstore.Transaction, drained bool) (*pendingTxn, error) {
	// Only a clone reads the batch back (its omap entries, which earlier
	// ops of the transaction may have changed); other transactions skip
	// the indexed batch's skiplist.
	batch := s.db.NewBatch()
	if slices.ContainsFunc(t.Ops, func(op objectstore.Op) bool { return op.Code == objectstore.OpClone }) {
		batch = s.db.NewIndexedBatch()
	}
	ts := &txnState{
		s:       s,
		drained: drained,
		seq:     s.nextSeq + 1,
		batch:   batch,
		nextNid: s.nextNid,
		stored:  make(map[uint64]storedUnits),
	}
	for i := range t.Ops {
		if err := ts.apply(&t.Ops[i]); err != nil {
			ts.abort()
			return nil, fmt.Errorf("op %d (%s): %w", i, t.Ops[i].Code, err)
		}
	}
	return ts.finish(), nil
}

// apply prepares one operation against the transaction's working state.
func (ts *txnState) apply(op *objectstore.Op) error {
	c, o := op.Collection, op.Object
	switch op.Code {
	case objectstore.OpCreateCollection:
		if ts.collExists(c) {
			return fmt.Errorf("%w: collection %v", objectstore.ErrExists, c)
		}
		ts.setColl(c, true)
		return nil
	case objectstore.OpRemoveCollection:
		if !ts.collExists(c) {
			return fmt.Errorf("%w: %v", objectstore.ErrCollectionNotFound, c)
		}
		empty, err := ts.collEmpty(c)
		if err != nil {
			return err
		}
		if !empty {
			return fmt.Errorf("%w: %v", objectstore.ErrNotEmpty, c)
		}
		ts.setColl(c, false)
		return nil
	case objectstore.OpTouch:
		_, err := ts.create(c, o)
		return err
	case objectstore.OpWrite:
		rs, err := ts.create(c, o)
		if err != nil {
			return err
		}
		return ts.write(rs, op.Offset, op.Data, op.DataCRCs)
	case objectstore.OpZero:
		rs, err := ts.create(c, o)
		if err != nil {
			return err
		}
		return ts.zero(rs, op.Offset, op.Length)
	case objectstore.OpTruncate:
		rs, err := ts.existing(c, o)
		if err != nil {
			return err
		}
		return ts.truncate(rs, op.Offset)
	case objectstore.OpRemove:
		rs, err := ts.existing(c, o)
		if err != nil {
			return err
		}
		ts.destroy(rs)
		return nil
	case objectstore.OpClone:
		return ts.clone(c, o, op.Dest)
	case objectstore.OpCloneRange:
		return ts.cloneRange(c, o, op.Dest, op.Offset, op.Length, op.DestOffset)
	case objectstore.OpSetAttrs:
		rs, err := ts.create(c, o)
		if err != nil {
			return err
		}
		for k, v := range op.Attrs {
			rs.rec.Attrs.Set(k, append([]byte{}, v...))
		}
		return nil
	case objectstore.OpRmAttr:
		rs, err := ts.existing(c, o)
		if err != nil {
			return err
		}
		rs.rec.Attrs.Remove(op.Key)
		return nil
	case objectstore.OpOmapSetKeys:
		rs, err := ts.create(c, o)
		if err != nil {
			return err
		}
		for k, v := range op.Attrs {
			_ = ts.batch.Set(format.OmapKey(rs.rec.Nid, k), v, nil)
		}
		rs.rec.Omap = rs.rec.Omap || len(op.Attrs) > 0
		return nil
	case objectstore.OpOmapRmKeys:
		rs, err := ts.existing(c, o)
		if err != nil {
			return err
		}
		for _, k := range op.Keys {
			_ = ts.batch.Delete(format.OmapKey(rs.rec.Nid, k), nil)
		}
		return nil
	case objectstore.OpOmapRmKeyRange:
		rs, err := ts.existing(c, o)
		if err != nil {
			return err
		}
		if op.Key < op.EndKey {
			_ = ts.batch.DeleteRange(format.OmapKey(rs.rec.Nid, op.Key), format.OmapKey(rs.rec.Nid, op.EndKey), nil)
		}
		return nil
	case objectstore.OpOmapClear:
		rs, err := ts.existing(c, o)
		if err != nil {
			return err
		}
		p := format.OmapPrefix(rs.rec.Nid)
		_ = ts.batch.DeleteRange(p, format.PrefixEnd(p), nil)
		rs.rec.OmapHeader, rs.rec.Omap = nil, false
		return nil
	case objectstore.OpOmapSetHeader:
		rs, err := ts.create(c, o)
		if err != nil {
			return err
		}
		rs.rec.OmapHeader = append([]byte(nil), op.Data...)
		return nil
	case objectstore.OpMove:
		return ts.move(c, o, op.DestCollection, op.Dest)
	case objectstore.OpSplitCollection:
		return ts.split(c, op.DestCollection, uint8(op.Offset), uint32(op.Length))
	}
	return fmt.Errorf("%w: op %v", objectstore.ErrInvalid, op.Code)
}

// finish publishes a prepared transaction to the prepare state and
// builds what the committer needs.
func (ts *txnState) finish() *pendingTxn {
	s := ts.s
	s.nextSeq = ts.seq
	p := &pendingTxn{
		seq:   ts.seq,
		comp:  objectstore.NewCompletion(),
		batch: ts.batch,
		freed: ts.freed,
		colls: ts.colls,
	}
	// Allocation bitmap: allocations first, then frees, so a unit both
	// allocated and freed here ends free.
	var dirty []uint64
	for _, e := range ts.fresh.allocated {
		dirty = s.setBits(e, true, dirty)
	}
	for _, e := range ts.freed {
		dirty = s.setBits(e, false, dirty)
	}
	slices.Sort(dirty)
	for _, r := range slices.Compact(dirty) {
		_ = ts.batch.Set(format.BitmapKey(r), s.regionValue(r), nil)
	}
	if s.nextNid = ts.nextNid; s.nextNid > s.nidLimit {
		// The counter is persisted ahead of the nids issued, nidReserve
		// at a time, so that not every creation writes it: a nid is
		// issued only below a limit committed in its batch or an earlier
		// one, and Open resumes from the limit.
		s.nidLimit = s.nextNid + nidReserve
		_ = ts.batch.Set([]byte{format.PrefixNextNid}, format.EncodeUvarint(s.nidLimit), nil)
	}
	for c, exists := range ts.colls {
		s.collsPrep[c] = exists
		if exists {
			_ = ts.batch.Set(format.CollectionKey(c), format.EncodeEmpty(), nil)
		} else {
			_ = ts.batch.Delete(format.CollectionKey(c), nil)
			delete(s.collsPrep, c)
		}
	}
	var deltas []poolBytes
	for _, e := range ts.records.list {
		key, rs := e.key, e.rs
		if !rs.dirty {
			continue
		}
		ts.writeRecord(key, rs)
		s.overlay[key] = overlayRecord{rec: rs.rec, seq: ts.seq}
		if p.records == nil {
			p.records = p.recBuf[:0]
		}
		p.records = append(p.records, recordAt{key, rs.rec})
		var now uint64
		if rs.rec != nil {
			now = rs.rec.AllocatedBytes()
		}
		deltas = addPoolBytes(deltas, statsPool(rs.coll), int64(now)-int64(rs.orig))
	}
	for _, d := range deltas {
		if d.bytes == 0 {
			continue
		}
		v := uint64(int64(s.poolPrep[d.pool]) + d.bytes)
		s.poolPrep[d.pool] = v
		p.pools = append(p.pools, poolStored{d.pool, v})
		_ = ts.batch.Set(format.PoolStatsKey(d.pool), format.EncodeUvarint(v), nil)
	}
	// Data: copy-on-write blocks are written before the batch commits,
	// deferred blocks go into the batch and are applied after.
	for _, b := range ts.blocks.sorted() {
		off := b.dev
		list := &p.writes
		if b.deferred {
			s.data.put(ts.seq, off, b.data)
			list = &p.deferred
		}
		if n := len(*list); n > 0 {
			last := &(*list)[n-1]
			if last.DevOff+uint64(len(last.Data)) == off {
				// Copy-on-write blocks adjacent in memory (one unit, or a
				// caller's buffer covering whole units) become one
				// write without copying; deferred blocks are merged by
				// copying into one record.
				if !b.deferred && adjacent(last.Data, b.data) && len(last.Data) < maxDataWrite {
					last.Data = last.Data[:len(last.Data)+len(b.data)]
					continue
				}
				if b.deferred && uint64(len(last.Data)) < 1<<20 {
					last.Data = append(last.Data, b.data...)
					continue
				}
			}
		}
		// Block data never changes: write it as it is. Deferred data is
		// the transaction's own copy; its capacity is capped so that a
		// merge above copies rather than appending into memory next to
		// it.
		data := b.data
		if b.deferred {
			data = data[:len(data):len(data)]
		}
		*list = append(*list, format.DeferredWrite{DevOff: off, Data: data})
	}
	for _, w := range p.writes {
		s.data.putRun(ts.seq, w.DevOff, w.Data)
	}
	// The data goes to the WAL only; the key says where to find it.
	for _, w := range p.deferred {
		s.prepEnc.Reset()
		_ = ts.batch.LogData(w.EncodeLogged(&s.prepEnc, ts.seq), nil) // LogData copies
		_ = ts.batch.Set(format.DeferredKey(ts.seq, w.DevOff), nil, nil)
	}
	return p
}

// writeRecord puts rs's changes into the batch: the record's value if
// it changed, and the shard keys whose units changed. It decides where
// the record keeps its units; a record that moves them (growing past
// MaxInlineUnits, or written by a version without shards) deletes or
// writes all its keys.
func (ts *txnState) writeRecord(key string, rs *recState) {
	rec := rs.rec
	if rec == nil {
		_ = ts.batch.Delete([]byte(key), nil)
		return
	}
	rec.Inline = rec.Units.Len() <= format.MaxInlineUnits
	rec.Shards = !rec.Inline
	if rs.was == nil || !format.SameValue(rs.was, rec) {
		v := rec.Encode()
		_ = ts.batch.Set([]byte(key), v, nil)
		ts.s.noteRecord(key, rs.was == nil)
		if rec.Inline {
			rec.Enc = v
		}
	} else if rec.Inline {
		if rec.Enc = rs.was.Enc; rec.Enc == nil {
			rec.Enc = rec.Encode()
		}
	}
	keyed := rec.KeyedUnits()
	was := ts.stored[rec.Nid]
	if was.legacy {
		ts.deleteUnitKeys(rec.Nid, was)
		was = storedUnits{}
	}
	// Only the shards whose chunks the transaction changed are compared
	// (format.UnitMap): a small overwrite of a large object rewrites one.
	format.DiffShards(was.units, keyed, func(sh uint64, units []format.Unit) {
		if len(units) == 0 {
			_ = ts.batch.Delete(format.ShardKey(rec.Nid, sh), nil)
			return
		}
		_ = ts.batch.Set(format.ShardKey(rec.Nid, sh), format.EncodeShard(units, sh*format.ShardUnits), nil)
	})
	ts.stored[rec.Nid] = storedUnits{units: keyed}
}

// abort undoes a failed preparation: only the allocations need undoing.
func (ts *txnState) abort() {
	if len(ts.fresh.allocated) > 0 {
		if err := ts.s.alloc.Release(ts.fresh.allocated...); err != nil {
			ts.s.log.Error("blockstore: release after failed transaction", "err", err)
		}
	}
	_ = ts.batch.Close()
}

// poolBytes is a change of a pool's stored bytes; poolStored its new
// total. A transaction touches a pool or two: slices cost less than maps.
type (
	poolBytes struct {
		pool  int64
		bytes int64
	}
	poolStored struct {
		pool   int64
		stored uint64
	}
)

// addPoolBytes adds n bytes to pool's entry in ds.
func addPoolBytes(ds []poolBytes, pool, n int64) []poolBytes {
	for i := range ds {
		if ds[i].pool == pool {
			ds[i].bytes += n
			return ds
		}
	}
	return append(ds, poolBytes{pool, n})
}

// maxDataWrite bounds one write of copy-on-write data to the file.
const maxDataWrite = 16 << 20

// adjacent reports whether b starts in memory where a ends, within a's
// capacity, so that a[:len(a)+len(b)] covers both without copying.
func adjacent(a, b []byte) bool {
	return len(b) > 0 && cap(a)-len(a) >= len(b) && &a[:len(a)+1][len(a)] == &b[0]
}

// metaPool is the key under which the meta collection's stored bytes are
// counted: PG and temp collections have pools >= 0.
const metaPool = math.MinInt64

// statsPool is the pool c's objects count towards.
func statsPool(c objectstore.CollectionID) int64 {
	if c.Kind == objectstore.KindMeta {
		return metaPool
	}
	return c.Pool
}

// txnState is the working state of one transaction being prepared.
type txnState struct {
	s       *Store
	drained bool // every earlier transaction has applied (clone)
	seq     uint64
	batch   *pebble.Batch
	records txnRecords
	colls   map[objectstore.CollectionID]bool // collections it creates or removes (nil: none)
	blocks  txnBlocks                         // the checksum blocks it writes
	fresh   freshUnits                        // the units it allocated
	freed   []alloc.Extent
	nextNid uint64
	// stored holds the units in Pebble of every node the transaction
	// has looked at, so that finish writes only the shard keys that
	// change (a Move keeps the node and its keys).
	stored map[uint64]storedUnits
}

type recState struct {
	coll  objectstore.CollectionID
	oid   objid.ID
	rec   *format.Onode // nil: absent
	was   *format.Onode // the record at this key before the transaction (nil: absent)
	orig  uint64        // stored bytes before the transaction
	dirty bool
}

// storedUnits are a node's units as Pebble has them: under shard keys,
// or under a unit key each (legacy, written before shards).
type storedUnits struct {
	units  *format.UnitMap // nil: none; never changed
	legacy bool
}

// storedOf returns how rec's units are stored.
func storedOf(rec *format.Onode) storedUnits {
	return storedUnits{units: rec.KeyedUnits(), legacy: !rec.Inline && !rec.Shards}
}

// lookup returns the working state of o in c, loading it from the
// prepare overlay, the cache or Pebble. c must exist.
func (ts *txnState) lookup(c objectstore.CollectionID, o objid.ID) (*recState, error) {
	if !ts.collExists(c) {
		return nil, fmt.Errorf("%w: %v", objectstore.ErrCollectionNotFound, c)
	}
	var buf [128]byte
	kb := format.AppendObjectKey(buf[:0], c, o)
	if rs, ok := ts.records.get(kb); ok {
		return rs, nil
	}
	key := string(kb)
	rec, err := ts.s.prepRecord(key)
	if err != nil {
		return nil, fmt.Errorf("%v %v: %w", c, o, err)
	}
	rs := &recState{coll: c, oid: o, rec: rec, was: rec}
	if rec != nil {
		rs.orig = rec.AllocatedBytes()
		if _, ok := ts.stored[rec.Nid]; !ok {
			ts.stored[rec.Nid] = storedOf(rec)
		}
	}
	ts.records.add(key, rs)
	return rs, nil
}

// prepRecord reads a record as of prepare order. Records from the cache
// or the overlay are shared: never modify them.
func (s *Store) prepRecord(key string) (*format.Onode, error) {
	if ov, ok := s.overlay[key]; ok {
		return ov.rec, nil
	}
	if rec, ok := s.cache.get(key); ok {
		return rec, nil
	}
	return s.loadRecord(key)
}

// existing returns o's working state, or ErrNotFound.
func (ts *txnState) existing(c objectstore.CollectionID, o objid.ID) (*recState, error) {
	rs, err := ts.lookup(c, o)
	if err != nil {
		return nil, err
	}
	if rs.rec == nil {
		return nil, &objectstore.NotFoundError{Collection: c, Object: o}
	}
	return ts.mutable(rs), nil
}

// create returns o's working state, creating an empty object if absent.
func (ts *txnState) create(c objectstore.CollectionID, o objid.ID) (*recState, error) {
	rs, err := ts.lookup(c, o)
	if err != nil {
		return nil, err
	}
	if rs.rec == nil {
		rs.rec = &format.Onode{Nid: ts.newNid()}
		rs.dirty = true
		return rs, nil
	}
	return ts.mutable(rs), nil
}

// peek returns o's working state without making it private; o must exist.
func (ts *txnState) peek(c objectstore.CollectionID, o objid.ID) (*recState, error) {
	rs, err := ts.lookup(c, o)
	if err != nil {
		return nil, err
	}
	if rs.rec == nil {
		return nil, &objectstore.NotFoundError{Collection: c, Object: o}
	}
	return rs, nil
}

// mutable makes rs's record private to the transaction and marks it dirty.
func (ts *txnState) mutable(rs *recState) *recState {
	if !rs.dirty {
		rs.rec = rs.rec.Clone()
		rs.dirty = true
	}
	return rs
}

// nidReserve is how many node ids the persisted counter runs ahead.
const nidReserve = 1024

func (ts *txnState) newNid() uint64 {
	n := ts.nextNid
	ts.nextNid++
	return n
}

// setColl records that the transaction creates (or removes) c; the map
// is made only for the few transactions that do.
func (ts *txnState) setColl(c objectstore.CollectionID, exists bool) {
	if ts.colls == nil {
		ts.colls = make(map[objectstore.CollectionID]bool)
	}
	ts.colls[c] = exists
}

// collExists reports whether c exists as this transaction sees it.
func (ts *txnState) collExists(c objectstore.CollectionID) bool {
	if e, ok := ts.colls[c]; ok {
		return e
	}
	return ts.s.collsPrep[c]
}

// txnRecords holds the records a transaction has looked at, by key. A
// transaction usually touches two (its object and a PG's meta object):
// a slice searched in order costs less than a map per transaction. Past
// txnRecordsIndexed entries (a PG removal, a large clone) a map indexes
// them.
type txnRecords struct {
	list  []recEntry
	index map[string]int // position in list, once it has grown
	first [2]recEntry    // list's first backing array, allocated with it
}

type recEntry struct {
	key string
	rs  *recState
}

const txnRecordsIndexed = 8

// get returns the state of the record at key, if the transaction has it.
func (r *txnRecords) get(key []byte) (*recState, bool) {
	if r.index != nil {
		i, ok := r.index[string(key)]
		if !ok {
			return nil, false
		}
		return r.list[i].rs, true
	}
	for i := range r.list {
		if r.list[i].key == string(key) {
			return r.list[i].rs, true
		}
	}
	return nil, false
}

// add records rs under key, which the transaction does not have yet.
func (r *txnRecords) add(key string, rs *recState) {
	if r.list == nil {
		r.list = r.first[:0]
	}
	r.list = append(r.list, recEntry{key, rs})
	switch {
	case r.index != nil:
		r.index[key] = len(r.list) - 1
	case len(r.list) > txnRecordsIndexed:
		r.index = make(map[string]int, 2*len(r.list))
		for i, e := range r.list {
			r.index[e.key] = i
		}
	}
}

// txnBlock is the new contents of one checksum block.
type txnBlock struct {
	data     []byte
	deferred bool
}

// blockAt is a txnBlock and its device offset.
type blockAt struct {
	dev uint64
	txnBlock
}

// txnBlocks holds the checksum blocks a transaction writes, by device
// offset. Most transactions only add the blocks of units they allocated
// and never look one up, so the blocks are kept in a slice, and the index
// a lookup needs is built at the first lookup. A 4 MiB write has 1,024
// blocks: a map of them cost more than half of its preparation.
type txnBlocks struct {
	list  []blockAt
	index map[uint64]int // dev -> position in list; nil until a lookup
}

// grow makes room for n more blocks.
func (b *txnBlocks) grow(n int) { b.list = slices.Grow(b.list, n) }

// addFresh adds the block at dev, which b does not hold: a block of a
// unit the transaction allocated, written for the first time.
func (b *txnBlocks) addFresh(dev uint64, blk txnBlock) {
	if b.index != nil {
		b.index[dev] = len(b.list)
	}
	b.list = append(b.list, blockAt{dev, blk})
}

// maxScanBlocks is the most blocks a lookup scans one by one before
// b builds its index: a small overwrite holds one or two.
const maxScanBlocks = 8

// find returns the position of the block at dev in b.list, if b holds
// it.
func (b *txnBlocks) find(dev uint64) (int, bool) {
	if b.index == nil && len(b.list) <= maxScanBlocks {
		for i := range b.list {
			if b.list[i].dev == dev {
				return i, true
			}
		}
		return 0, false
	}
	if b.index == nil {
		b.index = make(map[uint64]int, len(b.list))
		for i, x := range b.list {
			b.index[x.dev] = i
		}
	}
	i, ok := b.index[dev]
	return i, ok
}

// get returns the block at dev, if b holds it.
func (b *txnBlocks) get(dev uint64) (txnBlock, bool) {
	i, ok := b.find(dev)
	if !ok {
		return txnBlock{}, false
	}
	return b.list[i].txnBlock, true
}

// set sets the block at dev, replacing any b holds.
func (b *txnBlocks) set(dev uint64, blk txnBlock) {
	if i, ok := b.find(dev); ok {
		b.list[i].txnBlock = blk
		return
	}
	b.addFresh(dev, blk)
}

// sorted returns the blocks in device order; b is not used after.
func (b *txnBlocks) sorted() []blockAt {
	byDev := func(x, y blockAt) int { return cmp.Compare(x.dev, y.dev) }
	if !slices.IsSortedFunc(b.list, byDev) {
		slices.SortFunc(b.list, byDev)
	}
	return b.list
}

// freshUnits answers whether a unit was allocated by the transaction,
// from the extents it allocated.
type freshUnits struct {
	allocated []alloc.Extent
	sorted    []alloc.Extent // allocated by offset, when there are many
}

// maxScanExtents is the most extents contains scans one by one.
const maxScanExtents = 16

func (f *freshUnits) add(exts []alloc.Extent) { f.allocated = append(f.allocated, exts...) }

// contains reports whether the unit at dev lies in an allocated extent.
func (f *freshUnits) contains(dev uint64) bool {
	in := func(e alloc.Extent) bool { return dev >= e.Offset && dev-e.Offset < e.Length }
	if len(f.allocated) <= maxScanExtents {
		return slices.ContainsFunc(f.allocated, in)
	}
	if len(f.sorted) != len(f.allocated) {
		f.sorted = slices.SortedFunc(slices.Values(f.allocated), func(x, y alloc.Extent) int { return cmp.Compare(x.Offset, y.Offset) })
	}
	i := sort.Search(len(f.sorted), func(i int) bool { return f.sorted[i].Offset > dev })
	return i > 0 && in(f.sorted[i-1])
}
