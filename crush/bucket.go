package crush

import (
	"math"
	"math/bits"
)

// derive computes the state each algorithm chooses with, exactly as Ceph's
// builder does when it makes a bucket.
func (b *Bucket) derive(strawCalcVersion uint32) {
	b.weight = 0
	for _, w := range b.Weights {
		b.weight += w
	}
	switch b.Alg {
	case AlgList:
		b.sums = make([]uint32, len(b.Weights))
		var sum uint32
		for i, w := range b.Weights {
			sum += w
			b.sums[i] = sum
		}
	case AlgTree:
		b.deriveTree()
	case AlgStraw:
		b.straws = strawLengths(b.Weights, strawCalcVersion)
	}
}

// Tree buckets keep weights in an implicit binary tree whose leaves are the
// odd node numbers: item i is node 2i+1.

func treeHeight(n int32) int32 { return int32(bits.TrailingZeros32(uint32(n))) }

func treeParent(n int32) int32 {
	h := treeHeight(n)
	if n&(1<<(h+1)) != 0 {
		return n - 1<<h
	}
	return n + 1<<h
}

func treeLeft(n int32) int32  { return n - 1<<(treeHeight(n)-1) }
func treeRight(n int32) int32 { return n + 1<<(treeHeight(n)-1) }

func treeDepth(size int) int {
	if size == 0 {
		return 0
	}
	return bits.Len(uint(size-1)) + 1
}

func (b *Bucket) deriveTree() {
	depth := treeDepth(len(b.Items))
	b.nodeCnt = int32(1) << depth
	b.nodes = make([]uint32, b.nodeCnt)
	for i, w := range b.Weights {
		node := int32(2*i + 1)
		b.nodes[node] = w
		for j := 1; j < depth; j++ {
			node = treeParent(node)
			b.nodes[node] += w
		}
	}
	if depth == 0 {
		b.nodeCnt = 0
	}
}

// strawLengths computes legacy straw lengths as Ceph's crush_calc_straw
// does, floating-point steps included, so straws match bit for bit.
// Version 0 mishandles runs of equal weights; Ceph keeps it for old maps.
func strawLengths(weights []uint32, version uint32) []uint32 {
	size := len(weights)
	straws := make([]uint32, size)
	// Indexes sorted by ascending weight with Ceph's insertion sort, which
	// keeps equal weights in their original order.
	order := make([]int, 0, size)
	for i := range weights {
		j := 0
		for j < len(order) && weights[i] >= weights[order[j]] {
			j++
		}
		order = append(order, 0)
		copy(order[j+1:], order[j:])
		order[j] = i
	}

	numLeft := size
	straw := 1.0
	var wBelow, lastW float64
	for i := 0; i < size; {
		cur := weights[order[i]]
		if cur == 0 {
			straws[order[i]] = 0
			i++
			if version >= 1 {
				numLeft--
			}
			continue
		}
		straws[order[i]] = uint32(straw * 0x10000)
		i++
		if i == size {
			break
		}
		next := weights[order[i]]
		if version == 0 {
			if next == cur {
				continue
			}
			wBelow += (float64(cur) - lastW) * float64(numLeft)
			for j := i; j < size && weights[order[j]] == next; j++ {
				numLeft--
			}
		} else {
			wBelow += (float64(cur) - lastW) * float64(numLeft)
			numLeft--
		}
		// Ceph multiplies in unsigned 32-bit arithmetic here.
		wNext := float64(uint32(numLeft) * (next - cur))
		pBelow := wBelow / (wBelow + wNext)
		straw *= math.Pow(1.0/pBelow, 1.0/float64(numLeft))
		lastW = float64(cur)
	}
	return straws
}
