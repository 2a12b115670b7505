package ops

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// Reading your own writes: a read op that follows a write op in the same
// request sees the object as the earlier ops left it. The writes are not
// applied until the request ends (and only if every op succeeds), so such
// a read takes what the store holds from before the request (if the
// object existed then) and replays over it the operations the request's
// transaction holds for the object so far. A request whose reads all come
// before its first write (x.pending false) reads the store directly, as
// it always did: nothing here runs for it.

// pending reports whether earlier ops of the request changed the object,
// so that reads must look through the transaction.
func (x *executor) pending() bool { return !x.res.Txn.Empty() }

// ownOps calls fn with each operation of the transaction on the object,
// in order; it stops early when fn returns false.
func (x *executor) ownOps(fn func(*objectstore.Op) bool) {
	for i := range x.res.Txn.Ops {
		op := &x.res.Txn.Ops[i]
		if op.Object == x.env.Object && op.Collection == x.env.Collection && !fn(op) {
			return
		}
	}
}

// unexpected is the error for a transaction operation the executor never
// builds on the object, so has no reading rule for.
func (x *executor) unexpected(op *objectstore.Op) error {
	return fmt.Errorf("ops: reading %v through a pending %v: %w", x.env.Object, op.Code, objectstore.ErrInvalid)
}

// pendingRead returns the object's data in [off, off+length) (to the end
// for length 0) as the request has left it. The caller checked that the
// object exists.
func (x *executor) pendingRead(off, length uint64) ([]byte, error) {
	if off >= x.size {
		return []byte{}, nil
	}
	end := x.size
	if length != 0 && length < end-off {
		end = off + length
	}
	var buf []byte
	if x.res.Existed && x.res.SizeBefore > off {
		b, err := x.env.Store.Read(x.ctx, x.env.Collection, x.env.Object, off, end-off)
		if err != nil {
			return nil, x.storeErr("read", err)
		}
		if n := int(end - off); cap(b) >= n { // the store's buffer holds the result
			buf = b[:n]
			clear(buf[len(b):])
			x.res.Buffers = append(x.res.Buffers, b)
		} else {
			buf = make([]byte, n)
			copy(buf, b)
		}
	} else {
		buf = make([]byte, end-off)
	}
	// zero zeroes buf where it overlaps [from, to).
	zero := func(from, to uint64) {
		if from < off {
			from = off
		}
		if to > end {
			to = end
		}
		if from < to {
			clear(buf[from-off : to-off])
		}
	}
	var err error
	x.ownOps(func(op *objectstore.Op) bool {
		switch op.Code {
		case objectstore.OpWrite:
			wEnd := op.Offset + uint64(len(op.Data))
			if op.Offset < end && wEnd > off {
				from, to := max(op.Offset, off), min(wEnd, end)
				copy(buf[from-off:to-off], op.Data[from-op.Offset:to-op.Offset])
			}
		case objectstore.OpZero:
			zero(op.Offset, op.Offset+op.Length)
		case objectstore.OpTruncate:
			zero(op.Offset, end)
		case objectstore.OpRemove:
			zero(off, end)
		case objectstore.OpTouch, objectstore.OpSetAttrs, objectstore.OpRmAttr, objectstore.OpOmapSetKeys,
			objectstore.OpOmapRmKeys, objectstore.OpOmapClear, objectstore.OpOmapSetHeader:
		default:
			err = x.unexpected(op)
			return false
		}
		return true
	})
	return buf, err
}

// pendingAttr returns attribute name as the request has left it, and
// whether it is set.
func (x *executor) pendingAttr(name string) ([]byte, bool, error) {
	var v []byte
	set, known := false, !x.res.Existed // known: the store need not be asked
	var err error
	x.ownOps(func(op *objectstore.Op) bool {
		switch op.Code {
		case objectstore.OpSetAttrs:
			if b, ok := op.Attrs[name]; ok {
				v, set, known = b, true, true
			}
		case objectstore.OpRmAttr:
			if op.Key == name {
				v, set, known = nil, false, true
			}
		case objectstore.OpRemove:
			v, set, known = nil, false, true
		case objectstore.OpClone, objectstore.OpMove:
			err = x.unexpected(op)
			return false
		}
		return true
	})
	if err != nil || known {
		return v, set, err
	}
	b, err := x.env.Store.GetAttr(x.ctx, x.env.Collection, x.env.Object, name)
	switch {
	case errors.Is(err, objectstore.ErrNoAttr):
		return nil, false, nil
	case err != nil:
		return nil, false, x.storeErr("getxattr", err)
	}
	return b, true, nil
}

