package objectstore

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/crc32c"
	"github.com/cuttlestore/cuttle/objid"
)

// OpCode identifies one operation of a Transaction.
type OpCode uint8

// The operations a Transaction can hold.
const (
	OpTouch            OpCode = iota + 1 // create the object if missing
	OpWrite                              // write Data at Offset, extending the object
	OpZero                               // zero Length bytes at Offset (may punch holes)
	OpTruncate                           // set the size to Offset
	OpRemove                             // remove the object, its attributes and omap
	OpClone                              // Dest becomes a copy of Object (data, attributes, omap)
	OpCloneRange                         // copy Length bytes at Offset of Object to DestOffset of Dest
	OpSetAttrs                           // set the attributes in Attrs
	OpRmAttr                             // remove attribute Key
	OpOmapSetKeys                        // set the omap entries in Attrs
	OpOmapRmKeys                         // remove omap keys Keys
	OpOmapRmKeyRange                     // remove omap keys in [Key, EndKey)
	OpOmapClear                          // remove every omap entry and the header
	OpOmapSetHeader                      // set the omap header to Data
	OpCreateCollection                   // create Collection
	OpRemoveCollection                   // remove Collection, which must be empty
	OpMove                               // move Object to DestCollection as Dest, replacing it
	// OpSplitCollection moves every object of Collection's pool whose
	// hash's low Offset bits equal Length into DestCollection, under the
	// same names (a PG split).
	OpSplitCollection
)

var opNames = [...]string{
	OpTouch: "touch", OpWrite: "write", OpZero: "zero", OpTruncate: "truncate", OpRemove: "remove",
	OpClone: "clone", OpCloneRange: "clone_range", OpSetAttrs: "setattrs", OpRmAttr: "rmattr",
	OpOmapSetKeys: "omap_setkeys", OpOmapRmKeys: "omap_rmkeys", OpOmapRmKeyRange: "omap_rmkeyrange",
	OpOmapClear: "omap_clear", OpOmapSetHeader: "omap_setheader", OpCreateCollection: "create_collection",
	OpRemoveCollection: "remove_collection", OpMove: "move", OpSplitCollection: "split_collection",
}

func (c OpCode) String() string {
	if int(c) < len(opNames) && opNames[c] != "" {
		return opNames[c]
	}
	return "op?"
}

// Op is one operation. Which fields matter depends on Code; the
// Transaction methods fill them.
type Op struct {
	Code           OpCode
	Collection     CollectionID
	Object         objid.ID
	DestCollection CollectionID // OpMove, OpSplitCollection
	Dest           objid.ID     // OpClone, OpCloneRange, OpMove
	Offset         uint64       // OpSplitCollection: the hash bits compared
	Length         uint64       // OpSplitCollection: their value
	DestOffset     uint64
	Data           []byte // OpWrite, OpOmapSetHeader
	// DataCRCs optionally holds the crc32c of each whole DataCRCPiece of
	// an OpWrite's Data (DataCRCs[i] covers Data[i*DataCRCPiece:
	// (i+1)*DataCRCPiece]), when the caller has them: the OSD takes them
	// from the messenger, which computed them checking the frame the data
	// arrived in. A store whose checksum blocks line up with the pieces
	// keeps them instead of hashing the data again. They are not part of
	// the transaction's encoding.
	DataCRCs    []uint32
	Attrs       map[string][]byte // OpSetAttrs, OpOmapSetKeys
	Keys        []string          // OpOmapRmKeys
	Key, EndKey string            // OpRmAttr, OpOmapRmKeyRange
}

// DataCRCPiece is the piece of an Op's Data each of its DataCRCs covers:
// the piece the messenger checksums received payloads by.
const DataCRCPiece = crc32c.PieceLen

// Transaction is an ordered group of operations on any number of objects
// and collections, applied all or nothing. Later operations see the
// effects of earlier ones. If any operation cannot apply (say, removing a
// missing object), the store applies none and returns the error.
//
// The transaction keeps references to the byte slices and maps it is
// given; callers must not modify them until the transaction has applied.
type Transaction struct {
	Ops []Op
}

func (t *Transaction) add(op Op) *Transaction {
	t.Ops = append(t.Ops, op)
	return t
}

// Empty reports whether t has no operations.
func (t *Transaction) Empty() bool { return len(t.Ops) == 0 }

// Touch creates o if it does not exist.
func (t *Transaction) Touch(c CollectionID, o objid.ID) *Transaction {
	return t.add(Op{Code: OpTouch, Collection: c, Object: o})
}

