package format

import (
	"fmt"
	"math"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// On-disk format.
//
// A store is a directory holding two things, both reached through one
// vfs.FS:
//
//	block   the data file (or, with Options.DevicePath, a raw device):
//	        object data in allocation units, nothing else
//	db/     a Pebble database with all metadata
//
// Pebble keys (all integers big-endian so that byte order is numeric
// order; every value is an encoding envelope unless said otherwise):
//
//	'S'                          superblock: format version, device size,
//	                             allocation unit, checksum block
//	'N'                          next node id (uvarint in an envelope)
//	'C' coll                     collection record (empty v1 body)
//	'O' coll objkey              object record (record.go): nid, size,
//	                             attributes, omap header, allocated page
//	                             spans and, for a small object, its units
//	'V' nid shard                the mapped units of node nid in
//	                             [shard*ShardUnits, (shard+1)*ShardUnits)
//	                             (if its record keeps shards): each one's
//	                             offset in the shard, device offset and a
//	                             crc32c per checksum block
//	'U' nid lu                   one mapped allocation unit of node nid
//	                             (records written before shards, neither
//	                             inline nor sharded): its device offset
//	                             and a crc32c per checksum block
//	'M' nid key                  omap entry; the value is the user's bytes,
//	                             stored raw (it is data, not a record)
//	'D' seq devoff               deferred write: device offset and whole
//	                             checksum blocks to write there, or
//	                             empty: the write is in the WAL, in a
//	                             LogData record of the same batch
//	'B' region                   allocation bitmap of one region of
//	                             bitmapRegionUnits units (1 = in use)
//	'P' pool                     stored bytes of a pool (uvarint)
//
// coll is kind u8, pool u64 with the sign bit flipped, seed u32. objkey
// (keys.go, appendObjID) encodes pool, reversed hash, namespace, locator,
// name, snap and a has-key flag so that a Pebble iteration over a
// collection yields objects in objid.Compare order. Omap entries and
// units hang off the node id, not the object name, so a Move rewrites one
// record header and leaves the omap and the extent map where they are; a
// Clone copies them to a new nid. Keeping one key per unit makes a small
// overwrite cheap: it rewrites that unit's checksums (about 80 bytes with
// the default geometry), not the whole extent map of a large object, and
// the header only if the size, attributes or allocated pages changed. A
// record of at most MaxInlineUnits units keeps them inline instead: a
// small object is then one key, read with one point lookup.
//
// Free space is persisted, not rebuilt: the bitmap regions a transaction
// changes are written in the same Pebble batch as the records that
// reference or stop referencing the units, so after any crash the bitmap
// agrees with the extent maps of the last durable batch. This keeps Open
// independent of the number of objects, and a future fsck can compare
// the two. The allocator in memory runs ahead of the bitmap in one
// direction only: it hands out units at Queue time (they are marked in
// the batch), and it takes freed units back only once the batch that
// freed them is durable, so a unit is never reused while a durable record
// may still point at it.
//
// Data is copy-on-write by allocation unit: a write of more than 32 KiB
// covering a whole unit, or any write to a unit that has no space yet,
// goes to newly allocated units. A partial overwrite of a unit that
// already has space, or a smaller write covering it, is deferred: the
// new contents of the affected checksum blocks go into the
// batch as a 'D' key, are written in place once the batch is durable, and
// the key is deleted in a later batch. Open replays the 'D' keys left
// (writing the same bytes twice is harmless), so no committed byte is ever
// torn: either the old or the new checksum blocks are on disk, and the
// record in force matches the ones there.

// formatVersion is the superblock version Mkfs writes; Open refuses
// stores of another version. Version 2 moved the extent map from the
// object record to unit keys; there is no upgrade from version 1 (no
// release wrote it).
const formatVersion = 2

// Superblock describes the device geometry, fixed at Mkfs.
type Superblock struct {
	Size          uint64
	AllocUnit     uint64
	ChecksumBlock uint64
}

func (sb Superblock) Encode() []byte {
	var e encoding.Encoder
	m := e.Begin(formatVersion, formatVersion)
	e.Uvarint(sb.Size)
	e.Uvarint(sb.AllocUnit)
	e.Uvarint(sb.ChecksumBlock)
	e.End(m)
	return e.Data()
}

func DecodeSuperblock(b []byte) (Superblock, error) {
	var sb Superblock
	d := encoding.NewDecoder(b)
	if v := d.Begin(formatVersion); d.Err() == nil && v != formatVersion {
		d.Fail(fmt.Errorf("%w: format version %d; this Cuttle reads version %d only", encoding.ErrUnsupportedVersion, v, formatVersion))
	}
	sb.Size = d.Uvarint()
	sb.AllocUnit = d.Uvarint()
	sb.ChecksumBlock = d.Uvarint()
	d.End()
	if err := d.Finish(); err != nil {
		return sb, fmt.Errorf("%w: superblock: %w", objectstore.ErrCorrupt, err)
	}
	if err := sb.Validate(); err != nil {
		return sb, fmt.Errorf("%w: superblock: %w", objectstore.ErrCorrupt, err)
	}
	return sb, nil
}

func (sb Superblock) Validate() error {
	switch {
	case sb.ChecksumBlock < 512 || sb.ChecksumBlock&(sb.ChecksumBlock-1) != 0:
		return fmt.Errorf("checksum block %d is not a power of two >= 512", sb.ChecksumBlock)
	case sb.AllocUnit < sb.ChecksumBlock || sb.AllocUnit&(sb.AllocUnit-1) != 0 || sb.AllocUnit > 1<<30:
		return fmt.Errorf("allocation unit %d is not a power of two between the checksum block %d and 1 GiB", sb.AllocUnit, sb.ChecksumBlock)
	case sb.Size < sb.AllocUnit || sb.Size%sb.AllocUnit != 0 || sb.Size > 1<<56:
		return fmt.Errorf("size %d is not a positive multiple of the allocation unit %d below 2^56", sb.Size, sb.AllocUnit)
	}
	return nil
}

// Units is the number of allocation units of the device.
func (sb Superblock) Units() uint64 { return sb.Size / sb.AllocUnit }

// BlocksPerUnit is the number of checksum blocks per allocation unit.
func (sb Superblock) BlocksPerUnit() int { return int(sb.AllocUnit / sb.ChecksumBlock) }

// EncodeEmpty encodes a record with no fields yet (collections).
func EncodeEmpty() []byte {
	var e encoding.Encoder
	e.End(e.Begin(1, 1))
	return e.Data()
}

func DecodeEmpty(b []byte) error {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	d.End()
	if err := d.Finish(); err != nil {
		return fmt.Errorf("%w: %w", objectstore.ErrCorrupt, err)
	}
	return nil
}

// EncodeUvarint encodes a counter record ('N', 'P').
func EncodeUvarint(v uint64) []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(v)
	e.End(m)
	return e.Data()
}

