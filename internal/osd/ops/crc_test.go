package ops

import (
	"bytes"
	"context"
	"hash/crc32"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// crcStore gives its reads' checksums, as a blockstore does.
type crcStore struct{ objectstore.Store }

func (s crcStore) ReadCRC(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64) ([]byte, uint32, error) {
	b, err := s.Read(ctx, c, o, off, length)
	return b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)), err
}

// Reads from a store that gives checksums keep them for the reply, and
// TailCRC answers only for the very bytes a read returned.
func TestReadKeepsTheStoresChecksum(t *testing.T) {
	f := newFixture(t)
	f.store = crcStore{f.store}
	data := bytes.Repeat([]byte("0123456789abcdef"), 8192)
	f.ok(wire.ObjectOp{Code: wire.OpWriteFull, Data: data})
	res := f.ok(wire.ObjectOp{Code: wire.OpRead}, wire.ObjectOp{Code: wire.OpRead, Offset: 5, Length: 1000})
	if len(res.CRCs) != 2 {
		t.Fatalf("%d checksums kept, want 2", len(res.CRCs))
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	for i, op := range res.Ops {
		crc, ok := res.TailCRC(op.Data)
		if !ok || crc != crc32.Checksum(op.Data, table) {
			t.Errorf("op %d: TailCRC = %#08x, %v; want the checksum of its data", i, crc, ok)
		}
	}
	if _, ok := res.TailCRC(bytes.Clone(res.Ops[0].Data)); ok {
		t.Error("TailCRC answered for a copy of the data")
	}
	if _, ok := res.TailCRC(res.Ops[0].Data[1:]); ok {
		t.Error("TailCRC answered for part of the data")
	}
}
