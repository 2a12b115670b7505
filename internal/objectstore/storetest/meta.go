package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

func (e *env) attrs(o objid.ID) map[string][]byte {
	e.Helper()
	a, err := e.s.GetAttrs(e.ctx, pgA, o)
	if err != nil {
		e.Fatalf("getattrs: %v", err)
	}
	return a
}

func equalValues(a, b map[string][]byte) bool { return maps.EqualFunc(a, b, bytes.Equal) }

func testAttrs(e *env) {
	e.setup(pgA)
	o := obj("o")
	e.apply(txn().SetAttrs(pgA, o, map[string][]byte{"a": []byte("1"), "b": {}, "_": pattern(1, 5000)}))
	if st := e.stat(pgA, o); st.Size != 0 {
		e.Fatalf("setattrs gave the object size %d", st.Size)
	}
	want := map[string][]byte{"a": []byte("1"), "b": {}, "_": pattern(1, 5000)}
	if got := e.attrs(o); !equalValues(got, want) {
		e.Fatalf("attrs %v, want %v", got, want)
	}
	if v, err := e.s.GetAttr(e.ctx, pgA, o, "a"); err != nil || string(v) != "1" {
		e.Fatalf("getattr a: %q %v", v, err)
	}
	if _, err := e.s.GetAttr(e.ctx, pgA, o, "zz"); !errors.Is(err, objectstore.ErrNoAttr) {
		e.Fatalf("getattr of a missing attribute: %v, want ErrNoAttr", err)
	}
	e.statAttrs(o)
	e.apply(txn().SetAttr(pgA, o, "a", []byte("2")).RmAttr(pgA, o, "b").RmAttr(pgA, o, "never"))
	want = map[string][]byte{"a": []byte("2"), "_": pattern(1, 5000)}
	if got := e.attrs(o); !equalValues(got, want) {
		e.Fatalf("attrs %v, want %v", got, want)
	}
	e.apply(txn().Touch(pgA, obj("bare")))
	if got := e.attrs(obj("bare")); len(got) != 0 {
		e.Fatalf("new object has attrs %v", got)
	}
	// Attributes and omap are separate name spaces.
	e.apply(txn().OmapSetKeys(pgA, o, map[string][]byte{"a": []byte("omap")}))
	if v, _ := e.s.GetAttr(e.ctx, pgA, o, "a"); string(v) != "2" {
		e.Fatalf("omap key overwrote attribute: %q", v)
	}
}

// statAttrs checks objectstore.StatAttrsOf on o, which has attributes
// "a" ("1") and "b" (empty) and a size of 0: through the store's own
// AttrStater if it has one, and through Stat and GetAttr.
func (e *env) statAttrs(o objid.ID) {
	e.Helper()
	for _, s := range []objectstore.Store{e.s, plainStore{e.s}} {
		_, own := s.(objectstore.AttrStater)
		for _, tc := range []struct {
			names [2]string
			vals  [2]string
			has   [2]bool
		}{
			{[2]string{"a", ""}, [2]string{"1", ""}, [2]bool{true, false}},
			{[2]string{"zz", "a"}, [2]string{"", "1"}, [2]bool{false, true}},
			{[2]string{"b", "zz"}, [2]string{"", ""}, [2]bool{true, false}},
		} {
			got, err := objectstore.StatAttrsOf(e.ctx, s, pgA, o, tc.names)
			if err != nil || got.Info.Size != 0 || got.Has != tc.has {
				e.Fatalf("StatAttrs(%q) (the store's own: %v) = %+v, %v; want has %v", tc.names, own, got, err, tc.has)
			}
			for i := range 2 {
				if string(got.Vals[i]) != tc.vals[i] || got.Has[i] != (got.Vals[i] != nil) {
					e.Fatalf("StatAttrs(%q) (the store's own: %v): value %d is %q (nil %v), want %q", tc.names, own, i, got.Vals[i], got.Vals[i] == nil, tc.vals[i])
				}
			}
		}
		if _, err := objectstore.StatAttrsOf(e.ctx, s, pgA, obj("absent"), [2]string{"a", ""}); !errors.Is(err, objectstore.ErrNotFound) {
			e.Fatalf("StatAttrs of an absent object (the store's own: %v): %v, want ErrNotFound", own, err)
		}
	}
}

