package blockstore

import (
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

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
	}
	return fmt.Errorf("%w: op %v", objectstore.ErrInvalid, op.Code)
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

// clone makes dst a copy of src: new node id, data copied to new units,
// attributes, omap header and omap entries copied. Queue has waited for
// every earlier transaction to apply, so the indexed batch sees the
// whole omap.
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
	for _, u := range sr.Units {
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
				continue // zeros: readers of the copy skip it too (holdsData)
			}
			blk, err := ts.readBlock(c, srcID, sr, u, b)
			if err != nil {
				return err
			}
			ts.blocks.addFresh(devs[i]+off, txnBlock{data: blk})
		}
		moved := u
		moved.Dev = devs[i]
		n.Units = append(n.Units, moved)
	}
	dst.rec = n
	dst.dirty = true
	if !sr.Omap {
		return nil
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
