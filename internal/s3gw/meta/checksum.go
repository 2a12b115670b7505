package meta

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// Checksum is an object's or a part's additional checksum (S3's
// x-amz-checksum-*): the algorithm (CRC32, CRC32C, CRC64NVME, SHA1,
// SHA256), the type (FULL_OBJECT, or COMPOSITE for a checksum of the
// parts' checksums) and the value, base64 as S3 shows it (a composite
// one ends in "-N"). The zero Checksum is none.
type Checksum struct {
	Algorithm string
	Type      string
	Value     string
}

// IsZero says whether there is no checksum.
func (c Checksum) IsZero() bool { return c.Algorithm == "" }

// PartSum is one part of a completed multipart object as
// GetObjectAttributes lists it: its number, size and checksum value.
type PartSum struct {
	Number   int
	Size     int64
	Checksum string
}

// maxPartSums bounds the parts an entry lists, so the entry stays under
// kv.MaxValueLen with its extents: a SHA-256 object of more parts keeps
// only its count (see s3gw's GetObjectAttributes).
const maxPartSums = 10000

func encodeChecksum(e *encoding.Encoder, c Checksum) {
	e.String(c.Algorithm)
	e.String(c.Type)
	e.String(c.Value)
}

func decodeChecksum(d *encoding.Decoder) Checksum {
	return Checksum{Algorithm: d.String(16), Type: d.String(16), Value: d.String(128)}
}

func encodePartSums(e *encoding.Encoder, ps []PartSum) {
	e.Uvarint(uint64(len(ps)))
	for _, p := range ps {
		e.Uvarint(uint64(p.Number))
		e.Varint(p.Size)
		e.String(p.Checksum)
	}
}

func decodePartSums(d *encoding.Decoder) []PartSum {
	n := d.Count(3)
	if n > maxPartSums {
		d.Fail(fmt.Errorf("%d part checksums", n))
		return nil
	}
	var ps []PartSum
	for i := 0; i < n && d.Err() == nil; i++ {
		p := PartSum{Number: int(d.Uvarint()), Size: d.Varint(), Checksum: d.String(128)}
		if d.Err() == nil && (p.Number < 1 || p.Number > 10000 || p.Size < 0) {
			d.Fail(fmt.Errorf("part %d of %d bytes", p.Number, p.Size))
		}
		ps = append(ps, p)
	}
	return ps
}
