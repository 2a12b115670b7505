// Package plan is the kv store's pure core: the decisions of its
// protocols, made on values the client has read, with no I/O. Index is the
// client's cached view of the index (which leaf covers a key); Split says
// how a full leaf's entries divide into two leaves and their bounds.
//
// It knows the kv class's Bounds and nothing of rados. Its values are
// immutable once built and safe to share.
package plan

import (
	"fmt"
	"sort"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
)

// Entry is one leaf of the index: the leaf object and the key range it
// covers.
type Entry struct {
	Leaf   string
	Bounds clskv.Bounds
}

// Index is the index's leaves in key order, their ranges adjacent and
// together covering every key.
type Index struct {
	entries []Entry
}

// NewIndex builds an Index from entries (high bound, leaf) in any order.
// It fails unless exactly one has no upper bound.
func NewIndex(entries []clskv.IndexEntry) (Index, error) {
	es := append([]clskv.IndexEntry(nil), entries...)
	sort.Slice(es, func(i, j int) bool { return clskv.IndexKey(es[i].High) < clskv.IndexKey(es[j].High) })
	if len(es) == 0 || es[len(es)-1].High != "" {
		return Index{}, fmt.Errorf("kv: the index has no leaf for the largest keys")
	}
	var ix Index
	low := ""
	for i, e := range es {
		if i > 0 && e.High == es[i-1].High {
			return Index{}, fmt.Errorf("kv: the index has two leaves ending at %q", e.High)
		}
		ix.entries = append(ix.entries, Entry{Leaf: e.Leaf, Bounds: clskv.Bounds{Low: low, High: e.High}})
		low = e.High
	}
	return ix, nil
}

// Lookup returns the leaf covering key.
func (ix Index) Lookup(key string) Entry {
	i := sort.Search(len(ix.entries), func(i int) bool {
		h := ix.entries[i].Bounds.High
		return h == "" || key < h
	})
	return ix.entries[i]
}

// Entries returns the leaves in key order.
func (ix Index) Entries() []Entry { return append([]Entry(nil), ix.entries...) }

// Len is the number of leaves.
func (ix Index) Len() int { return len(ix.entries) }

// Holds reports whether ix holds every one of entries (high bound,
// leaf) as it is: a swap that added them is already in the cache.
func (ix Index) Holds(entries []clskv.IndexEntry) bool {
	for _, e := range entries {
		i := sort.Search(len(ix.entries), func(i int) bool {
			h := ix.entries[i].Bounds.High
			return h == "" || (e.High != "" && e.High <= h)
		})
		if i == len(ix.entries) || ix.entries[i].Bounds.High != e.High || ix.entries[i].Leaf != e.Leaf {
			return false
		}
	}
	return true
}

// Halves is a split's plan: the entries of keys[:At] go to a leaf with
// bounds Left, the rest to one with bounds Right.
type Halves struct {
	At          int
	Left, Right clskv.Bounds
}

// Split divides a leaf with bounds b holding keys (sorted, all within b)
// at the median: the left half keeps b's low bound and ends at the first
// key of the right half, which keeps b's high bound. It needs two keys.
func Split(b clskv.Bounds, keys []string) (Halves, error) {
	if len(keys) < 2 {
		return Halves{}, fmt.Errorf("kv: a leaf of %d entries cannot split", len(keys))
	}
	for i, k := range keys {
		if !b.Contains(k) || (i > 0 && keys[i-1] >= k) {
			return Halves{}, fmt.Errorf("kv: split of %v: key %q out of order or range", b, k)
		}
	}
	at := len(keys) / 2
	mid := keys[at]
	return Halves{At: at, Left: clskv.Bounds{Low: b.Low, High: mid}, Right: clskv.Bounds{Low: mid, High: b.High}}, nil
}

// Apply returns ix with the entries old (high bound, leaf) replaced by
// new, as an index swap replaces them, and true; or ix and false if ix
// does not hold every entry of old as it is (the cache is stale there:
// re-read the index) or the result does not cover every key once.
func (ix Index) Apply(old, new []clskv.IndexEntry) (Index, bool) {
	gone := make(map[string]string, len(old))
	for _, e := range old {
		gone[e.High] = e.Leaf
	}
	var out []clskv.IndexEntry
	for _, e := range ix.entries {
		leaf, ok := gone[e.Bounds.High]
		if !ok {
			out = append(out, clskv.IndexEntry{High: e.Bounds.High, Leaf: e.Leaf})
			continue
		}
		if leaf != e.Leaf {
			return ix, false
		}
		delete(gone, e.Bounds.High)
	}
	if len(gone) > 0 {
		return ix, false
	}
	next, err := NewIndex(append(out, new...))
	if err != nil {
		return ix, false
	}
	return next, true
}
