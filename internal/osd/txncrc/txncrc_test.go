package txncrc

import (
	"bytes"
	"hash/crc32"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// Writes take the piece checksums of their data; the rep op's data then
// has the checksum folded from them, and data without checksums for all
// its pieces has none.
func TestDataCRCsFollowTheData(t *testing.T) {
	table := crc32.MakeTable(crc32.Castagnoli)
	whole := bytes.Repeat([]byte("0123456789abcdef"), 3*256) // three pieces
	pieces := func(b []byte) []uint32 {
		var out []uint32
		for off := 0; off+4096 <= len(b); off += 4096 {
			out = append(out, crc32.Checksum(b[off:off+4096], table))
		}
		return out
	}
	c, o := objectstore.PGCollection(1, 0), objid.Object(1, "", "o")
	txn := new(objectstore.Transaction).Write(c, o, 0, whole).SetAttr(c, o, "a", []byte("x")).Write(c, o, 0, whole[:5000])
	Keep(txn, pieces)
	if len(txn.Ops[0].DataCRCs) != 3 || len(txn.Ops[2].DataCRCs) != 1 || txn.Ops[1].DataCRCs != nil {
		t.Fatalf("checksums kept: %d, %d, %d", len(txn.Ops[0].DataCRCs), len(txn.Ops[1].DataCRCs), len(txn.Ops[2].DataCRCs))
	}
	tail := Of(txn)
	if crc, ok := tail(whole); !ok || crc != crc32.Checksum(whole, table) {
		t.Fatalf("whole data: %#08x, %v", crc, ok)
	}
	if _, ok := tail(whole[:5000]); ok {
		t.Fatal("data with a partial last piece got a checksum")
	}
	if _, ok := tail(bytes.Clone(whole)); ok {
		t.Fatal("a copy of the data got its checksum")
	}
	if Of(new(objectstore.Transaction).SetAttr(c, o, "a", nil)) != nil {
		t.Fatal("a transaction without data has checksums to give")
	}
	Keep(nil, pieces) // no transaction: nothing to do
}