func DecodeUvarint(b []byte) (uint64, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	v := d.Uvarint()
	d.End()
	if err := d.Finish(); err != nil {
		return 0, fmt.Errorf("%w: %w", objectstore.ErrCorrupt, err)
	}
	return v, nil
}

// DeferredWrite is the value of a 'D' key: whole checksum blocks to write
// at DevOff once the batch holding it is durable.
type DeferredWrite struct {
	DevOff uint64
	Data   []byte
}

// maxDeferredBytes bounds a deferred record's data when decoding.
const maxDeferredBytes = 1 << 30

// encodeTo appends w's encoding to e and returns e's data.
func (w DeferredWrite) encodeTo(e *encoding.Encoder) []byte {
	e.Grow(len(w.Data) + 32) // the envelope and two varints
	m := e.Begin(1, 1)
	e.Uvarint(w.DevOff)
	e.Bytes(w.Data)
	e.End(m)
	return e.Data()
}

func DecodeDeferred(b []byte, sb Superblock) (DeferredWrite, error) {
	var w DeferredWrite
	d := encoding.NewDecoder(b)
	d.Begin(1)
	w.DevOff = d.Uvarint()
	w.Data = d.Bytes(maxDeferredBytes)
	d.End()
	if err := d.Finish(); err != nil {
		return w, fmt.Errorf("%w: deferred write: %w", objectstore.ErrCorrupt, err)
	}
	return w, w.check(sb)
}