// Write writes data at offset off, creating o if needed; the size becomes
// at least off+len(data).
func (t *Transaction) Write(c CollectionID, o objid.ID, off uint64, data []byte) *Transaction {
	return t.add(Op{Code: OpWrite, Collection: c, Object: o, Offset: off, Data: data})
}

// Zero zeroes length bytes at off, creating o and extending it if needed.
func (t *Transaction) Zero(c CollectionID, o objid.ID, off, length uint64) *Transaction {
	return t.add(Op{Code: OpZero, Collection: c, Object: o, Offset: off, Length: length})
}

// Truncate sets o's size, discarding or zero-extending data; o must exist.
func (t *Transaction) Truncate(c CollectionID, o objid.ID, size uint64) *Transaction {
	return t.add(Op{Code: OpTruncate, Collection: c, Object: o, Offset: size})
}

// Remove removes o with its attributes and omap; o must exist.
func (t *Transaction) Remove(c CollectionID, o objid.ID) *Transaction {
	return t.add(Op{Code: OpRemove, Collection: c, Object: o})
}

// Clone makes dst a copy of src (data, attributes, omap), replacing dst.
func (t *Transaction) Clone(c CollectionID, src, dst objid.ID) *Transaction {
	return t.add(Op{Code: OpClone, Collection: c, Object: src, Dest: dst})
}

// CloneRange copies length bytes at srcOff of src to dstOff of dst,
// creating dst if needed.
func (t *Transaction) CloneRange(c CollectionID, src, dst objid.ID, srcOff, length, dstOff uint64) *Transaction {
	return t.add(Op{Code: OpCloneRange, Collection: c, Object: src, Dest: dst, Offset: srcOff, Length: length, DestOffset: dstOff})
}

// SetAttr sets one attribute, creating o if needed.
func (t *Transaction) SetAttr(c CollectionID, o objid.ID, name string, value []byte) *Transaction {
	return t.SetAttrs(c, o, map[string][]byte{name: value})
}

// SetAttrs sets several attributes, creating o if needed.
func (t *Transaction) SetAttrs(c CollectionID, o objid.ID, attrs map[string][]byte) *Transaction {
	return t.add(Op{Code: OpSetAttrs, Collection: c, Object: o, Attrs: attrs})
}

// RmAttr removes attribute name; o must exist.
func (t *Transaction) RmAttr(c CollectionID, o objid.ID, name string) *Transaction {
	return t.add(Op{Code: OpRmAttr, Collection: c, Object: o, Key: name})
}

// OmapSetKeys sets omap entries, creating o if needed.
func (t *Transaction) OmapSetKeys(c CollectionID, o objid.ID, kv map[string][]byte) *Transaction {
	return t.add(Op{Code: OpOmapSetKeys, Collection: c, Object: o, Attrs: kv})
}

// OmapRmKeys removes omap keys; missing keys are ignored.
func (t *Transaction) OmapRmKeys(c CollectionID, o objid.ID, keys ...string) *Transaction {
	return t.add(Op{Code: OpOmapRmKeys, Collection: c, Object: o, Keys: keys})
}

// OmapRmKeyRange removes the omap keys k with first <= k < last.
func (t *Transaction) OmapRmKeyRange(c CollectionID, o objid.ID, first, last string) *Transaction {
	return t.add(Op{Code: OpOmapRmKeyRange, Collection: c, Object: o, Key: first, EndKey: last})
}

// OmapClear removes every omap entry and the omap header.
func (t *Transaction) OmapClear(c CollectionID, o objid.ID) *Transaction {
	return t.add(Op{Code: OpOmapClear, Collection: c, Object: o})
}

// OmapSetHeader sets the omap header, creating o if needed.
func (t *Transaction) OmapSetHeader(c CollectionID, o objid.ID, header []byte) *Transaction {
	return t.add(Op{Code: OpOmapSetHeader, Collection: c, Object: o, Data: header})
}

// CreateCollection creates c; it must not exist.
func (t *Transaction) CreateCollection(c CollectionID) *Transaction {
	return t.add(Op{Code: OpCreateCollection, Collection: c})
}

// RemoveCollection removes c; it must exist and be empty.
func (t *Transaction) RemoveCollection(c CollectionID) *Transaction {
	return t.add(Op{Code: OpRemoveCollection, Collection: c})
}

// Move moves src from collection from to collection to under the name
// dst, replacing any object there (Ceph's collection_move_rename).
func (t *Transaction) Move(from CollectionID, src objid.ID, to CollectionID, dst objid.ID) *Transaction {
	return t.add(Op{Code: OpMove, Collection: from, Object: src, DestCollection: to, Dest: dst})
}

