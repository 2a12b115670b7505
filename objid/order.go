package objid

import (
	"cmp"
	"math/bits"
)

// ReverseBits reverses the order of the 32 bits of h (Ceph's
// _reverse_bits). Objects sort by the reversed hash so that the objects of
// a placement group, whose hashes share their low bits, are contiguous.
func ReverseBits(h uint32) uint32 { return bits.Reverse32(h) }

// Compare orders IDs as Ceph's cmp(hobject_t, hobject_t) does: Max() last,
// then by pool, reversed hash (BitwiseKey), namespace, locator (only when
// either has a key), name and snapshot. It returns -1, 0 or +1.
func Compare(a, b ID) int {
	if a.max != b.max {
		if a.max {
			return 1
		}
		return -1
	}
	if c := cmp.Compare(a.Pool, b.Pool); c != 0 {
		return c
	}
	if c := cmp.Compare(a.BitwiseKey(), b.BitwiseKey()); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	if a.Key != "" || b.Key != "" {
		if c := cmp.Compare(a.Locator(), b.Locator()); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return cmp.Compare(a.Snap, b.Snap)
}

// Less reports whether a sorts before b.
func Less(a, b ID) bool { return Compare(a, b) < 0 }
