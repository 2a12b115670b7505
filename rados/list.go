package rados

import (
	"context"
	"fmt"
	"iter"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// ListEntry names one object found by a listing.
type ListEntry struct {
	Namespace string
	Key       string // the locator key, "" if none
	Name      string
}

// Cursor is a position in a pool listing: the PG being listed and the
// object to resume at. The zero Cursor starts a listing. A cursor
// survives the client: MarshalBinary and UnmarshalBinary store it.
type Cursor struct {
	pool int64
	pg   uint32   // index of the PG listed
	obj  objid.ID // the first object not yet listed in it (zero: its start)
	done bool
}

// Done reports whether the listing is complete.
func (c Cursor) Done() bool { return c.done }

func (c Cursor) String() string {
	if c.done {
		return "end"
	}
	return fmt.Sprintf("pg %d.%x at %v", c.pool, c.pg, c.obj)
}

// cursorVersion is the version of the cursor's encoding.
const cursorVersion = 1

// MarshalBinary encodes the cursor: version 1: pool varint, pg u32,
// done bool, object.
func (c Cursor) MarshalBinary() ([]byte, error) {
	var e encoding.Encoder
	mk := e.Begin(cursorVersion, 1)
	e.Varint(c.pool)
	e.Uint32(c.pg)
	e.Bool(c.done)
	c.obj.Encode(&e)
	e.End(mk)
	return e.Data(), nil
}

// UnmarshalBinary decodes what MarshalBinary wrote.
func (c *Cursor) UnmarshalBinary(b []byte) error {
	d := encoding.NewDecoder(b)
	d.Begin(cursorVersion)
	var n Cursor
	n.pool = d.Varint()
	n.pg = d.Uint32()
	n.done = d.Bool()
	n.obj = objid.Decode(d)
	d.End()
	if err := d.Finish(); err != nil {
		return fmt.Errorf("rados: decode cursor: %w", err)
	}
	if n.obj.IsMax() {
		return fmt.Errorf("rados: decode cursor: %w: max object", encoding.ErrCorrupt)
	}
	*c = n
	return nil
}

// ListObjects lists up to limit objects of the pool (in the IOContext's
// namespace, or all with AllNamespaces) from cursor, PG by PG, and
// returns them with the cursor to continue from. Objects written or
// removed during a listing may or may not be listed.
func (io *IOContext) ListObjects(ctx context.Context, cursor Cursor, limit int) ([]ListEntry, Cursor, error) {
	if cursor.done {
		return nil, cursor, nil
	}
	if cursor == (Cursor{}) {
		cursor.pool = io.pool
	}
	if cursor.pool != io.pool {
		return nil, cursor, fmt.Errorf("%w: cursor of pool %d used in pool %d", ErrInvalid, cursor.pool, io.pool)
	}
	limit = max(limit, 1)
	ns := io.Namespace()
	var out []ListEntry
	for len(out) < limit {
		p := io.conn.obj.currentMap().Pool(io.pool)
		if p == nil {
			return out, cursor, fmt.Errorf("%w: id %d", ErrPoolNotFound, io.pool)
		}
		if cursor.pg >= p.PGNum {
			cursor.done = true
			break
		}
		res, err := io.listPG(ctx, osdmap.PG{Pool: io.pool, Seed: cursor.pg}, cursor.obj, ns, limit-len(out))
		if err != nil {
			return out, cursor, err
		}
		for _, id := range res.Objects {
			out = append(out, ListEntry{Namespace: id.Namespace, Key: id.Key, Name: id.Name})
		}
		if res.More {
			cursor.obj = res.Cursor
		} else {
			cursor.pg++
			cursor.obj = objid.ID{}
		}
	}
	return out, cursor, nil
}

// listPG lists one PG from start.
func (io *IOContext) listPG(ctx context.Context, pg osdmap.PG, start objid.ID, ns string, max int) (*wire.ObjectOpResult, error) {
	lop := wire.ObjectOp{Code: wire.OpListObjects, Length: uint64(max), Name: ns}
	if ns == AllNamespaces {
		lop.Name, lop.Flags = "", wire.ListAllNamespaces
	}
	comp := newCompletion(false)
	var res wire.ObjectOpResult
	p := &op{name: "list " + pg.String(), fixedPG: true, comp: comp,
		msg: wire.OSDOp{PG: pg, Object: start, Ops: []wire.ObjectOp{lop}},
		onReply: func(r *wire.OSDOpReply) {
			if len(r.Ops) > 0 {
				res = r.Ops[0]
			}
		}}
	io.conn.obj.submit(ctx, p, false, io.conn.opTimeout(ctx))
	if err := comp.waitOp(ctx); err != nil {
		return nil, err
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