// SplitCollection moves into to every object of from whose pool is
// from's and whose hash's low bits bits equal rem, under the same names
// (Ceph's split_collection): the objects of a PG's child, when pg_num
// grows. Objects of other pools (the PG's own meta object) stay. Both
// collections must exist; they are PG (or temporary) collections.
func (t *Transaction) SplitCollection(from, to CollectionID, bits uint8, rem uint32) *Transaction {
	return t.add(Op{Code: OpSplitCollection, Collection: from, DestCollection: to, Offset: uint64(bits), Length: uint64(rem)})
}

// MergeCollection moves every object of from whose pool is from's into
// to, under the same names (Ceph's merge_collection): a PG merge, when
// pg_num shrinks and the source PG from joins its target to. It is the
// inverse of SplitCollection, and is one: a split that selects no hash
// bits moves every object. Objects of other pools (the source's meta
// object) stay, for the caller to remove with the collection in the same
// transaction. Both collections must exist.
func (t *Transaction) MergeCollection(from, to CollectionID) *Transaction {
	return t.SplitCollection(from, to, 0, 0)
}

// SplitMatches reports whether object o moves in a SplitCollection from
// collection c with bits and rem.
func SplitMatches(c CollectionID, o objid.ID, bits uint8, rem uint32) bool {
	return o.Pool == c.Pool && !o.IsMax() && o.Hash&splitMask(bits) == rem
}

func splitMask(bits uint8) uint32 {
	if bits >= 32 {
		return ^uint32(0)
	}
	return uint32(1)<<bits - 1
}

// Validate checks what can be checked without the store: known op codes,
// well-formed collections and object names, ranges within MaxObjectSize.
// Engines call it before looking at their state.
func (t *Transaction) Validate() error {
	for i := range t.Ops {
		if err := t.Ops[i].validate(); err != nil {
			return fmt.Errorf("op %d (%s): %w", i, t.Ops[i].Code, err)
		}
	}
	return nil
}

func (op *Op) validate() error {
	if op.Code < OpTouch || op.Code > OpSplitCollection {
		return fmt.Errorf("%w: unknown op code %d", ErrInvalid, op.Code)
	}
	if !op.Collection.Valid() {
		return fmt.Errorf("%w: bad collection %v", ErrInvalid, op.Collection)
	}
	if op.Code == OpCreateCollection || op.Code == OpRemoveCollection {
		return nil
	}
	if op.Code == OpSplitCollection {
		return op.validateSplit()
	}
	if err := op.Object.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if op.Object.IsMax() || ((op.Code == OpClone || op.Code == OpCloneRange || op.Code == OpMove) && op.Dest.IsMax()) {
		return fmt.Errorf("%w: objid.Max() names no object", ErrInvalid)
	}
	switch op.Code {
	case OpWrite:
		if len(op.DataCRCs) > len(op.Data)/DataCRCPiece {
			return fmt.Errorf("%w: %d data checksums for %d bytes", ErrInvalid, len(op.DataCRCs), len(op.Data))
		}
		return checkRange(op.Offset, uint64(len(op.Data)))
	case OpZero:
		return checkRange(op.Offset, op.Length)
	case OpTruncate:
		return checkRange(op.Offset, 0)
	case OpCloneRange:
		if err := checkRange(op.Offset, op.Length); err != nil {
			return err
		}
		if err := checkRange(op.DestOffset, op.Length); err != nil {
			return err
		}
	case OpMove:
		if !op.DestCollection.Valid() {
			return fmt.Errorf("%w: bad destination collection %v", ErrInvalid, op.DestCollection)
		}
	}
	if op.Code == OpClone || op.Code == OpCloneRange || op.Code == OpMove {
		if err := op.Dest.Validate(); err != nil {
			return fmt.Errorf("%w: destination: %w", ErrInvalid, err)
		}
	}
	return nil
}

func (op *Op) validateSplit() error {
	from, to := op.Collection, op.DestCollection
	switch {
	case from.Kind == KindMeta || !to.Valid() || to.Kind != from.Kind:
		return fmt.Errorf("%w: split %v into %v: both must be PG collections of one kind", ErrInvalid, from, to)
	case from == to:
		return fmt.Errorf("%w: split %v into itself", ErrInvalid, from)
	case op.Offset > 32 || op.Length > uint64(splitMask(uint8(op.Offset))):
		return fmt.Errorf("%w: split bits %d, value %#x", ErrInvalid, op.Offset, op.Length)
	}
	return nil
}

func checkRange(off, length uint64) error {
	if off > MaxObjectSize || length > MaxObjectSize-off {
		return fmt.Errorf("%w: range %d+%d beyond the maximum object size", ErrInvalid, off, length)
	}
	return nil
}