// check reports whether w covers whole checksum blocks of the device.
func (w DeferredWrite) check(sb Superblock) error {
	n := uint64(len(w.Data))
	if n == 0 || n%sb.ChecksumBlock != 0 || w.DevOff%sb.ChecksumBlock != 0 || w.DevOff > sb.Size || n > sb.Size-w.DevOff {
		return fmt.Errorf("%w: deferred write of %d bytes at %d does not fit the device", objectstore.ErrCorrupt, n, w.DevOff)
	}
	return nil
}

// A deferred write whose 'D' key has an empty value is in the WAL, in
// a LogData record of the same batch (walkeep.go):
//
//	'D' envelope(v1){seq uvarint, devoff uvarint, data bytes}
//
// The leading 'D' tells the store's LogData records from any other.
const loggedDeferredTag = PrefixDeferred

// EncodeLogged appends to e the LogData payload of w, a deferred write
// of transaction seq, and returns e's data.
func (w DeferredWrite) EncodeLogged(e *encoding.Encoder, seq uint64) []byte {
	e.Grow(len(w.Data) + 40) // tag, envelope and three varints
	e.Uint8(loggedDeferredTag)
	m := e.Begin(1, 1)
	e.Uvarint(seq)
	e.Uvarint(w.DevOff)
	e.Bytes(w.Data)
	e.End(m)
	return e.Data()
}

// DecodeLoggedDeferred decodes a LogData payload made by EncodeLogged;
// ok is false for a payload that is not a deferred write's.
func DecodeLoggedDeferred(b []byte, sb Superblock) (seq uint64, w DeferredWrite, ok bool, err error) {
	if len(b) == 0 || b[0] != loggedDeferredTag {
		return 0, w, false, nil
	}
	d := encoding.NewDecoder(b[1:])
	d.Begin(1)
	seq = d.Uvarint()
	w.DevOff = d.Uvarint()
	w.Data = d.Bytes(maxDeferredBytes)
	d.End()
	if err := d.Finish(); err != nil {
		return 0, w, true, fmt.Errorf("%w: logged deferred write: %w", objectstore.ErrCorrupt, err)
	}
	return seq, w, true, w.check(sb)
}

// BitmapRegionUnits is the number of allocation units per bitmap key.
const BitmapRegionUnits = 4096

func EncodeBitmap(words []uint64) []byte {
	var e encoding.Encoder
	return EncodeBitmapTo(&e, words)
}

// EncodeBitmapTo appends the encoding of words to e and returns e's data.
//
// Version 2 leaves out the words a region mostly consists of: every
// transaction that allocates or frees rewrites its region's key, and
// units are handed out in device order, so a region is usually full
// words, one partial word and empty words. The raw 512 bytes (version 1)
// were a tenth of a 4 KiB write's WAL record, and of its memtable
// bytes, on every OSD.
func EncodeBitmapTo(e *encoding.Encoder, words []uint64) []byte {
	full := 0
	for full < len(words) && words[full] == math.MaxUint64 {
		full++
	}
	empty := 0
	for empty < len(words)-full && words[len(words)-1-empty] == 0 {
		empty++
	}
	middle := words[full : len(words)-empty]
	e.Grow(32 + 8*len(middle))
	m := e.Begin(2, 2)
	e.Uvarint(uint64(len(words)))
	e.Uvarint(uint64(full))
	e.Uvarint(uint64(empty))
	for _, w := range middle {
		e.Uint64(w)
	}
	e.End(m)
	return e.Data()
}

// DecodeBitmap decodes a region: version 1 is the word count and the
// words; version 2 (encodeBitmapTo) the word count, the counts of
// leading full and trailing empty words, and the words between.
func DecodeBitmap(b []byte) ([]uint64, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	n := d.Uvarint()
	var full, empty uint64
	if v >= 2 {
		full, empty = d.Uvarint(), d.Uvarint()
	}
	if d.Err() == nil && (n > BitmapRegionUnits/64 || full > n || empty > n-full) {
		d.Fail(fmt.Errorf("%w: bitmap region of %d words, %d full and %d empty", encoding.ErrCorrupt, n, full, empty))
	}
	if d.Err() != nil {
		n, full, empty = 0, 0, 0
	}
	words := make([]uint64, n)
	for i := range full {
		words[i] = math.MaxUint64
	}
	for i := full; i < n-empty; i++ {
		words[i] = d.Uint64()
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("%w: bitmap: %w", objectstore.ErrCorrupt, err)
	}
	return words, nil
}
