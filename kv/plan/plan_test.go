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
