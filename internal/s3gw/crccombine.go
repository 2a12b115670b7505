package s3gw

// The CRC algebra of FULL_OBJECT multipart checksums: a whole object's
// CRC from its parts' CRCs and lengths, without reading the data again.

import (
	"hash/crc32"
)

// beUint reads a big-endian CRC of 4 or 8 bytes (S3 sends CRCs so).
func beUint(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

func beBytes(v uint64, n int) []byte {
	b := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}

// crcCombine returns the CRC of A followed by B from crcA, crcB and B's
// length, for a reflected CRC whose initial value equals its final XOR
// (CRC-32, CRC-32C and CRC-64/NVME all are): crc(A‖B) = crcA·x^(8·lenB)
// ⊕ crcB modulo the polynomial, computed in GF(2) by square and multiply
// (the method of zlib's crc32_combine; written here from the algebra).
func crcCombine(alg string, crcA, crcB uint64, lenB int64) uint64 {
	return crcCombineShift(alg, crcA, crcB, crcShift(alg, lenB))
}

// crcShift is x^(8·n) modulo alg's polynomial: what crcCombine
// multiplies crcA by for a B of n bytes.
func crcShift(alg string, n int64) uint64 {
	poly, width := crcPoly(alg)
	return gfPowX(uint64(max(n, 0))*8, poly, width)
}

// crcCombineShift is crcCombine with B's length given as its shift.
func crcCombineShift(alg string, crcA, crcB, shift uint64) uint64 {
	poly, width := crcPoly(alg)
	return gfMul(shift, crcA, poly, width) ^ crcB
}

// crcPoly is a CRC's reflected polynomial and width.
func crcPoly(alg string) (uint64, int) {
	switch alg {
	case "CRC32":
		return crc32.IEEE, 32
	case "CRC32C":
		return crc32.Castagnoli, 32
	case "CRC64NVME":
		return crc64NVMEPoly, 64
	}
	panic("s3gw: no CRC polynomial for " + alg)
}

// gfMul multiplies a and b modulo poly in the reflected representation
// of width bits (the top bit is x^0).
func gfMul(a, b, poly uint64, width int) uint64 {
	top := uint64(1) << (width - 1)
	var p uint64
	for m := top; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		// b *= x
		if b&1 != 0 {
			b = b>>1 ^ poly
		} else {
			b >>= 1
		}
	}
	return p
}

// gfPowX returns x^n modulo poly, reflected.
func gfPowX(n, poly uint64, width int) uint64 {
	top := uint64(1) << (width - 1)
	result := top    // x^0
	base := top >> 1 // x^1
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			result = gfMul(result, base, poly, width)
		}
		base = gfMul(base, base, poly, width)
	}
	return result
}
