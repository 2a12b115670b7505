package scrub

import (
	"fmt"
	"hash"
	"hash/crc32"
	"maps"
	"slices"
)

// The digests a scrub map carries, crc32c (Castagnoli). Every member must
// digest alike, or a deep scrub reports every object: these functions are
// the one definition. A name or value is framed by its length, so that
// moving bytes between a name and its value changes the digest.

// castagnoli is the Castagnoli table (hardware accelerated); read only.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// writeEntry adds one name and value to h, framed by their lengths.
func writeEntry(h hash.Hash32, name string, value []byte) {
	fmt.Fprintf(h, "%d:%s%d:", len(name), name, len(value))
	h.Write(value)
}

// AttrsDigest is the digest of an object's attributes: every name and
// value, in name order.
func AttrsDigest(attrs map[string][]byte) uint32 {
	h := crc32.New(castagnoli)
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		writeEntry(h, k, attrs[k])
	}
	return h.Sum32()
}

// DataDigest is the digest of an object's data.
func DataDigest(data []byte) uint32 {
	return crc32.Checksum(data, castagnoli)
}

// OmapDigest builds the digest of an object's omap: its header, then
// every key and value, added in key order.
type OmapDigest struct {
	h hash.Hash32
}

// NewOmapDigest starts the digest of an omap with header.
func NewOmapDigest(header []byte) *OmapDigest {
	h := crc32.New(castagnoli)
	fmt.Fprintf(h, "%d:", len(header))
	h.Write(header)
	return &OmapDigest{h: h}
}

// Add adds one entry; entries must come in key order.
func (d *OmapDigest) Add(key string, value []byte) { writeEntry(d.h, key, value) }

// Sum32 is the digest of the header and the entries added.
func (d *OmapDigest) Sum32() uint32 { return d.h.Sum32() }
