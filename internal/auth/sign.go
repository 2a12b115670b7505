package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
)

// SignatureSize is the size of a Sign result.
const SignatureSize = sha256.Size

// Sign returns HMAC-SHA256 under key of the parts of data. Each part is
// preceded by its length as 8 little-endian bytes, so ("ab", "c") and
// ("a", "bc") sign differently.
func Sign(key []byte, data ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	var n [8]byte
	for _, p := range data {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		m.Write(n[:])
		m.Write(p)
	}
	return m.Sum(nil)
}

// Verify reports whether sig is Sign(key, data...), comparing in
// constant time.
func Verify(key, sig []byte, data ...[]byte) bool {
	return hmac.Equal(sig, Sign(key, data...))
}