// pendingAttrs returns every attribute as the request has left them.
func (x *executor) pendingAttrs() (map[string][]byte, error) {
	attrs := map[string][]byte{}
	if x.res.Existed {
		stored, err := x.env.Store.GetAttrs(x.ctx, x.env.Collection, x.env.Object)
		if err != nil {
			return nil, x.storeErr("getxattrs", err)
		}
		maps.Copy(attrs, stored) // changed below: never the store's own map
	}
	var err error
	x.ownOps(func(op *objectstore.Op) bool {
		switch op.Code {
		case objectstore.OpSetAttrs:
			maps.Copy(attrs, op.Attrs)
		case objectstore.OpRmAttr:
			delete(attrs, op.Key)
		case objectstore.OpRemove:
			clear(attrs)
		case objectstore.OpClone, objectstore.OpMove:
			err = x.unexpected(op)
			return false
		}
		return true
	})
	return attrs, err
}

// omapChanges is what the request's transaction does to the object's
// omap: whether it dropped what the store holds (a clear or a removal),
// and the entries it set (deleted: nil value, in removed) since.
type omapChanges struct {
	cleared bool
	set     map[string][]byte
	removed map[string]bool
	header  []byte
	hasHdr  bool // header is the header (cleared alone means none)
}

func (x *executor) omapChanges() (omapChanges, error) {
	c := omapChanges{set: map[string][]byte{}, removed: map[string]bool{}}
	var err error
	x.ownOps(func(op *objectstore.Op) bool {
		switch op.Code {
		case objectstore.OpOmapSetKeys:
			for k, v := range op.Attrs {
				c.set[k] = v
				delete(c.removed, k)
			}
		case objectstore.OpOmapRmKeys:
			for _, k := range op.Keys {
				delete(c.set, k)
				if !c.cleared {
					c.removed[k] = true
				}
			}
		case objectstore.OpOmapClear, objectstore.OpRemove:
			c.cleared, c.header, c.hasHdr = true, nil, true
			clear(c.set)
			clear(c.removed)
		case objectstore.OpOmapSetHeader:
			c.header, c.hasHdr = op.Data, true
		case objectstore.OpOmapRmKeyRange, objectstore.OpClone, objectstore.OpMove:
			err = x.unexpected(op)
			return false
		}
		return true
	})
	if !x.res.Existed {
		c.cleared, c.hasHdr = true, true
	}
	return c, err
}

// pendingOmapHeader returns the omap header as the request has left it.
func (x *executor) pendingOmapHeader() ([]byte, error) {
	c, err := x.omapChanges()
	if err != nil || c.hasHdr {
		return c.header, err
	}
	h, err := x.env.Store.OmapGetHeader(x.ctx, x.env.Collection, x.env.Object)
	if err != nil {
		return nil, x.storeErr("omap header", err)
	}
	return h, nil
}

// pendingOmapValues returns the entries of keys that exist as the request
// has left them.
func (x *executor) pendingOmapValues(keys []string) (map[string][]byte, error) {
	c, err := x.omapChanges()
	if err != nil {
		return nil, err
	}
	var ask []string
	out := map[string][]byte{}
	for _, k := range keys {
		if v, ok := c.set[k]; ok {
			out[k] = v
		} else if !c.cleared && !c.removed[k] {
			ask = append(ask, k)
		}
	}
	if len(ask) == 0 {
		return out, nil
	}
	vals, err := x.env.Store.OmapGetValues(x.ctx, x.env.Collection, x.env.Object, ask)
	if err != nil {
		return nil, x.storeErr("omap get", err)
	}
	maps.Copy(out, vals)
	return out, nil
}

// pendingOmapList returns, in key order, up to limit entries after after
// with prefix prefix as the request has left the omap, and whether more
// follow: the store's entries (paging on past those the request removed
// or replaced until limit+1 remain or the store has no more) merged with
// those the request set.
func (x *executor) pendingOmapList(after, prefix string, limit int) ([]objectstore.KV, bool, error) {
	c, err := x.omapChanges()
	if err != nil {
		return nil, false, err
	}
	var out []objectstore.KV
	for k, v := range c.set {
		if (after == "" || k > after) && strings.HasPrefix(k, prefix) {
			out = append(out, objectstore.KV{Key: k, Value: v})
		}
	}
	if !c.cleared {
		page := limit + 1 + len(c.removed) + len(c.set)
		kept, cursor := 0, after
		for {
			kvs, more, err := x.env.Store.OmapIterate(x.ctx, x.env.Collection, x.env.Object, cursor, prefix, page)
			if err != nil {
				return nil, false, x.storeErr("omap iterate", err)
			}
			for _, kv := range kvs {
				if _, set := c.set[kv.Key]; !set && !c.removed[kv.Key] {
					out = append(out, kv)
					kept++
				}
			}
			if !more || kept > limit || len(kvs) == 0 {
				break
			}
			cursor = kvs[len(kvs)-1].Key
		}
	}
	slices.SortFunc(out, func(a, b objectstore.KV) int { return strings.Compare(a.Key, b.Key) })
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}
