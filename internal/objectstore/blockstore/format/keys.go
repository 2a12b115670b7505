package format

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// Key prefixes (see format.go for the schema).
const (
	PrefixSuper      = 'S'
	PrefixNextNid    = 'N'
	PrefixCollection = 'C'
	PrefixObject     = 'O'
	PrefixOmap       = 'M'
	PrefixUnit       = 'U'
	PrefixShard      = 'V'
	PrefixDeferred   = 'D'
	PrefixBitmap     = 'B'
	PrefixPoolStats  = 'P'
)

// collKeyLen is the length of an encoded collection id.
const collKeyLen = 1 + 8 + 4

// appendColl appends c order-preservingly: kind u8, pool (sign bit
// flipped) u64 BE, seed u32 BE.
func appendColl(b []byte, c objectstore.CollectionID) []byte {
	b = append(b, byte(c.Kind))
	b = binary.BigEndian.AppendUint64(b, uint64(c.Pool)^(1<<63))
	return binary.BigEndian.AppendUint32(b, c.Seed)
}

func DecodeColl(b []byte) (objectstore.CollectionID, error) {
	if len(b) != collKeyLen {
		return objectstore.CollectionID{}, fmt.Errorf("%w: collection key of %d bytes", objectstore.ErrCorrupt, len(b))
	}
	c := objectstore.CollectionID{
		Kind: objectstore.CollectionKind(b[0]),
		Pool: int64(binary.BigEndian.Uint64(b[1:]) ^ (1 << 63)),
		Seed: binary.BigEndian.Uint32(b[9:]),
	}
	if !c.Valid() {
		return c, fmt.Errorf("%w: collection key decodes to invalid %v", objectstore.ErrCorrupt, c)
	}
	return c, nil
}

// CollectionKey is the key of c's collection record.
func CollectionKey(c objectstore.CollectionID) []byte {
	return appendColl([]byte{PrefixCollection}, c)
}

// CollObjectPrefix returns 'O' + collection.
func CollObjectPrefix(c objectstore.CollectionID) []byte {
	return appendColl([]byte{PrefixObject}, c)
}

// ObjectKey is the key of o's record in c: 'O' + collection + the
// order-preserving encoding of o.
func ObjectKey(c objectstore.CollectionID, o objid.ID) []byte {
	return AppendObjectKey(make([]byte, 0, objectKeyLen(o)), c, o)
}

// objectKeyLen is the length of an object key for o without NULs to
// escape (the locator is the name when o has no key).
func objectKeyLen(o objid.ID) int {
	return objectKeyFixed + len(o.Namespace) + len(o.Locator()) + len(o.Name) + 2*3 + 8 + 1
}

// objectKeyFixed is the fixed-size start of an object key: its prefix,
// collection, pool and reversed hash.
const objectKeyFixed = 1 + collKeyLen + 8 + 4

// AppendObjectKey appends o's record key to b.
func AppendObjectKey(b []byte, c objectstore.CollectionID, o objid.ID) []byte {
	b = append(b, PrefixObject)
	b = appendColl(b, c)
	return appendObjID(b, o)
}

// appendObjID appends o so that bytes.Compare of two encodings agrees
// with objid.Compare: pool (sign bit flipped) u64 BE, reversed hash u32
// BE, namespace, locator and name as escaped strings, snap u64 BE, and a
// final byte saying whether o has a key (so that an id whose key equals
// its name, which objid.Compare ranks equal to the keyless one, still has
// its own key). objid.Compare only looks at the locator when either id
// has a key; when neither has, both locators are the names, so always
// encoding the locator before the name gives the same order.
func appendObjID(b []byte, o objid.ID) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(o.Pool)^(1<<63))
	b = binary.BigEndian.AppendUint32(b, o.BitwiseKey())
	b = appendEscaped(b, o.Namespace)
	b = appendEscaped(b, o.Locator())
	b = appendEscaped(b, o.Name)
	b = binary.BigEndian.AppendUint64(b, o.Snap)
	if o.Key != "" {
		return append(b, 1)
	}
	return append(b, 0)
}

// appendEscaped appends s with each 0x00 written as 0x00 0xff and a
// terminating 0x00 0x01, which keeps bytewise order and makes the
// encoding self-delimiting.
func appendEscaped(b []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			break
		}
		b = append(append(b, s[:i+1]...), 0xff)
		s = s[i+1:]
	}
	return append(append(b, s...), 0, 1)
}

// LocatorSpan returns where the locator lies in object key k if it only
// repeats the name (the record cache leaves it out, cache.go); lo == hi
// if it does not, or k is not a key appendObjectKey makes.
func LocatorSpan[K string | []byte](k K) (lo, hi int) {
	if len(k) < objectKeyFixed+3*2+8+1 || k[0] != PrefixObject || k[len(k)-1] != 0 {
		return 0, 0
	}
	ns := escapedEnd(k, objectKeyFixed)
	loc := escapedEnd(k, ns)
	if ns < 0 || loc < 0 || 2*loc-ns > len(k) || string(k[ns:loc]) != string(k[loc:2*loc-ns]) {
		return 0, 0 // not a key appendObjectKey makes: kept whole
	}
	return ns, loc
}

