// Package crc32c joins crc32c (Castagnoli) checksums: from the checksums
// of two byte strings A and B and the length of B it computes the
// checksum of A followed by B, without the bytes.
//
// A store verifies every block it reads against the block's checksum, and
// the messenger checksums every payload it sends; with Combine the
// messenger derives the checksum of read data from the block checksums
// the store has already verified instead of hashing the data again. The
// checksums are those of hash/crc32 with crc32.Castagnoli (the usual
// pre- and post-inversion), so Combine's results equal crc32.Checksum of
// the concatenation.
//
// The method is zlib's crc32_combine: appending len(B) bytes multiplies A's
// remainder by x^(8·len(B)) modulo the polynomial, and the inversions
// cancel out. Everything here is pure and safe for concurrent use.
package crc32c

import "sync"

// poly is the Castagnoli polynomial, bit-reversed as hash/crc32 uses it:
// the most significant bit is the coefficient of x^0.
const poly = 0x82f63b78

// one is the polynomial 1 (x^0) in that representation.
const one = 1 << 31

// mulMod returns a·b modulo poly.
func mulMod(a, b uint32) uint32 {
	var p uint32
	for m := uint32(one); m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				break
			}
		}
		if b&1 != 0 {
			b = b>>1 ^ poly
		} else {
			b >>= 1
		}
	}
	return p
}

// powers[k] is x^(2^k) modulo poly, for every k that shiftPoly needs: 8n
// is 2^3·n for a 64-bit n.
var powers = func() (t [3 + 64]uint32) {
	t[0] = one >> 1 // x^1
	for k := 1; k < len(t); k++ {
		t[k] = mulMod(t[k-1], t[k-1])
	}
	return t
}()

// shiftPoly returns x^(8n) modulo poly: what a checksum is multiplied by
// when n bytes are appended.
func shiftPoly(n uint64) uint32 {
	p := uint32(one)
	for k := 3; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = mulMod(powers[k], p)
		}
	}
	return p
}

// Combine returns the crc32c of A followed by B, given crcA and crcB, the
// crc32c of each, and lenB, the length of B.
func Combine(crcA, crcB uint32, lenB uint64) uint32 {
	if lenB == 0 {
		return crcA
	}
	return mulMod(shiftPoly(lenB), crcA) ^ crcB
}

// Joiner combines checksums with those of byte strings of one fixed
// length, faster than Combine: multiplying by a fixed polynomial is
// linear, so it is four table lookups (one per byte of the checksum).
type Joiner struct {
	tables [4][256]uint32
	n      uint64
}

// NewJoiner returns a Joiner for byte strings of n bytes (8 KiB of tables:
// build one and keep it).
func NewJoiner(n uint64) *Joiner {
	j := &Joiner{n: n}
	x := shiftPoly(n)
	for i := range j.tables {
		for v := range 256 {
			j.tables[i][v] = mulMod(x, uint32(v)<<(8*i))
		}
	}
	return j
}

// Len is the length of the byte strings j joins.
func (j *Joiner) Len() uint64 { return j.n }

// Combine returns the crc32c of A followed by B, given crcA and crcB, the
// crc32c of each, where B has j.Len() bytes.
func (j *Joiner) Combine(crcA, crcB uint32) uint32 {
	if j.n == 0 {
		return crcA
	}
	return j.tables[0][crcA&0xff] ^ j.tables[1][crcA>>8&0xff] ^
		j.tables[2][crcA>>16&0xff] ^ j.tables[3][crcA>>24] ^ crcB
}

// PieceLen is the length of the pieces FoldPieces joins: the checksum
// block of the object store and the piece the messenger checksums
// received payloads by.
const PieceLen = 4096

// joinPiece joins PieceLen-byte pieces; built once, never changed.
var joinPiece = sync.OnceValue(func() *Joiner { return NewJoiner(PieceLen) })

// CombinePiece returns the crc32c of A followed by B, given crcA and
// crcB, the crc32c of each, where B is a PieceLen-byte piece.
func CombinePiece(crcA, crcB uint32) uint32 { return joinPiece().Combine(crcA, crcB) }

// FoldPieces returns the crc32c of len(crcs) PieceLen-byte pieces in a
// row, given the crc32c of each.
func FoldPieces(crcs []uint32) uint32 {
	j := joinPiece()
	var crc uint32
	for _, c := range crcs {
		crc = j.Combine(crc, c)
	}
	return crc
}
