package blockstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/alloc"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

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
	needsDrain := slices.ContainsFunc(t.Ops, func(op objectstore.Op) bool { return op.Code == objectstore.OpClone })
	for {
		s.prepMu.Lock()
		if !needsDrain || s.lastComp == nil || isClosed(s.lastComp.Applied()) {
			break
		}
		// Cloning copies omap entries, which Queue reads from Pebble:
		// wait until every queued transaction has applied.
		c := s.lastComp
		s.prepMu.Unlock()
		select {
		case <-c.Applied():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	defer s.prepMu.Unlock()
	if s.closed {
		return nil, objectstore.ErrClosed
	}
	if s.failed != nil {
		return nil, fmt.Errorf("blockstore: store failed earlier: %w", s.failed)
	}
	s.dropApplied()
	p, err := s.prepare(t)
	if errors.Is(err, objectstore.ErrNoSpace) && s.finishedSeq < s.nextSeq {
		// Space freed by earlier transactions comes back only when the
		// pipeline has finished them: wait for that and try again.
		seq := s.nextSeq
		s.prepMu.Unlock()
		err = s.waitFinished(ctx, seq)
		s.prepMu.Lock()
		if err != nil {
			return nil, err
		}
		if s.closed {
			return nil, objectstore.ErrClosed
		}
		if s.failed != nil {
			return nil, fmt.Errorf("blockstore: store failed earlier: %w", s.failed)
		}
		p, err = s.prepare(t)
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
	s.queueMu.Lock()
	s.queue = append(s.queue, p)
	s.queueMu.Unlock()
	s.kick()
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (s *Store) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// txnState is the working state of one transaction being prepared.
type txnState struct {
	s       *Store
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

// storedUnits are a node's units as Pebble has them: under shard keys,
// or under a unit key each (legacy, written before shards).
type storedUnits struct {
	units  []format.Unit
	legacy bool
}

// storedOf returns how rec's units are stored.
func storedOf(rec *format.Onode) storedUnits {
	return storedUnits{units: rec.KeyedUnits(), legacy: !rec.Inline && !rec.Shards}
}

type recState struct {
	coll  objectstore.CollectionID
	oid   objid.ID
	rec   *format.Onode // nil: absent
	was   *format.Onode // the record at this key before the transaction (nil: absent)
	orig  uint64        // stored bytes before the transaction
	dirty bool
}

func (s *Store) prepare(t *objectstore.Transaction) (*pendingTxn, error) {
	// Only a clone reads the batch back (its omap entries, which earlier
	// ops of the transaction may have changed); other transactions skip
	// the indexed batch's skiplist.
	batch := s.db.NewBatch()
	if slices.ContainsFunc(t.Ops, func(op objectstore.Op) bool { return op.Code == objectstore.OpClone }) {
		batch = s.db.NewIndexedBatch()
	}
	ts := &txnState{
		s:       s,
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

// writeRecord puts rs's changes into the batch: the record's value if
// it changed, and the shard keys whose units changed. It decides where
// the record keeps its units; a record that moves them (growing past
// maxInlineUnits, or written by a version without shards) deletes or
// writes all its keys.
func (ts *txnState) writeRecord(key string, rs *recState) {
	rec := rs.rec
	if rec == nil {
		_ = ts.batch.Delete([]byte(key), nil)
		return
	}
	rec.Inline = len(rec.Units) <= format.MaxInlineUnits
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
	var dirty []uint64 // shards to rewrite, ascending (diffUnits goes in LU order)
	mark := func(lu uint64) {
		if sh := lu / format.ShardUnits; len(dirty) == 0 || dirty[len(dirty)-1] != sh {
			dirty = append(dirty, sh)
		}
	}
	format.DiffUnits(was.units, keyed, func(u format.Unit) { mark(u.LU) }, mark)
	// index is where logical unit lu is, or would be, in keyed.
	index := func(lu uint64) int {
		i, _ := slices.BinarySearchFunc(keyed, lu, func(u format.Unit, lu uint64) int { return cmp.Compare(u.LU, lu) })
		return i
	}
	for _, sh := range dirty {
		lo, hi := index(sh*format.ShardUnits), index((sh+1)*format.ShardUnits)
		if lo == hi {
			_ = ts.batch.Delete(format.ShardKey(rec.Nid, sh), nil)
			continue
		}
		_ = ts.batch.Set(format.ShardKey(rec.Nid, sh), format.EncodeShard(keyed[lo:hi], sh*format.ShardUnits), nil)
	}
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

// maxPointUnitDeletes is the most unit keys destroy deletes one by one;
// a node with more loses them to one range deletion. Every read of a
// Pebble table with range deletions first splits them into fragments,
// and after 100,000 small objects were removed that work, redone
// whenever the block cache let the fragments go, was an eighth of an
// OSD's allocations (docs/benchmarks/2026-11-27.md, "A cluster that has
// run a while: the collector, PG logs and range deletions").
const maxPointUnitDeletes = 32

// destroy schedules the units of rec for release and deletes its unit
// keys and omap.
func (ts *txnState) destroy(rs *recState) {
	for _, u := range rs.rec.Units {
		ts.freeUnit(u.Dev)
	}
	nid := rs.rec.Nid
	if rs.rec.Omap {
		p := format.OmapPrefix(nid)
		_ = ts.batch.DeleteRange(p, format.PrefixEnd(p), nil)
	}
	ts.deleteUnitKeys(nid, ts.stored[nid])
	ts.stored[nid] = storedUnits{}
	rs.rec = nil
	rs.dirty = true
}

// deleteUnitKeys deletes the keys that hold st, node nid's units in
// Pebble (with this batch): one by one when they are few, else with a
// range deletion.
func (ts *txnState) deleteUnitKeys(nid uint64, st storedUnits) {
	var keys [][]byte
	if st.legacy {
		for _, u := range st.units[:min(len(st.units), maxPointUnitDeletes+1)] {
			keys = append(keys, format.UnitKey(nid, u.LU))
		}
	} else {
		for sh := range format.ShardRuns(st.units) {
			if keys = append(keys, format.ShardKey(nid, sh)); len(keys) > maxPointUnitDeletes {
				break
			}
		}
	}
	if len(keys) > maxPointUnitDeletes {
		lo, hi := format.ShardRange(nid)
		if st.legacy {
			lo, hi = format.UnitRange(nid)
		}
		_ = ts.batch.DeleteRange(lo, hi, nil)
		return
	}
	for _, k := range keys {
		_ = ts.batch.Delete(k, nil)
	}
}

func (ts *txnState) freeUnit(dev uint64) {
	ts.freed = append(ts.freed, alloc.Extent{Offset: dev, Length: ts.s.sb.AllocUnit})
}
