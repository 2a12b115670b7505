package blockstore

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/alloc"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

// The bodies of a transaction's ops (apply in txn.go dispatches to
// them): data (write, zero, truncate and the units and checksum blocks
// they touch), whole objects (destroy, clone, cloneRange, move) and
// collections (collEmpty). They change the transaction's working state
// only; finish turns it into the batch.

// How a write treats one allocation unit.
const (
	unitNew      = iota // fresh space: a large whole-unit overwrite, or a unit without space
	unitInPlace         // the unit was allocated by this transaction: patch it in memory
	unitDeferred        // partial or small overwrite of committed space: deferred write
)

// write writes data at off of rs's object; known, if not nil, holds the
// crc32c of data's whole objectstore.DataCRCPiece pieces
// (objectstore.Op.DataCRCs).
func (ts *txnState) write(rs *recState, off uint64, data []byte, known []uint32) error {
	rec := rs.rec
	end := off + uint64(len(data))
	if len(data) == 0 {
		// Nothing to write, and no unit to map: a unit without a
		// written block would leave the data file short of it (Open).
		rec.Size = max(rec.Size, end)
		return nil
	}
	au := ts.s.sb.AllocUnit
	type step struct {
		lu, ws, we uint64
		mode       int
	}
	var steps []step
	need, unmapped := 0, 0
	// A small write's data goes to the WAL whichever way it goes
	// (deferNewMax): one covering committed units whole is written over
	// them in place, as a partial overwrite is, rather than into new
	// units that replace them (overwriteInPlaceMax).
	inPlace := uint64(len(data)) <= overwriteInPlaceMax
	for lu := off / au; lu*au < end; lu++ {
		us := lu * au
		ws, we := max(off, us), min(end, us+au)
		cur, mapped := rec.Units.Get(lu)
		mode := unitDeferred
		switch {
		case mapped && ts.fresh.contains(cur.Dev):
			mode = unitInPlace
		case !mapped || (ws == us && we == us+au && !inPlace):
			mode = unitNew
			need++
		}
		if !mapped {
			unmapped++
		}
		steps = append(steps, step{lu, ws, we, mode})
	}
	var hint uint64
	if last, ok := rec.Units.Last(); ok {
		hint = last.Dev + au
	}
	devs, err := ts.allocUnits(need, hint)
	if err != nil {
		return err
	}
	var newBytes uint64 // what the new units write to the device
	for _, st := range steps {
		if st.mode == unitNew {
			lo, hi := ts.newSpan(st.ws-st.lu*au, st.we-st.ws)
			newBytes += hi - lo
		}
	}
	deferNew := newBytes <= deferNewMax
	ts.blocks.grow(need * int(ts.s.sb.BlocksPerUnit()))
	for _, st := range steps {
		part := data[st.ws-off : st.we-off]
		if st.mode == unitNew {
			ts.newUnit(rec, st.lu, st.ws-st.lu*au, part, devs[0], deferNew, knownCRCs(known, st.ws-off, uint64(len(part))))
			devs = devs[1:]
			continue
		}
		if err := ts.patchUnit(rs, st.lu, st.ws, part, st.mode == unitDeferred, knownCRCs(known, st.ws-off, uint64(len(part)))); err != nil {
			return err
		}
	}
	rec.Pages = format.AddSpan(rec.Pages, off, end)
	rec.Size = max(rec.Size, end)
	return nil
}

// knownCRCs returns the piece checksums of data[at:at+n] from known,
// those of data's pieces: nil unless at starts a piece.
func knownCRCs(known []uint32, at, n uint64) []uint32 {
	const piece = objectstore.DataCRCPiece
	if len(known) == 0 || at%piece != 0 || at/piece >= uint64(len(known)) {
		return nil
	}
	first := at / piece
	return known[first:min(uint64(len(known)), first+n/piece)]
}

// deferNewMax is the most new space one write fills with deferred writes
// rather than copy-on-write data (counting the blocks written, not the
// units allocated: newSpan). A small write of a new object (a 4 KiB
// object, a PG log's info) then costs one WAL sync instead of a data-file
// sync followed by a WAL sync; the data file gets it later, in batches.
// Fresh space is as safe to defer into as old: the allocator hands a unit
// out again only after the applier has written every deferred write into
// it, and replay applies 'D' keys in commit order, so a stale key for
// reused space is always followed by its new owner's (commit.go).
const deferNewMax = 32 << 10