// plainStore hides a store's optional interfaces.
type plainStore struct{ objectstore.Store }

func (e *env) omap(o objid.ID) map[string][]byte {
	e.Helper()
	kvs, more, err := e.s.OmapIterate(e.ctx, pgA, o, "", "", 0)
	if err != nil || more {
		e.Fatalf("omap iterate all: more %v err %v", more, err)
	}
	m := map[string][]byte{}
	for i, kv := range kvs {
		if i > 0 && kvs[i-1].Key >= kv.Key {
			e.Fatalf("omap iterate out of order: %q then %q", kvs[i-1].Key, kv.Key)
		}
		m[kv.Key] = kv.Value
	}
	return m
}

func (e *env) header(o objid.ID) []byte {
	e.Helper()
	h, err := e.s.OmapGetHeader(e.ctx, pgA, o)
	if err != nil {
		e.Fatalf("omap header: %v", err)
	}
	return h
}

func testOmap(e *env) {
	e.setup(pgA)
	o := obj("o")
	if e.apply(txn().Touch(pgA, o)); e.header(o) != nil || len(e.omap(o)) != 0 {
		e.Fatalf("new object has omap")
	}
	e.apply(txn().OmapSetKeys(pgA, o, map[string][]byte{"a": []byte("1"), "b": []byte("2"), "c": {}, "": []byte("empty key")}).
		OmapSetHeader(pgA, o, []byte("hdr")))
	want := map[string][]byte{"a": []byte("1"), "b": []byte("2"), "c": {}, "": []byte("empty key")}
	if got := e.omap(o); !equalValues(got, want) {
		e.Fatalf("omap %v, want %v", got, want)
	}
	if h := e.header(o); string(h) != "hdr" {
		e.Fatalf("header %q", h)
	}
	got, err := e.s.OmapGetValues(e.ctx, pgA, o, []string{"a", "c", "missing"})
	if err != nil || !equalValues(got, map[string][]byte{"a": []byte("1"), "c": {}}) {
		e.Fatalf("get values: %v %v", got, err)
	}
	if got, err := e.s.OmapGetValues(e.ctx, pgA, o, nil); err != nil || len(got) != 0 {
		e.Fatalf("get no values: %v %v", got, err)
	}
	e.apply(txn().OmapRmKeys(pgA, o, "a", "missing").OmapSetKeys(pgA, o, map[string][]byte{"b": []byte("3")}))
	want = map[string][]byte{"b": []byte("3"), "c": {}, "": []byte("empty key")}
	if got := e.omap(o); !equalValues(got, want) {
		e.Fatalf("omap %v, want %v", got, want)
	}
	e.apply(txn().OmapClear(pgA, o))
	if len(e.omap(o)) != 0 || len(e.header(o)) != 0 {
		e.Fatalf("omap clear left %v header %q", e.omap(o), e.header(o))
	}
	if !e.exists(pgA, o) {
		e.Fatalf("omap clear removed the object")
	}
	e.apply(txn().OmapSetHeader(pgA, obj("h"), []byte("only header")))
	if h := e.header(obj("h")); string(h) != "only header" || len(e.omap(obj("h"))) != 0 {
		e.Fatalf("header-only object: %q", h)
	}
}

