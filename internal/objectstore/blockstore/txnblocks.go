package blockstore

import (
	"cmp"
	"slices"
	"sort"

	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/alloc"
)

// txnBlock is the new contents of one checksum block.
type txnBlock struct {
	data     []byte
	deferred bool
}

// blockAt is a txnBlock and its device offset.
type blockAt struct {
	dev uint64
	txnBlock
}

// txnBlocks holds the checksum blocks a transaction writes, by device
// offset. Most transactions only add the blocks of units they allocated
// and never look one up, so the blocks are kept in a slice, and the index
// a lookup needs is built at the first lookup. A 4 MiB write has 1,024
// blocks: a map of them cost more than half of its preparation.
type txnBlocks struct {
	list  []blockAt
	index map[uint64]int // dev -> position in list; nil until a lookup
}

// grow makes room for n more blocks.
func (b *txnBlocks) grow(n int) { b.list = slices.Grow(b.list, n) }

// addFresh adds the block at dev, which b does not hold: a block of a
// unit the transaction allocated, written for the first time.
func (b *txnBlocks) addFresh(dev uint64, blk txnBlock) {
	if b.index != nil {
		b.index[dev] = len(b.list)
	}
	b.list = append(b.list, blockAt{dev, blk})
}

// get returns the block at dev, if b holds it.
func (b *txnBlocks) get(dev uint64) (txnBlock, bool) {
	if b.index == nil {
		b.index = make(map[uint64]int, len(b.list))
		for i, x := range b.list {
			b.index[x.dev] = i
		}
	}
	i, ok := b.index[dev]
	if !ok {
		return txnBlock{}, false
	}
	return b.list[i].txnBlock, true
}

// set sets the block at dev, replacing any b holds.
func (b *txnBlocks) set(dev uint64, blk txnBlock) {
	if _, ok := b.get(dev); ok {
		b.list[b.index[dev]].txnBlock = blk
		return
	}
	b.addFresh(dev, blk)
}

// sorted returns the blocks in device order; b is not used after.
func (b *txnBlocks) sorted() []blockAt {
	byDev := func(x, y blockAt) int { return cmp.Compare(x.dev, y.dev) }
	if !slices.IsSortedFunc(b.list, byDev) {
		slices.SortFunc(b.list, byDev)
	}
	return b.list
}

// freshUnits answers whether a unit was allocated by the transaction,
// from the extents it allocated.
type freshUnits struct {
	allocated []alloc.Extent
	sorted    []alloc.Extent // allocated by offset, when there are many
}

// maxScanExtents is the most extents contains scans one by one.
const maxScanExtents = 16

func (f *freshUnits) add(exts []alloc.Extent) { f.allocated = append(f.allocated, exts...) }

// contains reports whether the unit at dev lies in an allocated extent.
func (f *freshUnits) contains(dev uint64) bool {
	in := func(e alloc.Extent) bool { return dev >= e.Offset && dev-e.Offset < e.Length }
	if len(f.allocated) <= maxScanExtents {
		return slices.ContainsFunc(f.allocated, in)
	}
	if len(f.sorted) != len(f.allocated) {
		f.sorted = slices.SortedFunc(slices.Values(f.allocated), func(x, y alloc.Extent) int { return cmp.Compare(x.Offset, y.Offset) })
	}
	i := sort.Search(len(f.sorted), func(i int) bool { return f.sorted[i].Offset > dev })
	return i > 0 && in(f.sorted[i-1])
}