// overwriteInPlaceMax is the longest write that overwrites committed
// units it covers whole in place, with deferred writes, instead of
// mapping new units in their stead (copy-on-write). Both ways such a
// write's data travels in the WAL first (deferNewMax); in place, the
// transaction allocates and frees nothing, so its batch carries no
// bitmap region (two, of up to 520 bytes each, once the free space is
// fragmented), and the object stays where it was on the device rather
// than being scattered over the holes earlier overwrites left. A 4 KiB
// random write to a block image is such a write on each OSD (docs/OSD.md,
// "Small overwrites and the data cache").
const overwriteInPlaceMax = deferNewMax

// newSpan returns the part [lo, hi) of a fresh unit that a write of n
// bytes at offset at within it fills: the checksum blocks it touches.
// The unit's other blocks are not written; they hold no marked page, so
// readers take them for zeros (format.HoldsData). With checksum blocks smaller
// than a page the whole unit is written, because a page the write marks
// would then span blocks it does not touch.
func (ts *txnState) newSpan(at, n uint64) (lo, hi uint64) {
	sb := ts.s.sb
	if sb.ChecksumBlock < format.PageSize {
		return 0, sb.AllocUnit
	}
	cb := sb.ChecksumBlock
	return at / cb * cb, (at + n + cb - 1) / cb * cb
}

// newUnit maps logical unit lu of rec to the fresh unit at dev, holding
// part at offset at within the unit and zeros elsewhere, as copy-on-write
// data or, if deferred, as deferred writes; the unit it replaces, if any,
// is freed. Only the blocks of newSpan are written.
//
// known, if not nil, holds the checksums of part's whole
// objectstore.DataCRCPiece pieces; whole blocks of that size take theirs
// rather than being hashed.
func (ts *txnState) newUnit(rec *format.Onode, lu, at uint64, part []byte, dev uint64, deferred bool, known []uint32) {
	sb := ts.s.sb
	cb := sb.ChecksumBlock
	if cb != objectstore.DataCRCPiece || at%cb != 0 {
		known = nil // blocks and pieces do not line up
	}
	lo, hi := ts.newSpan(at, uint64(len(part)))
	// Whole blocks need no copy: the committer writes copy-on-write
	// data to the file, and drops it from the data overlay, before the
	// transaction applies, and callers keep their buffers unchanged
	// until then (objectstore.Transaction). Deferred data stays in the
	// overlay until the applier has written it, after Committed, when
	// the caller may reuse its buffer: it is copied.
	content := part
	switch {
	case at != lo || uint64(len(part)) != hi-lo:
		content = make([]byte, hi-lo)
		copy(content[at-lo:], part)
	case deferred:
		content = bytes.Clone(part) // not zeroed first, unlike make
	}
	u := format.BlankUnit(lu, dev, sb.BlocksPerUnit())
	for b := range u.NumSums() {
		sum := ts.s.zeroSum
		if bs := uint64(b) * cb; bs >= lo && bs < hi {
			blk := content[bs-lo : bs-lo+cb]
			if i := (bs - at) / cb; bs >= at && i < uint64(len(known)) {
				sum = known[i]
			} else {
				sum = ts.crc(blk)
			}
			ts.blocks.addFresh(dev+bs, txnBlock{data: blk, deferred: deferred})
		}
		u.SetSum(b, sum)
	}
	if old, replaced := rec.Units.Set(u); replaced {
		ts.freeUnit(old.Dev)
	}
}

