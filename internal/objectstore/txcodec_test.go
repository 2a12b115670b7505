package objectstore

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/objid"
)

func sampleTransaction() *Transaction {
	c, o, p := PGCollection(2, 0x1f), objid.Object(2, "ns", "a"), objid.Object(2, "", "b")
	t := &Transaction{}
	t.CreateCollection(c).Touch(c, o).Write(c, o, 7, []byte("data")).Zero(c, o, 1, 2).Truncate(c, o, 99)
	t.Clone(c, o, p).CloneRange(c, o, p, 1, 2, 3).SetAttrs(c, o, map[string][]byte{"x": {1}, "y": {}})
	t.RmAttr(c, o, "x").OmapSetKeys(c, o, map[string][]byte{"k": []byte("v")}).OmapRmKeys(c, o, "k", "j")
	t.OmapRmKeyRange(c, o, "a", "z").OmapClear(c, o).OmapSetHeader(c, o, []byte("h"))
	t.Move(c, p, TempCollection(2, 0x1f), o).Remove(c, o).RemoveCollection(c)
	t.SplitCollection(PGCollection(2, 0xf), c, 5, 0x1f)
	return t
}

func TestTransactionCodecRoundTrip(t *testing.T) {
	txn := sampleTransaction()
	got, err := DecodeTransaction(txn.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, txn) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, txn)
	}
	empty, err := DecodeTransaction((&Transaction{}).Encode())
	if err != nil || !empty.Empty() {
		t.Fatalf("empty: %+v %v", empty, err)
	}
}

func TestTransactionCodecBadInput(t *testing.T) {
	good := sampleTransaction().Encode()
	if _, err := DecodeTransaction(good[:len(good)-1]); !errors.Is(err, encoding.ErrTruncated) && !errors.Is(err, encoding.ErrCorrupt) {
		t.Errorf("truncated: %v", err)
	}
	bad := &Transaction{Ops: []Op{{Code: 200, Collection: MetaCollection}}}
	if _, err := DecodeTransaction(bad.Encode()); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown op: %v", err)
	}
	maxObj := &Transaction{}
	maxObj.Touch(MetaCollection, objid.Max())
	if _, err := DecodeTransaction(maxObj.Encode()); !errors.Is(err, ErrInvalid) {
		t.Errorf("max object: %v", err)
	}
}

// FuzzTransactionCodec: decoding never panics, and whatever decodes
// re-encodes to the same transaction.
func FuzzTransactionCodec(f *testing.F) {
	f.Add(sampleTransaction().Encode())
	f.Add((&Transaction{}).Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		txn, err := DecodeTransaction(b)
		if err != nil {
			return
		}
		again, err := DecodeTransaction(txn.Encode())
		if err != nil || !reflect.DeepEqual(again, txn) {
			t.Fatalf("re-decode: %v", err)
		}
	})
}

// Write data below MinAlignedData goes unpadded; larger data starts at a
// multiple of DataAlign, for a replica's O_DIRECT write.
func TestTransactionCodecAlignment(t *testing.T) {
	c, o := PGCollection(2, 0), objid.Object(2, "", "a")
	small := bytes.Repeat([]byte{3}, 4096)
	b := new(Transaction).Write(c, o, 0, small).Encode()
	if len(b) >= 2*4096 {
		t.Fatalf("a 4 KiB write encodes to %d bytes: padded", len(b))
	}
	large := bytes.Repeat([]byte{0xab}, MinAlignedData)
	txn := new(Transaction).Write(c, o, 0, large)
	b = txn.Encode()
	if at := bytes.Index(b, large); at%DataAlign != 0 {
		t.Fatalf("%d bytes of data at offset %d, want a multiple of %d", MinAlignedData, at, DataAlign)
	}
	if got, err := DecodeTransaction(b); err != nil || !reflect.DeepEqual(got, txn) {
		t.Fatalf("round trip: %v", err)
	}
}
