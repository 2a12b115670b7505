package plan

import (
	"fmt"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
)

// Neighbours returns the pair of adjacent leaves a leaf that is too small
// joins with: it and the next leaf, or, for the last leaf, the one before
// and it. ok is false if the index has only one leaf or does not name
// this one (the caller's view is stale).
func (ix Index) Neighbours(leaf Entry) (left, right Entry, ok bool) {
	for i, e := range ix.entries {
		if e != leaf {
			continue
		}
		switch {
		case len(ix.entries) < 2:
			return Entry{}, Entry{}, false
		case i+1 < len(ix.entries):
			return e, ix.entries[i+1], true
		default:
			return ix.entries[i-1], e, true
		}
	}
	return Entry{}, Entry{}, false
}

// Join is the plan of a merge or a rebalance of two adjacent leaves: the
// union of their entries goes to one leaf (a merge) or, split at At, to
// two (a rebalance), with these bounds.
type Join struct {
	Leaves []clskv.Bounds
	At     int
}

// Merge reports whether it is a merge (one leaf).
func (j Join) Merge() bool { return len(j.Leaves) == 1 }

// PlanJoin decides how two adjacent leaves with bounds left and right,
// holding keys (sorted, the left leaf's then the right's), regroup so
// that each holds between k and 2k entries: merge them if together they
// hold at most 2k (Merge), else share the entries anew (Rebalance).
// shrinking is the key whose removal made the join necessary.
func PlanJoin(left, right clskv.Bounds, keys []string, k uint32, shrinking string) (Join, error) {
	if uint64(len(keys)) <= 2*uint64(k) {
		b, err := Merge(left, right, keys)
		if err != nil {
			return Join{}, err
		}
		return Join{Leaves: []clskv.Bounds{b}}, nil
	}
	h, err := Rebalance(left, right, keys, shrinking)
	if err != nil {
		return Join{}, err
	}
	return Join{Leaves: []clskv.Bounds{h.Left, h.Right}, At: h.At}, nil
}

// Merge returns the bounds of the one leaf that replaces two adjacent
// leaves: the left's low to the right's high.
func Merge(left, right clskv.Bounds, keys []string) (clskv.Bounds, error) {
	if err := checkJoin(left, right, keys); err != nil {
		return clskv.Bounds{}, err
	}
	return clskv.Bounds{Low: left.Low, High: right.High}, nil
}

// Rebalance shares the entries of two adjacent leaves anew between two
// leaves at the median, the boundary at the right half's first key. With
// an odd count the half holding shrinking (the key about to be removed)
// gets the extra entry, so that the removal that needed the rebalance
// leaves it at least k. It needs two keys.
func Rebalance(left, right clskv.Bounds, keys []string, shrinking string) (Halves, error) {
	if err := checkJoin(left, right, keys); err != nil {
		return Halves{}, err
	}
	if len(keys) < 2 {
		return Halves{}, fmt.Errorf("kv: a rebalance of %d entries", len(keys))
	}
	at := len(keys) / 2
	if len(keys)%2 == 1 && shrinking < keys[at] {
		at++
	}
	return Halves{At: at, Left: clskv.Bounds{Low: left.Low, High: keys[at]}, Right: clskv.Bounds{Low: keys[at], High: right.High}}, nil
}

func checkJoin(left, right clskv.Bounds, keys []string) error {
	if left.High == "" || left.High != right.Low {
		return fmt.Errorf("kv: leaves %v and %v are not adjacent", left, right)
	}
	whole := clskv.Bounds{Low: left.Low, High: right.High}
	for i, k := range keys {
		if !whole.Contains(k) || (i > 0 && keys[i-1] >= k) {
			return fmt.Errorf("kv: join of %v and %v: key %q out of order or range", left, right, k)
		}
	}
	return nil
}