// escapedEnd returns where the escaped string (appendEscaped) starting
// at k[i] ends, or -1.
func escapedEnd[K string | []byte](k K, i int) int {
	if i < 0 {
		return -1
	}
	for ; i+1 < len(k); i++ {
		if k[i] == 0 {
			if k[i+1] == 1 {
				return i + 2
			}
			i++ // an escaped 0x00
		}
	}
	return -1
}

// readEscaped decodes a string written by appendEscaped from the front
// of b and returns it with the rest of b.
func readEscaped(b []byte) (string, []byte, error) {
	out := make([]byte, 0, 16)
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			out = append(out, b[i])
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case 0xff:
			out = append(out, 0)
			i++
		case 1:
			if len(out) > objid.MaxNameLen {
				return "", nil, fmt.Errorf("%w: object key string of %d bytes", objectstore.ErrCorrupt, len(out))
			}
			return string(out), b[i+2:], nil
		default:
			return "", nil, fmt.Errorf("%w: bad escape 0x00 0x%02x in object key", objectstore.ErrCorrupt, b[i+1])
		}
	}
	return "", nil, fmt.Errorf("%w: unterminated string in object key", objectstore.ErrCorrupt)
}

// decodeObjID decodes what appendObjID wrote; b must hold exactly one id.
func decodeObjID(b []byte) (objid.ID, error) {
	var o objid.ID
	if len(b) < 12 {
		return o, fmt.Errorf("%w: object key of %d bytes", objectstore.ErrCorrupt, len(b))
	}
	o.Pool = int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
	o.Hash = objid.ReverseBits(binary.BigEndian.Uint32(b[8:]))
	rest := b[12:]
	var locator string
	var err error
	if o.Namespace, rest, err = readEscaped(rest); err != nil {
		return o, err
	}
	if locator, rest, err = readEscaped(rest); err != nil {
		return o, err
	}
	if o.Name, rest, err = readEscaped(rest); err != nil {
		return o, err
	}
	if len(rest) != 9 {
		return o, fmt.Errorf("%w: object key has %d bytes after the name, want 9", objectstore.ErrCorrupt, len(rest))
	}
	o.Snap = binary.BigEndian.Uint64(rest)
	switch rest[8] {
	case 0:
		if locator != o.Name {
			return o, fmt.Errorf("%w: keyless object key with locator %q != name %q", objectstore.ErrCorrupt, locator, o.Name)
		}
	case 1:
		if locator == "" {
			return o, fmt.Errorf("%w: object key flags a key but the locator is empty", objectstore.ErrCorrupt)
		}
		o.Key = locator
	default:
		return o, fmt.Errorf("%w: object key flag %d", objectstore.ErrCorrupt, rest[8])
	}
	return o, nil
}

// DecodeObjectKey splits a full object record key into collection and id.
func DecodeObjectKey(k []byte) (objectstore.CollectionID, objid.ID, error) {
	if len(k) < 1+collKeyLen || k[0] != PrefixObject {
		return objectstore.CollectionID{}, objid.ID{}, fmt.Errorf("%w: not an object key", objectstore.ErrCorrupt)
	}
	c, err := DecodeColl(k[1 : 1+collKeyLen])
	if err != nil {
		return c, objid.ID{}, err
	}
	o, err := decodeObjID(k[1+collKeyLen:])
	return c, o, err
}

// OmapPrefix is the prefix of every omap key of node nid.
func OmapPrefix(nid uint64) []byte { return u64Key(PrefixOmap, nid, 0) }

// OmapKey is the key of omap entry key of node nid.
func OmapKey(nid uint64, key string) []byte {
	return append(u64Key(PrefixOmap, nid, len(key)), key...)
}

// unitPrefix is the prefix of every unit key of node nid.
func unitPrefix(nid uint64) []byte { return u64Key(PrefixUnit, nid, 0) }

// UnitKey is the key of logical unit lu of node nid.
func UnitKey(nid, lu uint64) []byte {
	return binary.BigEndian.AppendUint64(u64Key(PrefixUnit, nid, 8), lu)
}

// shardPrefix is the prefix of every unit shard key of node nid.
func shardPrefix(nid uint64) []byte { return u64Key(PrefixShard, nid, 0) }

// ShardKey is the key of unit shard sh of node nid: its units
// [sh*ShardUnits, (sh+1)*ShardUnits).
func ShardKey(nid, sh uint64) []byte {
	return binary.BigEndian.AppendUint64(u64Key(PrefixShard, nid, 8), sh)
}

// DeferredKey is the key of a deferred write: 'D' + seq + device offset.
func DeferredKey(seq, devOff uint64) []byte {
	return binary.BigEndian.AppendUint64(u64Key(PrefixDeferred, seq, 8), devOff)
}

// DeferredSeq returns the transaction seq of deferredKey k.
func DeferredSeq(k []byte) uint64 { return binary.BigEndian.Uint64(k[1:9]) }

// BitmapKey is the key of allocation-bitmap region r.
func BitmapKey(r uint64) []byte { return u64Key(PrefixBitmap, r, 0) }

// PoolStatsKey is the key of pool's stored-bytes counter.
func PoolStatsKey(pool int64) []byte {
	return u64Key(PrefixPoolStats, uint64(pool)^(1<<63), 0)
}

// u64Key returns prefix then v (u64 BE), with room for extra more bytes:
// one allocation for a whole key.
func u64Key(prefix byte, v uint64, extra int) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, 9+extra), prefix), v)
}

// PrefixEnd returns the smallest key greater than every key with prefix p.
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}
