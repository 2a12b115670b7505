package snaps

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/objid"
)

func TestIndexKeyRoundTrip(t *testing.T) {
	head := objid.New(3, "ns", "", "rbd_data.1", objid.NoSnap)
	for _, e := range []IndexEntry{
		{Snap: 1, Clone: head.WithSnap(1)},
		{Snap: 4, Clone: head.WithSnap(9)},
		{Snap: objid.NoSnap - 1, Clone: head.WithSnap(objid.NoSnap - 1)},
	} {
		k := e.Key()
		if !strings.HasPrefix(k, SnapKeyPrefix(e.Snap)) || !strings.HasPrefix(k, IndexPrefix) || k >= IndexPrefixEnd {
			t.Fatalf("key %q outside its ranges", k)
		}
		got, err := ParseIndexKey(k)
		if err != nil {
			t.Fatal(err)
		}
		if got != e {
			t.Fatalf("round trip: %+v, want %+v", got, e)
		}
		if got.Head() != head {
			t.Fatalf("head %v, want %v", got.Head(), head)
		}
	}
}

func TestIndexKeysSortBySnap(t *testing.T) {
	a := objid.New(1, "", "", "zzz", 7)
	b := objid.New(1, "", "", "a", 9)
	k1 := IndexEntry{Snap: 7, Clone: a}.Key()
	k2 := IndexEntry{Snap: 8, Clone: b}.Key()
	k3 := IndexEntry{Snap: 0x10, Clone: b.WithSnap(0x10)}.Key()
	if !(k1 < k2 && k2 < k3) {
		t.Fatalf("keys out of snap order: %q %q %q", k1, k2, k3)
	}
	// The key range of snap 8 holds k2 only.
	lo, hi := SnapKeyPrefix(8), SnapKeyPrefix(9)
	if !(lo <= k2 && k2 < hi) || (lo <= k1 && k1 < hi) || (lo <= k3 && k3 < hi) {
		t.Fatal("a snap's range holds other snaps' keys")
	}
}

func TestParseIndexKeyRejects(t *testing.T) {
	head := objid.New(1, "", "", "obj", objid.NoSnap)
	good := IndexEntry{Snap: 2, Clone: head.WithSnap(3)}.Key()
	for name, k := range map[string]string{
		"empty":              "",
		"other prefix":       "log.0000000000000001.0000000000000002",
		"short snap":         "snap.12.00",
		"no dot":             "snap.0000000000000002x" + good[len(SnapKeyPrefix(2)):],
		"upper-case hex":     "snap.000000000000000A." + good[len(SnapKeyPrefix(2)):],
		"odd object hex":     good + "0",
		"upper-case object":  SnapKeyPrefix(2) + strings.ToUpper(good[len(SnapKeyPrefix(2)):]),
		"truncated object":   good[:len(good)-2],
		"trailing bytes":     good + "00",
		"snap zero":          IndexEntry{Snap: 0, Clone: head.WithSnap(3)}.Key(),
		"snap above clone":   IndexEntry{Snap: 4, Clone: head.WithSnap(3)}.Key(),
		"the head, no clone": IndexEntry{Snap: 2, Clone: head}.Key(),
		"the snapdir":        IndexEntry{Snap: 2, Clone: head.WithSnap(objid.SnapDir)}.Key(),
	} {
		if _, err := ParseIndexKey(k); !errors.Is(err, encoding.ErrCorrupt) {
			t.Errorf("%s: %q: err %v, want ErrCorrupt", name, k, err)
		}
	}
}

func TestIndexOf(t *testing.T) {
	head := objid.New(1, "", "", "obj", objid.NoSnap)
	ss := SnapSet{Seq: 9, Clones: []Clone{
		{ID: 2, Snaps: []uint64{2, 1}, Size: 1},
		{ID: 9, Snaps: []uint64{9, 6}, Size: 1},
	}}
	got := IndexOf(head, ss)
	want := []IndexEntry{
		{Snap: 1, Clone: head.WithSnap(2)}, {Snap: 2, Clone: head.WithSnap(2)},
		{Snap: 6, Clone: head.WithSnap(9)}, {Snap: 9, Clone: head.WithSnap(9)},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("IndexOf = %+v, want %+v", got, want)
	}
	if len(IndexOf(head, SnapSet{Seq: 4})) != 0 {
		t.Fatal("a snap set without clones has entries")
	}
}

