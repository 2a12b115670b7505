package plan_test

import (
	"slices"
	"testing"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/kv/plan"
)

// Recover at every point an operation can be abandoned (docs/KV.md,
// "Cleanup"): a split of [c, x) at m into new leaves n1 [c, m) and n2
// [m, x), and a join of [c, m) and [m, x) into n1 (merge) or n1 [c, p)
// and n2 [p, x) (rebalance).
func TestRecover(t *testing.T) {
	b := func(low, high string) clskv.Bounds { return clskv.Bounds{Low: low, High: high} }
	old := func(name string, bd clskv.Bounds, frozen string) plan.LeafState {
		return plan.LeafState{Name: name, Exists: true, Leaf: clskv.Leaf{Bounds: bd, K: 2, Frozen: frozen}}
	}
	leaf := func(name string, bd clskv.Bounds) plan.LeafState {
		return plan.LeafState{Name: name, Exists: true, Leaf: clskv.Leaf{Bounds: bd, K: 2}}
	}
	none := func(name string) plan.LeafState { return plan.LeafState{Name: name} }
	split := clskv.Mark{ID: "op", Kind: clskv.MarkSplit, Old: "o1", New: []clskv.NewLeaf{{Name: "n1"}, {Name: "n2"}},
		Entries: []clskv.IndexEntry{{High: "x", Leaf: "o1"}}}
	join := clskv.Mark{ID: "op", Kind: clskv.MarkJoin, Old: "o1", New: []clskv.NewLeaf{{Name: "n1"}, {Name: "n2"}},
		Entries: []clskv.IndexEntry{{High: "m", Leaf: "o1"}, {High: "x", Leaf: "o2"}}}
	taken := join
	taken.ID, taken.Takes = "cleaner", "op"
	for _, tt := range []struct {
		name       string
		mark       clskv.Mark
		olds, news []plan.LeafState
		want       plan.Recovery
	}{
		{"split: marked", split, []plan.LeafState{old("o1", b("c", "x"), "")}, []plan.LeafState{none("n1"), none("n2")},
			plan.Recovery{}},
		{"split: frozen", split, []plan.LeafState{old("o1", b("c", "x"), "op")}, []plan.LeafState{none("n1"), none("n2")},
			plan.Recovery{Thaw: []string{"o1"}}},
		{"split: left written", split, []plan.LeafState{old("o1", b("c", "x"), "op")}, []plan.LeafState{leaf("n1", b("c", "m")), none("n2")},
			plan.Recovery{Delete: []string{"n1"}, Thaw: []string{"o1"}}},
		// The new leaves are written at once: the right may exist without
		// the left.
		{"split: right written", split, []plan.LeafState{old("o1", b("c", "x"), "op")}, []plan.LeafState{none("n1"), leaf("n2", b("m", "x"))},
			plan.Recovery{Delete: []string{"n2"}, Thaw: []string{"o1"}}},
		{"split of the last leaf: right written", split, []plan.LeafState{old("o1", b("c", ""), "op")}, []plan.LeafState{none("n1"), leaf("n2", b("m", ""))},
			plan.Recovery{Delete: []string{"n2"}, Thaw: []string{"o1"}}},
		{"split: both written", split, []plan.LeafState{old("o1", b("c", "x"), "op")}, []plan.LeafState{leaf("n1", b("c", "m")), leaf("n2", b("m", "x"))},
			plan.Recovery{Forward: true, Add: []clskv.IndexEntry{{High: "m", Leaf: "n1"}, {High: "x", Leaf: "n2"}}, Delete: []string{"o1"}}},
		// A zombie owner wrote its leaves after a rollback thawed the old
		// one: they are not the old leaf's final entries.
		{"split: written, not frozen", split, []plan.LeafState{old("o1", b("c", "x"), "")}, []plan.LeafState{leaf("n1", b("c", "m")), leaf("n2", b("m", "x"))},
			plan.Recovery{Delete: []string{"n1", "n2"}}},
		{"split of the last leaf: both written", split, []plan.LeafState{old("o1", b("c", ""), "op")}, []plan.LeafState{leaf("n1", b("c", "m")), leaf("n2", b("m", ""))},
			plan.Recovery{Forward: true, Add: []clskv.IndexEntry{{High: "m", Leaf: "n1"}, {High: "", Leaf: "n2"}}, Delete: []string{"o1"}}},
		{"join: one frozen", join, []plan.LeafState{old("o1", b("c", "m"), "op"), old("o2", b("m", "x"), "")}, []plan.LeafState{none("n1"), none("n2")},
			plan.Recovery{Thaw: []string{"o1"}}},
		{"join: merged", join, []plan.LeafState{old("o1", b("c", "m"), "op"), old("o2", b("m", "x"), "op")}, []plan.LeafState{leaf("n1", b("c", "x")), none("n2")},
			plan.Recovery{Forward: true, Add: []clskv.IndexEntry{{High: "x", Leaf: "n1"}}, Delete: []string{"o1", "o2"}}},
		{"join: rebalance half written", join, []plan.LeafState{old("o1", b("c", "m"), "op"), old("o2", b("m", "x"), "op")}, []plan.LeafState{leaf("n1", b("c", "p")), none("n2")},
			plan.Recovery{Delete: []string{"n1"}, Thaw: []string{"o1", "o2"}}},
		{"join: rebalance, right written", join, []plan.LeafState{old("o1", b("c", "m"), "op"), old("o2", b("m", "x"), "op")}, []plan.LeafState{none("n1"), leaf("n2", b("p", "x"))},
			plan.Recovery{Delete: []string{"n2"}, Thaw: []string{"o1", "o2"}}},
		{"join: rebalanced, taken over", taken, []plan.LeafState{old("o1", b("c", "m"), "op"), old("o2", b("m", "x"), "op")}, []plan.LeafState{leaf("n1", b("c", "p")), leaf("n2", b("p", "x"))},
			plan.Recovery{Forward: true, Add: []clskv.IndexEntry{{High: "p", Leaf: "n1"}, {High: "x", Leaf: "n2"}}, Delete: []string{"o1", "o2"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plan.Recover(tt.mark, tt.olds, tt.news)
			if err != nil {
				t.Fatal(err)
			}
			if got.Forward != tt.want.Forward || !slices.Equal(got.Add, tt.want.Add) || !slices.Equal(got.Delete, tt.want.Delete) || !slices.Equal(got.Thaw, tt.want.Thaw) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	// A marked entry whose old leaf is gone, or a state count that does
	// not match the mark: errors.
	if _, err := plan.Recover(split, []plan.LeafState{none("o1")}, []plan.LeafState{none("n1"), none("n2")}); err == nil {
		t.Fatal("a missing old leaf accepted")
	}
	if _, err := plan.Recover(join, []plan.LeafState{old("o1", b("c", "m"), "op")}, []plan.LeafState{none("n1"), none("n2")}); err == nil {
		t.Fatal("one old leaf for a join accepted")
	}
}
