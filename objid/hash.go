package objid

// namespaceSep separates the namespace from the locator in the string Ceph
// hashes for an object with a namespace.
const namespaceSep = '\x1f'

// mix is Bob Jenkins' 96-bit mix from lookup2.
func mix(a, b, c uint32) (uint32, uint32, uint32) {
	a -= b
	a -= c
	a ^= c >> 13
	b -= c
	b -= a
	b ^= a << 8
	c -= a
	c -= b
	c ^= b >> 13
	a -= b
	a -= c
	a ^= c >> 12
	b -= c
	b -= a
	b ^= a << 16
	c -= a
	c -= b
	c ^= b >> 5
	a -= b
	a -= c
	a ^= c >> 3
	b -= c
	b -= a
	b ^= a << 10
	c -= a
	c -= b
	c ^= b >> 15
	return a, b, c
}

// hasher feeds lookup2 a byte stream that may arrive in pieces, so that
// HashLocator can hash "namespace\x1f" + locator without building it.
type hasher struct {
	a, b, c uint32
	buf     [12]byte
	n       int // bytes in buf
	length  uint32
}

func newHasher() hasher {
	return hasher{a: 0x9e3779b9, b: 0x9e3779b9}
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func (h *hasher) block(k []byte) {
	h.a += le32(k[0:])
	h.b += le32(k[4:])
	h.c += le32(k[8:])
	h.a, h.b, h.c = mix(h.a, h.b, h.c)
}

func (h *hasher) writeString(s string) {
	h.length += uint32(len(s))
	if h.n > 0 {
		k := copy(h.buf[h.n:], s)
		h.n += k
		s = s[k:]
		if h.n < 12 {
			return
		}
		h.block(h.buf[:])
		h.n = 0
	}
	for len(s) >= 12 {
		h.a += uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
		h.b += uint32(s[4]) | uint32(s[5])<<8 | uint32(s[6])<<16 | uint32(s[7])<<24
		h.c += uint32(s[8]) | uint32(s[9])<<8 | uint32(s[10])<<16 | uint32(s[11])<<24
		h.a, h.b, h.c = mix(h.a, h.b, h.c)
		s = s[12:]
	}
	h.n = copy(h.buf[:], s)
}

func (h *hasher) writeByte(c byte) {
	h.length++
	h.buf[h.n] = c
	h.n++
	if h.n == 12 {
		h.block(h.buf[:])
		h.n = 0
	}
}

// sum finishes the hash: the last 0 to 11 bytes and the length, as
// lookup2's final switch adds them (the low byte of c is the length's).
func (h *hasher) sum() uint32 {
	a, b, c := h.a, h.b, h.c+h.length
	k := h.buf[:h.n]
	var tail [12]byte
	copy(tail[:], k)
	a += le32(tail[0:])
	b += le32(tail[4:])
	c += uint32(tail[8])<<8 | uint32(tail[9])<<16 | uint32(tail[10])<<24
	_, _, c = mix(a, b, c)
	return c
}

// StrHash is Ceph's ceph_str_hash_rjenkins: Bob Jenkins' lookup2 hash of
// s's bytes with the golden-ratio seed.
func StrHash(s string) uint32 {
	h := newHasher()
	h.writeString(s)
	return h.sum()
}

// HashLocator returns the hash Ceph places an object by, given its
// namespace and its locator (the key if it has one, else its name): the
// StrHash of the locator, or of namespace + "\x1f" + locator when the
// namespace is not empty (pg_pool_t::hash_key).
func HashLocator(namespace, locator string) uint32 {
	h := newHasher()
	if namespace != "" {
		h.writeString(namespace)
		h.writeByte(namespaceSep)
	}
	h.writeString(locator)
	return h.sum()
}
