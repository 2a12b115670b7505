package blockstore

// slotIndex is the record cache's index from a key's hash to the slot
// that holds the key: an open-addressed table of 8-byte entries without
// pointers, probed linearly, at most three quarters full, with deletion
// by backward shift (no tombstones). A Go map from uint64 to int32 costs
// about 28 bytes an entry at its usual load, this about 14: with the
// slot's own savings (recordCache), a 4 KiB object's entry went from 250
// bytes of heap to 225 (TestRecordCacheAccounting).
//
// An entry is the high 32 bits of the hash above the slot's number plus
// one; 0 is an empty entry. Those 32 bits also choose where probing
// starts, so an entry alone says where it belongs. Keys whose hashes
// share them are told apart by the caller, which compares the slot's key.
type slotIndex struct {
	table []uint64 // len is 0 or a power of two
	n     int      // entries in use
}

// minIndexSize is the table's first size.
const minIndexSize = 64

func indexEntry(h uint64, slot int32) uint64 { return h&^(1<<32-1) | uint64(uint32(slot)+1) }

func (x *slotIndex) home(e uint64) int { return int(e>>32) & (len(x.table) - 1) }

// find returns the position and slot of the first entry for hash h whose
// slot match accepts, and whether there was one (else pos is -1).
func (x *slotIndex) find(h uint64, match func(slot int32) bool) (pos int, slot int32, ok bool) {
	if len(x.table) == 0 {
		return -1, 0, false
	}
	mask := len(x.table) - 1
	tag := h >> 32
	for p := x.home(h); ; p = (p + 1) & mask {
		e := x.table[p]
		if e == 0 {
			return -1, 0, false
		}
		if e>>32 == tag {
			if s := int32(uint32(e) - 1); match(s) {
				return p, s, true
			}
		}
	}
}

// insert adds an entry for hash h and slot, growing the table first if
// it would be more than three quarters full.
func (x *slotIndex) insert(h uint64, slot int32) {
	if 4*(x.n+1) > 3*len(x.table) {
		x.grow()
	}
	x.place(indexEntry(h, slot))
	x.n++
}

func (x *slotIndex) place(e uint64) {
	mask := len(x.table) - 1
	p := x.home(e)
	for x.table[p] != 0 {
		p = (p + 1) & mask
	}
	x.table[p] = e
}

func (x *slotIndex) grow() {
	old := x.table
	x.table = make([]uint64, max(minIndexSize, 2*len(old)))
	for _, e := range old {
		if e != 0 {
			x.place(e)
		}
	}
}

// deleteAt removes the entry at pos and moves back the entries after it
// that probing would no longer reach across the gap.
func (x *slotIndex) deleteAt(pos int) {
	mask := len(x.table) - 1
	gap := pos
	for p := (pos + 1) & mask; x.table[p] != 0; p = (p + 1) & mask {
		// The entry at p may fill the gap unless its home lies
		// cyclically in (gap, p]: then probing from its home never
		// passes the gap.
		if h := x.home(x.table[p]); (p-h)&mask >= (p-gap)&mask {
			x.table[gap] = x.table[p]
			gap = p
		}
	}
	x.table[gap] = 0
	x.n--
}

// len returns the number of entries.
func (x *slotIndex) len() int { return x.n }
