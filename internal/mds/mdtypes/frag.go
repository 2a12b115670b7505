package mdtypes

import (
	"fmt"
	"hash/fnv"
)

// Frag is a directory fragment, as Ceph's frag_t: the names whose 24-bit
// hash (NameHash) has the fragment's value in its top Bits bits. It is
// encoded in 32 bits, the bit count in the top byte and the value in the
// low 24: RootFrag (0) holds every name; splitting a fragment of b bits
// gives fragments of b+n bits. Until directories are fragmented (part II
// of issue 38) every directory has the one fragment RootFrag.
type Frag uint32

// RootFrag is the fragment of every name.
const RootFrag Frag = 0

const fragValueBits = 24

// MakeFrag returns the fragment of bits bits and value value (the value's
// top bits, in the 24-bit space).
func MakeFrag(bits uint8, value uint32) (Frag, error) {
	if bits > fragValueBits {
		return 0, fmt.Errorf("mdtypes: fragment of %d bits, at most %d", bits, fragValueBits)
	}
	if value&^fragMask(bits) != 0 {
		return 0, fmt.Errorf("mdtypes: fragment value %#x has bits below its %d", value, bits)
	}
	return Frag(uint32(bits)<<fragValueBits | value), nil
}

func fragMask(bits uint8) uint32 {
	return (1<<fragValueBits - 1) &^ (1<<(fragValueBits-uint32(bits)) - 1)
}

// Bits is how many top bits of a name's hash select the fragment.
func (f Frag) Bits() uint8 { return uint8(f >> fragValueBits) }

// Value is the fragment's value in the 24-bit hash space.
func (f Frag) Value() uint32 { return uint32(f) & (1<<fragValueBits - 1) }

// Valid reports whether f has at most 24 bits and no value bits below
// them.
func (f Frag) Valid() bool {
	return f.Bits() <= fragValueBits && f.Value()&^fragMask(f.Bits()) == 0
}

// Contains reports whether hash (a NameHash) falls in f.
func (f Frag) Contains(hash uint32) bool { return hash&fragMask(f.Bits()) == f.Value() }

// String formats f as Ceph does: value/bits in hexadecimal.
func (f Frag) String() string { return fmt.Sprintf("%x/%d", f.Value(), f.Bits()) }

// NameHash is a dentry name's place in the 24-bit fragment space: the low
// 24 bits of its 32-bit FNV-1a hash. (Ceph hashes with rjenkins; the
// function is part of the format, fixed here.)
func NameHash(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32() & (1<<fragValueBits - 1)
}

// FragOf returns the fragment among leaves that holds name.
func FragOf(leaves []Frag, name string) (Frag, error) {
	if len(leaves) == 0 {
		return RootFrag, nil
	}
	h := NameHash(name)
	for _, f := range leaves {
		if f.Contains(h) {
			return f, nil
		}
	}
	return 0, fmt.Errorf("mdtypes: no fragment among %v holds %q", leaves, name)
}

// ValidateLeaves checks that leaves are valid fragments that cover the
// hash space exactly once, in order of value.
func ValidateLeaves(leaves []Frag) error {
	var next uint64 // the first hash not yet covered
	for i, f := range leaves {
		if !f.Valid() {
			return fmt.Errorf("mdtypes: fragment %#x is not valid", uint32(f))
		}
		if uint64(f.Value()) != next {
			return fmt.Errorf("mdtypes: fragment %d (%v) starts at %#x, want %#x", i, f, f.Value(), next)
		}
		next += 1 << (fragValueBits - uint32(f.Bits()))
	}
	if next != 1<<fragValueBits {
		return fmt.Errorf("mdtypes: fragments %v do not cover the hash space", leaves)
	}
	return nil
}