// patchUnit writes part at logical offset ws within mapped unit lu,
// rewriting the checksum blocks it touches: in memory if the unit is
// fresh, as a deferred write otherwise. known, if not nil, holds the
// checksums of part's whole objectstore.DataCRCPiece pieces (as
// newUnit's); a block that part covers whole takes its checksum from
// there rather than being hashed.
func (ts *txnState) patchUnit(rs *recState, lu, ws uint64, part []byte, deferred bool, known []uint32) error {
	sb := ts.s.sb
	rec := rs.rec
	u, _ := rec.Units.Get(lu)
	us := lu * sb.AllocUnit
	we := ws + uint64(len(part))
	if sb.ChecksumBlock != objectstore.DataCRCPiece || (ws-us)%sb.ChecksumBlock != 0 {
		known = nil // blocks and pieces do not line up
	}
	csums := u.AppendSums(nil)
	for b := (ws - us) / sb.ChecksumBlock; us+b*sb.ChecksumBlock < we; b++ {
		bs := us + b*sb.ChecksumBlock
		lo, hi := max(ws, bs), min(we, bs+sb.ChecksumBlock)
		var blk []byte
		if lo == bs && hi == bs+sb.ChecksumBlock {
			// The whole block is new: nothing to read.
			blk = slices.Clone(part[lo-ws : hi-ws])
			if i := (lo - ws) / sb.ChecksumBlock; i < uint64(len(known)) {
				csums[b] = known[i]
				ts.setBlock(u.Dev+b*sb.ChecksumBlock, blk, deferred)
				continue
			}
		} else {
			var err error
			if blk, err = ts.readBlock(rs.coll, rs.oid, rec, u, int(b)); err != nil {
				return err
			}
			copy(blk[lo-bs:hi-bs], part[lo-ws:hi-ws])
		}
		csums[b] = ts.crc(blk)
		ts.setBlock(u.Dev+b*sb.ChecksumBlock, blk, deferred)
	}
	u.SetSums(csums)
	rec.Units.Set(u)
	return nil
}

// setBlock sets the transaction's block at dev to blk, deferred or
// not; a block of fresh space this transaction defers stays deferred.
func (ts *txnState) setBlock(dev uint64, blk []byte, deferred bool) {
	old, _ := ts.blocks.get(dev)
	ts.blocks.set(dev, txnBlock{data: blk, deferred: deferred || old.deferred})
}

// allocUnits allocates n units near hint and returns their device offsets.
func (ts *txnState) allocUnits(n int, hint uint64) ([]uint64, error) {
	if n == 0 {
		return nil, nil
	}
	au := ts.s.sb.AllocUnit
	exts, err := ts.s.alloc.Allocate(uint64(n)*au, hint)
	if err != nil {
		if errors.Is(err, alloc.ErrNoSpace) {
			return nil, fmt.Errorf("%w: %d units: %w", objectstore.ErrNoSpace, n, err)
		}
		return nil, fmt.Errorf("allocate %d units: %w", n, err)
	}
	ts.fresh.add(exts)
	devs := make([]uint64, 0, n)
	for _, e := range exts {
		for off := e.Offset; off < e.Offset+e.Length; off += au {
			devs = append(devs, off)
		}
	}
	if len(devs) < n {
		return nil, fmt.Errorf("allocator returned %d of %d units", len(devs), n)
	}
	return devs[:n], nil
}

func (ts *txnState) crc(b []byte) uint32 { return crc32.Checksum(b, ts.s.table) }

// readBlock returns a private copy of checksum block b of rec's unit u
// as the transaction sees it, verifying data that comes from the file.
func (ts *txnState) readBlock(c objectstore.CollectionID, o objid.ID, rec *format.Onode, u format.Unit, b int) ([]byte, error) {
	cb := ts.s.sb.ChecksumBlock
	dev := u.Dev + uint64(b)*cb
	if tb, ok := ts.blocks.get(dev); ok {
		return slices.Clone(tb.data), nil
	}
	if bs := u.LU*ts.s.sb.AllocUnit + uint64(b)*cb; !format.HoldsData(rec.Pages, bs, bs+cb) {
		return make([]byte, cb), nil // possibly never written: zeros
	}
	if d, ok := ts.s.data.latest(dev, cb); ok {
		return slices.Clone(d), nil
	}
	buf := dio.AlignedBuf(int(cb))
	err := ts.s.dev.readChecked(buf, dev, false, func() error {
		if got, want := ts.crc(buf), u.Sum(b); got != want {
			return &mismatchError{c, o, u.LU*ts.s.sb.AllocUnit + uint64(b)*cb, dev, got, want}
		}
		return nil
	})
	if err != nil {
		return nil, ts.s.readFailed(c, o, err)
	}
	return buf, nil
}

// zero zeroes [off, off+length): whole mapped units become holes,
// partly covered ones are patched with zeros.
func (ts *txnState) zero(rs *recState, off, length uint64) error {
	rec := rs.rec
	end := off + length
	au := ts.s.sb.AllocUnit
	for lu := off / au; lu*au < end; lu++ {
		us := lu * au
		ws, we := max(off, us), min(end, us+au)
		cur, mapped := rec.Units.Get(lu)
		if !mapped {
			continue
		}
		if ws == us && we == us+au {
			ts.freeUnit(cur.Dev)
			rec.Units.Delete(lu)
			continue
		}
		if ws >= rec.Size {
			continue // already zero by the record invariant
		}
		we = min(we, rec.Size)
		if err := ts.patchUnit(rs, lu, ws, make([]byte, we-ws), !ts.fresh.contains(cur.Dev), nil); err != nil {
			return err
		}
	}
	rec.Pages = format.RemoveSpan(rec.Pages, off, end)
	rec.Size = max(rec.Size, end)
	return nil
}