func testOmapRmKeyRange(e *env) {
	e.setup(pgA)
	e.apply(txn().Touch(pgA, obj("o")))
	keys := []string{"", "a", "a0", "ab", "b", "b\x00", "c", "zz"}
	for _, c := range []struct {
		first, last string
		left        []string
	}{
		{"a", "b", []string{"", "b", "b\x00", "c", "zz"}},
		{"", "a", []string{"a", "a0", "ab", "b", "b\x00", "c", "zz"}},
		{"b", "b\x00", []string{"", "a", "a0", "ab", "b\x00", "c", "zz"}},
		{"a0", "zz", []string{"", "a", "zz"}},
		{"", "\xff", nil},
		{"c", "a", keys},
		{"b", "b", keys},
		{"b", "", keys},
	} {
		kv := map[string][]byte{}
		for _, k := range keys {
			kv[k] = []byte(k)
		}
		e.apply(txn().OmapClear(pgA, obj("o")).OmapSetKeys(pgA, obj("o"), kv).OmapSetHeader(pgA, obj("o"), []byte("h")))
		e.apply(txn().OmapRmKeyRange(pgA, obj("o"), c.first, c.last))
		got := slices.Sorted(maps.Keys(e.omap(obj("o"))))
		if !slices.Equal(got, c.left) && len(got)+len(c.left) > 0 {
			e.Errorf("rm range [%q, %q): left %q, want %q", c.first, c.last, got, c.left)
		}
		if string(e.header(obj("o"))) != "h" {
			e.Errorf("rm range removed the header")
		}
	}
}

func testOmapIterate(e *env) {
	e.setup(pgA)
	o := obj("o")
	keys := []string{"a", "a/1", "a/2", "a/3", "b", "b/1", "c"}
	kv := map[string][]byte{}
	for _, k := range keys {
		kv[k] = []byte("v" + k)
	}
	e.apply(txn().OmapSetKeys(pgA, o, kv))
	for _, c := range []struct {
		after, prefix string
		limit         int
		want          []string
		more          bool
	}{
		{"", "", 0, keys, false},
		{"", "", -1, keys, false},
		{"", "", 3, keys[:3], true},
		{"", "", 7, keys, false},
		{"", "", 100, keys, false},
		{"a/1", "", 2, []string{"a/2", "a/3"}, true},
		{"a/0", "", 1, []string{"a/1"}, true},
		{"", "a/", 0, []string{"a/1", "a/2", "a/3"}, false},
		{"", "a/", 2, []string{"a/1", "a/2"}, true},
		{"a/2", "a/", 1, []string{"a/3"}, false},
		{"a/3", "a/", 5, nil, false},
		{"", "b", 0, []string{"b", "b/1"}, false},
		{"b", "b", 0, []string{"b/1"}, false},
		{"c", "", 0, nil, false},
		{"", "x", 0, nil, false},
		{"0", "c", 1, []string{"c"}, false},
	} {
		got, more, err := e.s.OmapIterate(e.ctx, pgA, o, c.after, c.prefix, c.limit)
		var gotKeys []string
		for _, g := range got {
			gotKeys = append(gotKeys, g.Key)
			if string(g.Value) != "v"+g.Key {
				e.Errorf("value of %q: %q", g.Key, g.Value)
			}
		}
		if err != nil || !slices.Equal(gotKeys, c.want) || more != c.more {
			e.Errorf("iterate after %q prefix %q limit %d: %q more %v err %v, want %q more %v",
				c.after, c.prefix, c.limit, gotKeys, more, err, c.want, c.more)
		}
	}
}

// testOmapIterateLarge pages through 3000 keys, 100 at a time.
func testOmapIterateLarge(e *env) {
	e.setup(pgA)
	o := obj("o")
	var want []string
	t := txn()
	for i := range 3000 {
		k := fmt.Sprintf("key.%06d", (i*7919)%3000)
		want = append(want, k)
		t.OmapSetKeys(pgA, o, map[string][]byte{k: []byte(k)})
		if i%500 == 499 {
			e.apply(t)
			t = txn()
		}
	}
	slices.Sort(want)
	var got []string
	for after, pages := "", 0; ; pages++ {
		kvs, more, err := e.s.OmapIterate(e.ctx, pgA, o, after, "key.", 100)
		if err != nil || pages > 40 {
			e.Fatalf("iterate: %v after %d pages", err, pages)
		}
		for _, kv := range kvs {
			got = append(got, kv.Key)
		}
		if !more {
			break
		}
		after = kvs[len(kvs)-1].Key
	}
	if !slices.Equal(got, want) {
		e.Fatalf("paged iteration returned %d keys, want %d", len(got), len(want))
	}
}