// TestIndexChangesFollowHistory runs random histories of writes under
// snap contexts, deletes and trims through the snap set decisions and
// checks that applying IndexChanges step by step keeps an index equal to
// IndexOf of the current snap set, and that a trim of removed snaps
// leaves no entry of them.
func TestIndexChangesFollowHistory(t *testing.T) {
	head := objid.New(2, "", "", "h", objid.NoSnap)
	r := rand.New(rand.NewPCG(17, 4))
	for range 200 {
		var (
			ss      SnapSet
			live    []uint64 // newest first
			seq     uint64
			removed = map[uint64]bool{}
			index   = map[IndexEntry]bool{}
			exists  bool
		)
		apply := func(next SnapSet) {
			add, rm := IndexChanges(head, ss, next)
			for _, e := range rm {
				if !index[e] {
					t.Fatalf("removes %+v, not in the index", e)
				}
				delete(index, e)
			}
			for _, e := range add {
				if index[e] {
					t.Fatalf("adds %+v twice", e)
				}
				index[e] = true
			}
			ss = next
			want := IndexOf(head, ss)
			if len(want) != len(index) {
				t.Fatalf("index has %d entries, the snap set %d", len(index), len(want))
			}
			for _, e := range want {
				if !index[e] {
					t.Fatalf("index lacks %+v", e)
				}
			}
		}
		for range 40 {
			switch r.IntN(5) {
			case 0: // snapshot
				seq++
				live = append([]uint64{seq}, live...)
			case 1, 2: // write
				next, _, err := ss.MakeWriteable(Context{Seq: seq, Snaps: slices.Clone(live)}, exists, 10)
				if err != nil {
					t.Fatal(err)
				}
				exists = r.IntN(4) != 0
				apply(next)
			case 3: // remove a snapshot
				if len(live) == 0 {
					continue
				}
				i := r.IntN(len(live))
				removed[live[i]] = true
				live = slices.Delete(live, i, i+1)
			case 4: // trim
				next, _ := ss.Trim(func(s uint64) bool { return removed[s] })
				apply(next)
				for e := range index {
					if removed[e.Snap] {
						t.Fatalf("trim left %+v of a removed snap", e)
					}
				}
			}
		}
	}
}

// TestIndexChangesIsTheWholeDiff checks that IndexChanges, which looks
// only at what differs, gives what diffing the two whole indexes gives,
// on random pairs of snap sets: related ones (a clone added, snapshots
// dropped from clones, clones deleted) and unrelated or disordered ones
// (the fallback).
func TestIndexChangesIsTheWholeDiff(t *testing.T) {
	head := objid.New(3, "ns", "", "h", objid.NoSnap)
	r := rand.New(rand.NewPCG(5, 37))
	random := func() SnapSet {
		var ss SnapSet
		id := uint64(0)
		for range r.IntN(8) {
			id += 1 + uint64(r.IntN(3))
			c := Clone{ID: id}
			for s := id; s > 0 && len(c.Snaps) < 4; s-- {
				if r.IntN(2) == 0 {
					c.Snaps = append(c.Snaps, s)
				}
			}
			ss.Clones = append(ss.Clones, c)
		}
		return ss
	}
	related := func(ss SnapSet) SnapSet {
		next := ss.Clone()
		for i := len(next.Clones) - 1; i >= 0; i-- {
			switch r.IntN(4) {
			case 0:
				next.Clones = slices.Delete(next.Clones, i, i+1)
			case 1:
				if n := len(next.Clones[i].Snaps); n > 0 {
					k := r.IntN(n)
					next.Clones[i].Snaps = slices.Delete(next.Clones[i].Snaps, k, k+1)
				}
			}
		}
		last := uint64(0)
		if n := len(next.Clones); n > 0 {
			last = next.Clones[n-1].ID
		}
		if r.IntN(2) == 0 {
			next.Clones = append(next.Clones, Clone{ID: last + 1, Snaps: []uint64{last + 1}})
		}
		if r.IntN(10) == 0 && len(next.Clones) > 1 { // disordered: the fallback
			next.Clones[0], next.Clones[1] = next.Clones[1], next.Clones[0]
		}
		return next
	}
	for i := range 2000 {
		before := random()
		after := random()
		if i%2 == 0 {
			after = related(before)
		}
		add, rm := IndexChanges(head, before, after)
		wantAdd, wantRm := Diff(IndexOf(head, before), IndexOf(head, after))
		if !slices.Equal(add, wantAdd) || !slices.Equal(rm, wantRm) {
			t.Fatalf("%+v -> %+v: IndexChanges +%v -%v, the whole diff +%v -%v", before, after, add, rm, wantAdd, wantRm)
		}
	}
}

func TestDiff(t *testing.T) {
	h := objid.New(1, "", "", "x", objid.NoSnap)
	e := func(s, c uint64) IndexEntry { return IndexEntry{Snap: s, Clone: h.WithSnap(c)} }
	have := []IndexEntry{e(1, 2), e(2, 2), e(5, 5)}
	want := []IndexEntry{e(2, 2), e(3, 4), e(5, 5), e(6, 7)}
	add, rm := Diff(have, want)
	if !slices.Equal(add, []IndexEntry{e(3, 4), e(6, 7)}) || !slices.Equal(rm, []IndexEntry{e(1, 2)}) {
		t.Fatalf("Diff = +%+v -%+v", add, rm)
	}
}

func FuzzParseIndexKey(f *testing.F) {
	head := objid.New(1, "ns", "loc", "obj", objid.NoSnap)
	f.Add(IndexEntry{Snap: 3, Clone: head.WithSnap(5)}.Key())
	f.Add(IndexEntry{Snap: 1, Clone: head.WithSnap(1)}.Key())
	f.Add("snap.0000000000000001.")
	f.Add("snap.")
	f.Fuzz(func(t *testing.T, k string) {
		e, err := ParseIndexKey(k)
		if err != nil {
			return
		}
		if e.Key() != k {
			t.Fatalf("%q decodes to %+v, which encodes as %q", k, e, e.Key())
		}
		if err := e.check(); err != nil {
			t.Fatalf("%q decodes to an impossible entry: %v", k, err)
		}
	})
}