// truncate sets the size; shrinking frees whole units past the end and
// zeroes the tail of the last one so that a later extension reads zeros.
func (ts *txnState) truncate(rs *recState, size uint64) error {
	rec := rs.rec
	if size < rec.Size {
		au := ts.s.sb.AllocUnit
		keep := (size + au - 1) / au
		for u := range rec.Units.From(keep) {
			ts.freeUnit(u.Dev)
		}
		rec.Units.DeleteFrom(keep)
		if size%au != 0 {
			lu := size / au
			if cur, mapped := rec.Units.Get(lu); mapped {
				we := min(rec.Size, (lu+1)*au)
				if err := ts.patchUnit(rs, lu, size, make([]byte, we-size), !ts.fresh.contains(cur.Dev), nil); err != nil {
					return err
				}
			}
		}
	}
	if size < rec.Size {
		rec.Pages = format.RemoveSpan(rec.Pages, size, rec.Size+format.PageSize)
	}
	rec.Size = size
	return nil
}

// readRange returns length bytes at off of rs's object as the
// transaction sees it (holes and bytes past the end as zeros).
func (ts *txnState) readRange(rs *recState, off, length uint64) ([]byte, error) {
	out := make([]byte, length)
	rec := rs.rec
	sb := ts.s.sb
	end := off + length
	for u := range rec.Units.From(off / sb.AllocUnit) {
		us := u.LU * sb.AllocUnit
		if us >= end {
			break
		}
		for b := range u.NumSums() {
			bs := us + uint64(b)*sb.ChecksumBlock
			lo, hi := max(off, bs), min(end, bs+sb.ChecksumBlock)
			if lo >= hi {
				continue
			}
			blk, err := ts.readBlock(rs.coll, rs.oid, rec, u, b)
			if err != nil {
				return nil, err
			}
			copy(out[lo-off:hi-off], blk[lo-bs:hi-bs])
		}
	}
	return out, nil
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
	for u := range rs.rec.Units.All() {
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
		for u := range st.units.All() {
			if keys = append(keys, format.UnitKey(nid, u.LU)); len(keys) > maxPointUnitDeletes {
				break
			}
		}
	} else {
		for sh := range st.units.Shards() {
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

// clone makes dst a copy of src: new node id, data copied to new units,
// attributes, omap header and omap entries copied. The omap entries are
// read from the indexed batch, which sees Pebble's and this
// transaction's: a source with omap entries needs every earlier
// transaction applied (errCloneNeedsDrain, and Queue waits and prepares
// again); one without (a RADOS head written whole, as most are) is
// copied without waiting for anything.
func (ts *txnState) clone(c objectstore.CollectionID, srcID, dstID objid.ID) error {
	src, err := ts.peek(c, srcID)
	if err != nil {
		return err
	}
	if srcID == dstID {
		return nil
	}
	dst, err := ts.lookup(c, dstID)
	if err != nil {
		return err
	}
	if dst.rec != nil {
		ts.mutable(dst)
		ts.destroy(dst)
	}
	sr := src.rec
	n := &format.Onode{Nid: ts.newNid(), Size: sr.Size, OmapHeader: append([]byte(nil), sr.OmapHeader...), Pages: slices.Clone(sr.Pages)}
	for _, a := range sr.Attrs {
		n.Attrs = append(n.Attrs, format.Attr{Name: a.Name, Value: slices.Clone(a.Value)})
	}
	// Units holding no allocated page are zeros: the copy leaves them
	// unmapped rather than map a unit it writes nothing into.
	au, cb := ts.s.sb.AllocUnit, ts.s.sb.ChecksumBlock
	var units []format.Unit
	for u := range sr.Units.All() {
		if format.HoldsData(sr.Pages, u.LU*au, (u.LU+1)*au) {
			units = append(units, u)
		}
	}
	devs, err := ts.allocUnits(len(units), 0)
	if err != nil {
		return err
	}
	for i, u := range units {
		for b := range u.NumSums() {
			off := uint64(b) * cb
			if bs := u.LU*au + off; !format.HoldsData(sr.Pages, bs, bs+cb) {
				continue // zeros: readers of the copy skip it too (format.HoldsData)
			}
			blk, err := ts.readBlock(c, srcID, sr, u, b)
			if err != nil {
				return err
			}
			ts.blocks.addFresh(devs[i]+off, txnBlock{data: blk})
		}
		moved := u
		moved.Dev = devs[i]
		n.Units.Set(moved)
	}
	dst.rec = n
	dst.dirty = true
	if !sr.Omap {
		return nil
	}
	if !ts.drained {
		return errCloneNeedsDrain
	}
	// Omap entries.
	p := format.OmapPrefix(sr.Nid)
	it, err := ts.batch.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: format.PrefixEnd(p)})
	if err != nil {
		return err
	}
	type kv struct{ k, v []byte }
	var kvs []kv
	for it.First(); it.Valid(); it.Next() {
		kvs = append(kvs, kv{append([]byte(nil), it.Key()[len(p):]...), append([]byte(nil), it.Value()...)})
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("clone %v %v: omap: %w", c, srcID, err)
	}
	for _, e := range kvs {
		_ = ts.batch.Set(format.OmapKey(n.Nid, string(e.k)), e.v, nil)
	}
	n.Omap = len(kvs) > 0
	return nil
}

// cloneRange copies the allocated extents of src's [off, off+length) to
// dst at dstOff, after zeroing the destination range; the source is read
// first, so an overlapping copy within one object acts as memmove.
func (ts *txnState) cloneRange(c objectstore.CollectionID, srcID, dstID objid.ID, off, length, dstOff uint64) error {
	src, err := ts.peek(c, srcID)
	if err != nil {
		return err
	}
	if off+length > src.rec.Size {
		return fmt.Errorf("%w: %v %v: clone range %d+%d beyond the size %d", objectstore.ErrInvalid, c, srcID, off, length, src.rec.Size)
	}
	type piece struct {
		off  uint64
		data []byte
	}
	var pieces []piece
	for _, x := range format.ClipSpans(src.rec.Pages, off, off+length) {
		data, err := ts.readRange(src, x.Off, x.End-x.Off)
		if err != nil {
			return err
		}
		pieces = append(pieces, piece{x.Off - off + dstOff, data})
	}
	dst, err := ts.create(c, dstID)
	if err != nil {
		return err
	}
	if err := ts.zero(dst, dstOff, length); err != nil {
		return err
	}
	for _, p := range pieces {
		if err := ts.write(dst, p.off, p.data, nil); err != nil {
			return err
		}
	}
	return nil
}

// move renames src in from to dst in to, replacing dst. The node id and
// so the omap go with it.
func (ts *txnState) move(from objectstore.CollectionID, srcID objid.ID, to objectstore.CollectionID, dstID objid.ID) error {
	src, err := ts.peek(from, srcID)
	if err != nil {
		return err
	}
	if from == to && srcID == dstID {
		return nil
	}
	dst, err := ts.lookup(to, dstID)
	if err != nil {
		return err
	}
	if dst.rec != nil {
		ts.mutable(dst)
		ts.destroy(dst)
	}
	dst.rec = src.rec.Clone()
	dst.dirty = true
	src.rec = nil
	src.dirty = true
	return nil
}

// collEmpty reports whether c holds no object as this transaction sees
// it: no record in Pebble that the overlays have not removed, and no
// record the overlays have added.
func (ts *txnState) collEmpty(c objectstore.CollectionID) (bool, error) {
	prefix := format.CollObjectPrefix(c)
	for _, e := range ts.records.list {
		if rs := e.rs; rs.rec != nil && rs.coll == c {
			return false, nil
		}
	}
	for key, ov := range ts.s.overlay {
		if ov.rec != nil && len(key) > len(prefix) && key[:len(prefix)] == string(prefix) {
			if _, mine := ts.records.get([]byte(key)); !mine {
				return false, nil
			}
		}
	}
	it, err := ts.s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: format.PrefixEnd(prefix)})
	if err != nil {
		return false, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if rs, ok := ts.records.get(it.Key()); ok {
			if rs.rec == nil {
				continue
			}
			return false, nil
		}
		if ov, ok := ts.s.overlay[string(it.Key())]; ok && ov.rec == nil {
			continue
		}
		return false, nil
	}
	return true, it.Error()
}
