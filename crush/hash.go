package crush

// hashSeed is the initial value of CRUSH's rjenkins1 hash.
const hashSeed = 1315423911

// mix is Bob Jenkins' 96-bit mix, the core of CRUSH's rjenkins1 hash.
func mix(a, b, c uint32) (uint32, uint32, uint32) {
	a = (a - b - c) ^ (c >> 13)
	b = (b - c - a) ^ (a << 8)
	c = (c - a - b) ^ (b >> 13)
	a = (a - b - c) ^ (c >> 12)
	b = (b - c - a) ^ (a << 16)
	c = (c - a - b) ^ (b >> 5)
	a = (a - b - c) ^ (c >> 3)
	b = (b - c - a) ^ (a << 10)
	c = (c - a - b) ^ (b >> 15)
	return a, b, c
}

// Hash2 is CRUSH's rjenkins1 hash of two words (crush_hash32_2). Ceph uses
// it for a PG's placement seed and for reweight rejection.
func Hash2(a, b uint32) uint32 {
	h := uint32(hashSeed) ^ a ^ b
	x, y := uint32(231232), uint32(1232)
	a, b, h = mix(a, b, h)
	_, _, h = mix(x, a, h)
	_, _, h = mix(b, y, h)
	return h
}

// Hash3 is CRUSH's rjenkins1 hash of three words (crush_hash32_3).
func Hash3(a, b, c uint32) uint32 {
	h := uint32(hashSeed) ^ a ^ b ^ c
	x, y := uint32(231232), uint32(1232)
	a, b, h = mix(a, b, h)
	c, x, h = mix(c, x, h)
	y, _, h = mix(y, a, h)
	_, _, h = mix(b, x, h)
	_, _, h = mix(y, c, h)
	return h
}

// Hash4 is CRUSH's rjenkins1 hash of four words (crush_hash32_4).
func Hash4(a, b, c, d uint32) uint32 {
	h := uint32(hashSeed) ^ a ^ b ^ c ^ d
	x, y := uint32(231232), uint32(1232)
	a, b, h = mix(a, b, h)
	c, d, h = mix(c, d, h)
	_, x, h = mix(a, x, h)
	y, _, h = mix(y, b, h)
	_, _, h = mix(c, x, h)
	_, _, h = mix(y, d, h)
	return h
}
