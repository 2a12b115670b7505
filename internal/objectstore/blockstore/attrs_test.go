package blockstore

import (
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// attrList against a map: after any sequence of sets and removes it
// holds the map's attributes, sorted, each once.
func TestAttrListModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var l attrList
	model := map[string][]byte{}
	for i := range 2000 {
		name := string(rune('a' + r.IntN(12)))
		if r.IntN(3) == 0 {
			l.remove(name)
			delete(model, name)
		} else {
			v := []byte{byte(i)}
			l.set(name, v)
			model[name] = v
		}
		if !slices.IsSortedFunc(l, func(a, b attr) int { return strings.Compare(a.name, b.name) }) || len(l) != len(model) {
			t.Fatalf("step %d: list %v, model %v", i, l, model)
		}
		for k, v := range model {
			if got, ok := l.get(k); !ok || string(got) != string(v) {
				t.Fatalf("step %d: get(%q) = %v, %v; want %v", i, k, got, ok, v)
			}
		}
	}
	if _, ok := l.get("zz"); ok {
		t.Fatal("get of an unset name succeeded")
	}
	got := map[string][]byte{}
	for _, a := range l {
		got[a.name] = a.value
	}
	if !maps.EqualFunc(got, model, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatal("list and model differ")
	}
}

// A header whose attributes are out of order or repeated is corrupt: the
// lookups binary-search them.
func TestDecodeHeaderAttrOrder(t *testing.T) {
	for _, bad := range []attrList{{{"b", nil}, {"a", nil}}, {{"a", nil}, {"a", []byte("x")}}} {
		n := &onode{Nid: 1, Attrs: bad}
		if _, err := decodeRecord(n.encodeRecord(), testSB); !errors.Is(err, objectstore.ErrCorrupt) {
			t.Errorf("attributes %v: %v, want ErrCorrupt", bad, err)
		}
	}
}
