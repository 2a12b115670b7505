package crush

import (
	"math"
	"math/bits"
)

// choose picks one item of b for input x and replica rank r, with the
// bucket's algorithm (Ceph's crush_bucket_choose).
func (b *Bucket) choose(p *permState, x, r int32, arg *ChooseArg, position int) int32 {
	switch b.Alg {
	case AlgUniform:
		return b.permChoose(p, x, r)
	case AlgList:
		return b.listChoose(x, r)
	case AlgTree:
		return b.treeChoose(x, r)
	case AlgStraw:
		return b.strawChoose(x, r)
	case AlgStraw2:
		return b.straw2Choose(x, r, arg, position)
	}
	return b.Items[0]
}

// permState is a uniform bucket's partial pseudo-random permutation of its
// items for one input x (Ceph's crush_work_bucket).
type permState struct {
	gen  uint64 // the workspace generation this state belongs to
	x    uint32
	n    uint32 // entries of perm computed; 0xffff after the r=0 shortcut
	perm []uint32
}

// permChoose returns the item at rank r of a permutation of b's items
// seeded by x, computing only as much of the permutation as needed.
func (b *Bucket) permChoose(p *permState, x, r int32) int32 {
	size := uint32(len(b.Items))
	pr := uint32(r) % size
	if p.x != uint32(x) || p.n == 0 {
		p.x = uint32(x)
		if pr == 0 { // the common case, without the permutation
			s := Hash3(uint32(x), uint32(b.ID), 0) % size
			p.perm[0] = s
			p.n = 0xffff
			return b.Items[s]
		}
		for i := range size {
			p.perm[i] = i
		}
		p.n = 0
	} else if p.n == 0xffff { // expand the r=0 shortcut into a real start
		for i := uint32(1); i < size; i++ {
			p.perm[i] = i
		}
		p.perm[p.perm[0]] = 0
		p.n = 1
	}
	for p.n <= pr {
		k := p.n
		if k < size-1 {
			i := Hash3(uint32(x), uint32(b.ID), k) % (size - k)
			if i != 0 {
				p.perm[k+i], p.perm[k] = p.perm[k], p.perm[k+i]
			}
		}
		p.n++
	}
	return b.Items[p.perm[pr]]
}

func (b *Bucket) listChoose(x, r int32) int32 {
	for i := len(b.Items) - 1; i >= 0; i-- {
		w := uint64(Hash4(uint32(x), uint32(b.Items[i]), uint32(r), uint32(b.ID)) & 0xffff)
		w = (w * uint64(b.sums[i])) >> 16
		if w < uint64(b.Weights[i]) {
			return b.Items[i]
		}
	}
	return b.Items[0]
}

func (b *Bucket) treeChoose(x, r int32) int32 {
	n := b.nodeCnt >> 1
	for n&1 == 0 {
		w := b.nodes[n]
		t := (uint64(Hash4(uint32(x), uint32(n), uint32(r), uint32(b.ID))) * uint64(w)) >> 32
		if l := treeLeft(n); t < uint64(b.nodes[l]) {
			n = l
		} else {
			n = treeRight(n)
		}
	}
	return b.Items[n>>1]
}

func (b *Bucket) strawChoose(x, r int32) int32 {
	high := 0
	var highDraw uint64
	for i, item := range b.Items {
		draw := uint64(Hash3(uint32(x), uint32(item), uint32(r))&0xffff) * uint64(b.straws[i])
		if i == 0 || draw > highDraw {
			high, highDraw = i, draw
		}
	}
	return b.Items[high]
}

// straw2Choose draws, for each item, an exponentially distributed length
// scaled by its weight and picks the longest, so a weight change moves data
// only to or from the changed item.
func (b *Bucket) straw2Choose(x, r int32, arg *ChooseArg, position int) int32 {
	weights, ids := b.Weights, b.Items
	if arg != nil {
		if n := len(arg.Weights); n > 0 {
			weights = arg.Weights[min(position, n-1)]
		}
		if arg.IDs != nil {
			ids = arg.IDs
		}
	}
	high := 0
	var highDraw int64
	for i := range b.Items {
		draw := int64(math.MinInt64)
		if w := weights[i]; w != 0 {
			u := Hash3(uint32(x), uint32(ids[i]), uint32(r)) & 0xffff
			// ln(u/65536) in 16.44 fixed point: negative, so a heavier
			// weight gives a draw nearer zero.
			draw = (int64(crushLn(u)) - 0x1000000000000) / int64(w)
		}
		if i == 0 || draw > highDraw {
			high, highDraw = i, draw
		}
	}
	return b.Items[high]
}

// crushLn returns 2^44 * log2(xin+1) in fixed point, computed with Ceph's
// tables (crush_ln).
func crushLn(xin uint32) uint64 {
	x := xin + 1
	iexpon := 15
	if x&0x18000 == 0 {
		shift := bits.LeadingZeros32(x&0x1ffff) - 16
		x <<= shift
		iexpon = 15 - shift
	}
	index1 := (x >> 8) << 1
	rh := rhLHTable[index1-256]
	lh := rhLHTable[index1+1-256]
	xl64 := (uint64(x) * rh) >> 48
	result := uint64(iexpon) << (12 + 32)
	ll := llTable[xl64&0xff]
	lh += ll
	lh >>= 48 - 12 - 32
	return result + lh
}
