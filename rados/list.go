package rados

import (
	"context"
	"fmt"
	"iter"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// ListEntry names one object found by a listing.
type ListEntry struct {
	Namespace string
	Key       string // the locator key, "" if none
	Name      string
}

// Cursor is a position in a pool listing. A listing walks the pool in
// the objects' sort order (by reversed hash, as Ceph's bitwise order),
// not PG by PG: each PG holds one stretch of that order
// (osdmap.BitwiseRange), so a position means the same whether the pool
// has split or merged its PGs since, and a listing running across a
// change of pg_num neither repeats nor skips an object. The zero Cursor
// starts a listing. A cursor survives the client: MarshalBinary and
// UnmarshalBinary store it.
type Cursor struct {
	pool int64
	at   objid.ID // the first object not yet listed, or the first position of a PG
	done bool
}

// Done reports whether the listing is complete.
func (c Cursor) Done() bool { return c.done }

func (c Cursor) String() string {
	if c.done {
		return "end"
	}
	return fmt.Sprintf("pool %d at %v", c.pool, c.at)
}

// cursorVersion is the version of the cursor's encoding. Version 1
// cursors named a PG by its index, an order that a split reshuffles: they
// are refused.
const cursorVersion = 2

// MarshalBinary encodes the cursor: version 2: pool varint, done bool,
// position (an object).
func (c Cursor) MarshalBinary() ([]byte, error) {
	var e encoding.Encoder
	mk := e.Begin(cursorVersion, cursorVersion)
	e.Varint(c.pool)
	e.Bool(c.done)
	c.at.Encode(&e)
	e.End(mk)
	return e.Data(), nil
}

// UnmarshalBinary decodes what MarshalBinary wrote.
func (c *Cursor) UnmarshalBinary(b []byte) error {
	d := encoding.NewDecoder(b)
	v := d.Begin(cursorVersion)
	if d.Err() == nil && v < cursorVersion {
		return fmt.Errorf("rados: decode cursor: %w: a version %d cursor, from an older Cuttle's listing order: start the listing again", ErrInvalid, v)
	}
	var n Cursor
	n.pool = d.Varint()
	n.done = d.Bool()
	n.at = objid.Decode(d)
	d.End()
	if err := d.Finish(); err != nil {
		return fmt.Errorf("rados: decode cursor: %w", err)
	}
	if n.at.IsMax() || (!n.done && n.at.Pool != n.pool) {
		return fmt.Errorf("rados: decode cursor: %w: position %v in pool %d", encoding.ErrCorrupt, n.at, n.pool)
	}
	*c = n
	return nil
}

// ListObjects lists up to limit objects of the pool (in the IOContext's
// namespace, or all with AllNamespaces) from cursor, and returns them with
// the cursor to continue from. Objects written or removed during a
// listing may or may not be listed; the others are listed once, however
// the pool's PGs split or merge meanwhile.
func (io *IOContext) ListObjects(ctx context.Context, cursor Cursor, limit int) ([]ListEntry, Cursor, error) {
	if cursor.done {
		return nil, cursor, nil
	}
	if cursor == (Cursor{}) {
		cursor = Cursor{pool: io.pool, at: objid.ID{Pool: io.pool}}
	}
	if cursor.pool != io.pool {
		return nil, cursor, fmt.Errorf("%w: cursor of pool %d used in pool %d", ErrInvalid, cursor.pool, io.pool)
	}
	limit = max(limit, 1)
	ns := io.Namespace()
	var out []ListEntry
	for len(out) < limit && !cursor.done {
		res, err := io.listFrom(ctx, cursor.at, ns, limit-len(out))
		if err != nil {
			return out, cursor, err
		}
		for _, id := range res.Objects {
			out = append(out, ListEntry{Namespace: id.Namespace, Key: id.Key, Name: id.Name})
		}
		next, done := nextPosition(res)
		cursor.at, cursor.done = next, done
	}
	return out, cursor, nil
}

// nextPosition says where a listing goes on after a PG's answer res:
// within that PG while it has more, else at the next PG's first position,
// which its OSD names as its map cuts the pool (zero after the last PG).
func nextPosition(res *wire.ObjectOpResult) (objid.ID, bool) {
	if !res.More && res.Cursor == (objid.ID{}) {
		return objid.ID{}, true
	}
	return res.Cursor, false
}

// listFrom lists the PG that holds position at, from there; the objecter
// finds that PG from at's hash under its current map, and finds it again
// when the OSD answers ESTALE because its map has split or merged it.
func (io *IOContext) listFrom(ctx context.Context, at objid.ID, ns string, max int) (*wire.ObjectOpResult, error) {
	lop := wire.ObjectOp{Code: wire.OpListObjects, Length: uint64(max), Name: ns}
	if ns == AllNamespaces {
		lop.Name, lop.Flags = "", wire.ListAllNamespaces
	}
	comp := newCompletion(false)
	var res wire.ObjectOpResult
	p := &op{name: "list from " + at.String(), comp: comp,
		msg: wire.OSDOp{Object: at, Ops: []wire.ObjectOp{lop}},
		onReply: func(r *wire.OSDOpReply) {
			if len(r.Ops) > 0 {
				res = r.Ops[0]
			}
		}}
	io.conn.obj.submit(ctx, p, false, io.conn.opTimeout(ctx))
	if err := comp.waitOp(ctx); err != nil {
		return nil, err
	}
	if (res.More || res.Cursor != objid.ID{}) && objid.Compare(res.Cursor, at) <= 0 {
		// Going on from there would list objects again, or never end.
		return nil, fmt.Errorf("rados: list from %v: the OSD answered position %v, not past it: %w", at, res.Cursor, ErrInvalid)
	}
	return &res, nil
}

// Objects lists every object of the pool (in the IOContext's namespace,
// or all with AllNamespaces), fetching them in batches. It stops at the
// first error, which it yields.
func (io *IOContext) Objects(ctx context.Context) iter.Seq2[ListEntry, error] {
	return func(yield func(ListEntry, error) bool) {
		var cur Cursor
		for !cur.Done() {
			batch, next, err := io.ListObjects(ctx, cur, listBatch)
			for _, e := range batch {
				if !yield(e, nil) {
					return
				}
			}
			if err != nil {
				yield(ListEntry{}, err)
				return
			}
			cur = next
		}
	}
}

// listBatch is how many objects Objects asks for at a time.
const listBatch = 1000
