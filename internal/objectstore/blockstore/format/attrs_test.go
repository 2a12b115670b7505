package format

import (
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// AttrList against a map: after any sequence of sets and removes it
// holds the map's attributes, sorted, each once.
func TestAttrListModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var l AttrList
	model := map[string][]byte{}
	for i := range 2000 {
		name := string(rune('a' + r.IntN(12)))
		if r.IntN(3) == 0 {
			l.Remove(name)
			delete(model, name)
		} else {
			v := []byte{byte(i)}
			l.Set(name, v)
			model[name] = v
		}
		if !slices.IsSortedFunc(l, func(a, b Attr) int { return strings.Compare(a.Name, b.Name) }) || len(l) != len(model) {
			t.Fatalf("step %d: list %v, model %v", i, l, model)
		}
		for k, v := range model {
			if got, ok := l.Get(k); !ok || string(got) != string(v) {
				t.Fatalf("step %d: get(%q) = %v, %v; want %v", i, k, got, ok, v)
			}
		}
	}
	if _, ok := l.Get("zz"); ok {
		t.Fatal("get of an unset name succeeded")
	}
	got := map[string][]byte{}
	for _, a := range l {
		got[a.Name] = a.Value
	}
	if !maps.EqualFunc(got, model, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatal("list and model differ")
	}
}

// A header whose attributes are out of order or repeated is corrupt: the
// lookups binary-search them.
func TestDecodeHeaderAttrOrder(t *testing.T) {
	for _, bad := range []AttrList{{{"b", nil}, {"a", nil}}, {{"a", nil}, {"a", []byte("x")}}} {
		n := &Onode{Nid: 1, Attrs: bad}
		if _, err := DecodeRecord(n.Encode(), testSB); !errors.Is(err, objectstore.ErrCorrupt) {
			t.Errorf("attributes %v: %v, want ErrCorrupt", bad, err)
		}
	}
}
