package plan

import (
	"fmt"
	"sort"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
)

// LeafState is what a cleanup found of a leaf object: whether it exists
// and, if so, its kv.leaf attribute.
type LeafState struct {
	Name   string
	Exists bool
	Leaf   clskv.Leaf
}

// Recovery is what a client that took an abandoned operation over does
// (docs/KV.md, "Cleanup"). Forward: swap the marked entries for Add, then
// delete Delete (the old leaves). Back: delete Delete (the new leaves
// that were written), thaw Thaw (the old leaves the operation froze),
// then unmark.
type Recovery struct {
	Forward bool
	Add     []clskv.IndexEntry
	Delete  []string
	Thaw    []string
}

// Recover decides the fate of the abandoned operation marked m from the
// states of its old leaves (one per marked entry, in order) and of its new
// leaves (one per m.New). It rolls forward only if every old leaf is
// frozen by the operation (so their entries are final) and the new
// leaves that exist cover exactly the old leaves' range, adjacent and in
// order (each is written whole in one operation, so one that exists is
// complete; a split or rebalance that wrote only its first leaf covers
// less). Otherwise it rolls back. An old leaf that is missing while its
// entry is still marked is an error: the store is corrupt.
func Recover(m clskv.Mark, olds, news []LeafState) (Recovery, error) {
	if len(olds) == 0 || len(olds) != len(m.Entries) || len(news) != len(m.New) {
		return Recovery{}, fmt.Errorf("kv: recovery of %s: %d old and %d new leaf states for a mark of %d and %d", m.ID, len(olds), len(news), len(m.Entries), len(m.New))
	}
	frozen := true
	for i, o := range olds {
		if !o.Exists {
			return Recovery{}, fmt.Errorf("kv: recovery of %s: old leaf %s is missing while its entry is marked", m.ID, o.Name)
		}
		if i > 0 && olds[i-1].Leaf.Bounds.High != o.Leaf.Bounds.Low {
			return Recovery{}, fmt.Errorf("kv: recovery of %s: old leaves %s %v and %s %v are not adjacent", m.ID, olds[i-1].Name, olds[i-1].Leaf.Bounds, o.Name, o.Leaf.Bounds)
		}
		frozen = frozen && o.Leaf.Frozen == m.FreezeID()
	}
	whole := clskv.Bounds{Low: olds[0].Leaf.Bounds.Low, High: olds[len(olds)-1].Leaf.Bounds.High}
	var written []LeafState
	for _, n := range news {
		if n.Exists {
			written = append(written, n)
		}
	}
	sort.Slice(written, func(i, j int) bool { return written[i].Leaf.Bounds.Low < written[j].Leaf.Bounds.Low })
	if frozen && tiles(whole, written) {
		r := Recovery{Forward: true}
		for _, n := range written {
			r.Add = append(r.Add, clskv.IndexEntry{High: n.Leaf.Bounds.High, Leaf: n.Name})
		}
		for _, o := range olds {
			r.Delete = append(r.Delete, o.Name)
		}
		return r, nil
	}
	var r Recovery
	for _, n := range written {
		r.Delete = append(r.Delete, n.Name)
	}
	for _, o := range olds {
		if o.Leaf.Frozen == m.FreezeID() {
			r.Thaw = append(r.Thaw, o.Name)
		}
	}
	return r, nil
}

// tiles reports whether leaves (sorted by low) cover exactly b, adjacent.
func tiles(b clskv.Bounds, leaves []LeafState) bool {
	if len(leaves) == 0 {
		return false
	}
	low := b.Low
	for _, l := range leaves {
		if l.Leaf.Bounds.Low != low || l.Leaf.Frozen != "" {
			return false
		}
		low = l.Leaf.Bounds.High
		if low == "" {
			break
		}
	}
	last := leaves[len(leaves)-1].Leaf.Bounds
	return last.High == b.High && low == b.High
}
