package plan_test

import (
	"testing"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/kv/plan"
)

func TestIndexLookup(t *testing.T) {
	ix, err := plan.NewIndex([]clskv.IndexEntry{{High: "", Leaf: "c"}, {High: "m", Leaf: "b"}, {High: "d", Leaf: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key, leaf string
		low, high string
	}{
		{"a", "a", "", "d"},
		{"\x00", "a", "", "d"},
		{"d", "b", "d", "m"}, // a high bound is exclusive
		{"lzzz", "b", "d", "m"},
		{"m", "c", "m", ""},
		{"\xff\xff", "c", "m", ""},
	} {
		e := ix.Lookup(tt.key)
		if e.Leaf != tt.leaf || e.Bounds != (clskv.Bounds{Low: tt.low, High: tt.high}) {
			t.Errorf("Lookup(%q) = %+v, want %s [%q, %q)", tt.key, e, tt.leaf, tt.low, tt.high)
		}
	}
	if ix.Len() != 3 {
		t.Fatalf("len %d", ix.Len())
	}
	for _, bad := range [][]clskv.IndexEntry{
		nil,
		{{High: "m", Leaf: "a"}}, // nothing covers m and above
		{{High: "", Leaf: "a"}, {High: "", Leaf: "b"}}, // two last leaves
		{{High: "m", Leaf: "a"}, {High: "m", Leaf: "b"}, {High: "", Leaf: "c"}},
	} {
		if _, err := plan.NewIndex(bad); err == nil {
			t.Errorf("NewIndex(%v) accepted", bad)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, tt := range []struct {
		name  string
		b     clskv.Bounds
		keys  []string
		want  plan.Halves
		fails bool
	}{
		{name: "two keys", b: clskv.Bounds{}, keys: []string{"a", "b"},
			want: plan.Halves{At: 1, Left: clskv.Bounds{High: "b"}, Right: clskv.Bounds{Low: "b"}}},
		{name: "odd count", b: clskv.Bounds{Low: "a", High: "z"}, keys: []string{"b", "c", "d", "e", "f"},
			want: plan.Halves{At: 2, Left: clskv.Bounds{Low: "a", High: "d"}, Right: clskv.Bounds{Low: "d", High: "z"}}},
		{name: "even count keeps bounds", b: clskv.Bounds{Low: "a", High: "z"}, keys: []string{"a", "b", "c", "d"},
			want: plan.Halves{At: 2, Left: clskv.Bounds{Low: "a", High: "c"}, Right: clskv.Bounds{Low: "c", High: "z"}}},
		{name: "one key", b: clskv.Bounds{}, keys: []string{"a"}, fails: true},
		{name: "out of range", b: clskv.Bounds{Low: "b"}, keys: []string{"a", "c"}, fails: true},
		{name: "unsorted", b: clskv.Bounds{}, keys: []string{"c", "a"}, fails: true},
		{name: "duplicate", b: clskv.Bounds{}, keys: []string{"a", "a"}, fails: true},
	} {
		got, err := plan.Split(tt.b, tt.keys)
		if tt.fails {
			if err == nil {
				t.Errorf("%s: accepted", tt.name)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

func TestNeighbours(t *testing.T) {
	ix, err := plan.NewIndex([]clskv.IndexEntry{{High: "d", Leaf: "a"}, {High: "m", Leaf: "b"}, {High: "", Leaf: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	es := ix.Entries()
	for _, tt := range []struct {
		leaf        plan.Entry
		left, right string
		ok          bool
	}{
		{es[0], "a", "b", true},
		{es[1], "b", "c", true},
		{es[2], "b", "c", true}, // the last leaf joins the one before
		{plan.Entry{Leaf: "b", Bounds: clskv.Bounds{Low: "d", High: "n"}}, "", "", false}, // stale
		{plan.Entry{Leaf: "z"}, "", "", false},
	} {
		l, r, ok := ix.Neighbours(tt.leaf)
		if ok != tt.ok || l.Leaf != tt.left || r.Leaf != tt.right {
			t.Errorf("Neighbours(%v) = %v %v %v", tt.leaf, l, r, ok)
		}
	}
	one, _ := plan.NewIndex([]clskv.IndexEntry{{Leaf: "a"}})
	if _, _, ok := one.Neighbours(one.Entries()[0]); ok {
		t.Fatal("the only leaf has a neighbour")
	}
}

func TestPlanJoin(t *testing.T) {
	l, r := clskv.Bounds{Low: "b", High: "m"}, clskv.Bounds{Low: "m", High: "x"}
	for _, tt := range []struct {
		name      string
		keys      []string
		k         uint32
		shrinking string
		want      []clskv.Bounds
		at        int
	}{
		// k 2: a leaf of 2 losing one joins its neighbour of 2: merge.
		{"merge at 2k", []string{"c", "d", "m", "n"}, 2, "c", []clskv.Bounds{{Low: "b", High: "x"}}, 0},
		{"merge under 2k", []string{"c", "n"}, 2, "c", []clskv.Bounds{{Low: "b", High: "x"}}, 0},
		{"rebalance even", []string{"c", "d", "m", "n", "o", "p"}, 2, "c",
			[]clskv.Bounds{{Low: "b", High: "n"}, {Low: "n", High: "x"}}, 3},
		// 5 entries: the half losing one gets three.
		{"rebalance odd, left shrinks", []string{"c", "d", "m", "n", "o"}, 2, "c",
			[]clskv.Bounds{{Low: "b", High: "n"}, {Low: "n", High: "x"}}, 3},
		{"rebalance odd, right shrinks", []string{"c", "d", "m", "n", "o"}, 2, "o",
			[]clskv.Bounds{{Low: "b", High: "m"}, {Low: "m", High: "x"}}, 2},
		{"rebalance odd, the median shrinks", []string{"c", "d", "m", "n", "o"}, 2, "m",
			[]clskv.Bounds{{Low: "b", High: "m"}, {Low: "m", High: "x"}}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j, err := plan.PlanJoin(l, r, tt.keys, tt.k, tt.shrinking)
			if err != nil {
				t.Fatal(err)
			}
			if j.Merge() != (len(tt.want) == 1) || len(j.Leaves) != len(tt.want) || (len(tt.want) == 2 && j.At != tt.at) {
				t.Fatalf("%+v, want %v at %d", j, tt.want, tt.at)
			}
			for i := range tt.want {
				if j.Leaves[i] != tt.want[i] {
					t.Fatalf("%+v, want %v", j, tt.want)
				}
			}
			// Every new leaf holds k to 2k, and k after the removal.
			if !j.Merge() {
				for i, n := range []int{j.At, len(tt.keys) - j.At} {
					if j.Leaves[i].Contains(tt.shrinking) {
						n--
					}
					if n < int(tt.k) || n > 2*int(tt.k) {
						t.Fatalf("leaf %d would hold %d", i, n)
					}
				}
			}
		})
	}
	for _, bad := range []struct {
		l, r clskv.Bounds
		keys []string
	}{
		{l, clskv.Bounds{Low: "n", High: "x"}, nil}, // not adjacent
		{clskv.Bounds{Low: "b"}, r, nil},            // the left has no upper bound
		{l, r, []string{"a"}},                       // out of range
		{l, r, []string{"d", "c"}},                  // out of order
	} {
		if _, err := plan.PlanJoin(bad.l, bad.r, bad.keys, 2, "c"); err == nil {
			t.Errorf("PlanJoin(%v, %v, %q) accepted", bad.l, bad.r, bad.keys)
		}
	}
}

// Apply replaces entries as a swap does, only from the state the swap
// replaced.
// Holds: every entry as it is in the index, by its high bound and leaf.
func TestIndexHolds(t *testing.T) {
	ix, err := plan.NewIndex([]clskv.IndexEntry{{High: "d", Leaf: "a"}, {High: "m", Leaf: "b"}, {High: "", Leaf: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		entries []clskv.IndexEntry
		want    bool
	}{
		{"none", nil, true},
		{"one", []clskv.IndexEntry{{High: "m", Leaf: "b"}}, true},
		{"all", []clskv.IndexEntry{{High: "", Leaf: "c"}, {High: "d", Leaf: "a"}, {High: "m", Leaf: "b"}}, true},
		{"the last", []clskv.IndexEntry{{High: "", Leaf: "c"}}, true},
		{"another leaf there", []clskv.IndexEntry{{High: "m", Leaf: "x"}}, false},
		{"another last leaf", []clskv.IndexEntry{{High: "", Leaf: "x"}}, false},
		{"no entry there", []clskv.IndexEntry{{High: "g", Leaf: "b"}}, false},
		{"a bound past every finite one", []clskv.IndexEntry{{High: "z", Leaf: "c"}}, false},
		{"one of two", []clskv.IndexEntry{{High: "d", Leaf: "a"}, {High: "g", Leaf: "b"}}, false},
	} {
		if got := ix.Holds(tt.entries); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestIndexApply(t *testing.T) {
	base := []clskv.IndexEntry{{High: "d", Leaf: "a"}, {High: "m", Leaf: "b"}, {High: "", Leaf: "c"}}
	ix, err := plan.NewIndex(base)
	if err != nil {
		t.Fatal(err)
	}
	leaves := func(ix plan.Index) string {
		s := ""
		for _, e := range ix.Entries() {
			s += e.Leaf + "<" + e.Bounds.High + " "
		}
		return s
	}
	for _, tt := range []struct {
		name     string
		old, new []clskv.IndexEntry
		ok       bool
		want     string
	}{
		{"split b", []clskv.IndexEntry{{High: "m", Leaf: "b"}}, []clskv.IndexEntry{{High: "g", Leaf: "b1"}, {High: "m", Leaf: "b2"}},
			true, "a<d b1<g b2<m c< "},
		{"split the last", []clskv.IndexEntry{{High: "", Leaf: "c"}}, []clskv.IndexEntry{{High: "p", Leaf: "c1"}, {High: "", Leaf: "c2"}},
			true, "a<d b<m c1<p c2< "},
		{"merge a and b", []clskv.IndexEntry{{High: "d", Leaf: "a"}, {High: "m", Leaf: "b"}}, []clskv.IndexEntry{{High: "m", Leaf: "ab"}},
			true, "ab<m c< "},
		{"rebalance b and c", []clskv.IndexEntry{{High: "m", Leaf: "b"}, {High: "", Leaf: "c"}}, []clskv.IndexEntry{{High: "k", Leaf: "b1"}, {High: "", Leaf: "c1"}},
			true, "a<d b1<k c1< "},
		{"an empty swap changes nothing", nil, nil, true, "a<d b<m c< "},
		{"the cache names another leaf there", []clskv.IndexEntry{{High: "m", Leaf: "x"}}, []clskv.IndexEntry{{High: "g", Leaf: "x1"}, {High: "m", Leaf: "x2"}},
			false, "a<d b<m c< "},
		{"the cache has no entry there", []clskv.IndexEntry{{High: "g", Leaf: "b"}}, []clskv.IndexEntry{{High: "e", Leaf: "b1"}, {High: "g", Leaf: "b2"}},
			false, "a<d b<m c< "},
		{"the result has no last leaf", []clskv.IndexEntry{{High: "", Leaf: "c"}}, []clskv.IndexEntry{{High: "p", Leaf: "c1"}},
			false, "a<d b<m c< "},
		{"the result has two leaves ending at d", []clskv.IndexEntry{{High: "m", Leaf: "b"}}, []clskv.IndexEntry{{High: "d", Leaf: "b1"}, {High: "m", Leaf: "b2"}},
			false, "a<d b<m c< "},
	} {
		got, ok := ix.Apply(tt.old, tt.new)
		if ok != tt.ok || leaves(got) != tt.want {
			t.Errorf("%s: %q, %v; want %q, %v", tt.name, leaves(got), ok, tt.want, tt.ok)
		}
	}
	if leaves(ix) != "a<d b<m c< " {
		t.Fatalf("Apply changed its receiver: %q", leaves(ix))
	}
}
