// Package txncrc carries the checksums the messenger computed for a
// write's data into the store's transaction, and from it to the frame
// the primary sends on to the replicas.
package txncrc

import (
	"github.com/cuttlestore/cuttle/internal/crc32c"
	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// Write data arrives in a frame the messenger checks piece by piece
// (msgr.Message.PieceCRCs). The store keeps object data with one crc32c
// per 4 KiB block, the same pieces, so it takes those checksums instead
// of hashing the data again; and the primary folds them into the
// checksum of the data it sends on to the replicas. Each OSD then hashes
// a write's data once, on receipt, instead of up to four times.

// Keep gives txn's writes the piece checksums of their data,
// where the message they came in has them.
func Keep(txn *objectstore.Transaction, pieceCRCs func([]byte) []uint32) {
	if txn == nil || pieceCRCs == nil {
		return
	}
	for i := range txn.Ops {
		op := &txn.Ops[i]
		if op.Code == objectstore.OpWrite && op.DataCRCs == nil {
			op.DataCRCs = pieceCRCs(op.Data)
		}
	}
}

// Of returns what tells the messenger the crc32c of txn's write
// data whose every piece has its checksum (msgr.Message.TailCRC), or nil
// if there is none.
func Of(txn *objectstore.Transaction) func([]byte) (uint32, bool) {
	type known struct {
		data []byte
		crc  uint32
	}
	var ks []known
	for _, op := range txn.Ops {
		if op.Code == objectstore.OpWrite && len(op.Data) > 0 && len(op.DataCRCs)*objectstore.DataCRCPiece == len(op.Data) {
			ks = append(ks, known{op.Data, crc32c.FoldPieces(op.DataCRCs)})
		}
	}
	if ks == nil {
		return nil
	}
	return func(b []byte) (uint32, bool) {
		for _, k := range ks {
			if len(b) == len(k.data) && &b[0] == &k.data[0] {
				return k.crc, true
			}
		}
		return 0, false
	}
}
