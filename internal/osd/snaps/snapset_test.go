package snaps

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/objid"
)

func TestMakeWriteable(t *testing.T) {
	base := SnapSet{Seq: 4, Clones: []Clone{{ID: 4, Snaps: []uint64{4, 3}, Size: 10, Overlap: Whole(10)}}}
	for _, c := range []struct {
		name       string
		ss         SnapSet
		ctx        Context
		headExists bool
		wantClone  *Clone
		wantSeq    uint64
	}{
		{"no snaps: no clone", SnapSet{}, Context{}, true, nil, 0},
		{"first snap clones", SnapSet{}, Context{Seq: 2, Snaps: []uint64{2, 1}}, true,
			&Clone{ID: 2, Snaps: []uint64{2, 1}, Size: 7, Overlap: Whole(7)}, 2},
		{"only the snaps newer than the last write", base, Context{Seq: 9, Snaps: []uint64{8, 6, 4, 3}}, true,
			&Clone{ID: 9, Snaps: []uint64{8, 6}, Size: 7, Overlap: Whole(7)}, 9},
		{"nothing new: no clone, seq advances", base, Context{Seq: 6, Snaps: []uint64{4, 3}}, true, nil, 6},
		{"an older context keeps the seq", base, Context{Seq: 2, Snaps: []uint64{2}}, true, nil, 4},
		{"no head (created, or deleted): nothing to keep", base, Context{Seq: 9, Snaps: []uint64{8}}, false, nil, 9},
		{"empty head clones empty", SnapSet{}, Context{Seq: 1, Snaps: []uint64{1}}, true, &Clone{ID: 1, Snaps: []uint64{1}}, 1},
	} {
		size := uint64(7)
		if c.name == "empty head clones empty" {
			size = 0
		}
		before := c.ss.Clone()
		next, clone, err := c.ss.MakeWriteable(c.ctx, c.headExists, size)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !equalSets(c.ss, before) {
			t.Errorf("%s: MakeWriteable changed its receiver", c.name)
		}
		if (clone == nil) != (c.wantClone == nil) || clone != nil && !equalClones(*clone, *c.wantClone) {
			t.Errorf("%s: clone %+v, want %+v", c.name, clone, c.wantClone)
		}
		if next.Seq != c.wantSeq {
			t.Errorf("%s: seq %d, want %d", c.name, next.Seq, c.wantSeq)
		}
		if err := next.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// An object has at most MaxClones clones: the write that would make one
// more is refused and changes nothing; a write that needs no clone, and
// one after a trim made room, go on.
func TestMakeWriteableBoundsClones(t *testing.T) {
	var ss SnapSet
	for i := range uint64(MaxClones) {
		next, clone, err := ss.MakeWriteable(Context{Seq: i + 1, Snaps: []uint64{i + 1}}, true, 3)
		if err != nil || clone == nil {
			t.Fatalf("clone %d: %v %v", i+1, clone, err)
		}
		ss = next
	}
	full := ss.Clone()
	next, clone, err := ss.MakeWriteable(Context{Seq: MaxClones + 1, Snaps: []uint64{MaxClones + 1}}, true, 3)
	if !errors.Is(err, ErrTooManyClones) || clone != nil || !equalSets(next, full) {
		t.Fatalf("clone %d: %v %v, want ErrTooManyClones and no change", MaxClones+1, clone, err)
	}
	if _, clone, err := ss.MakeWriteable(Context{Seq: MaxClones, Snaps: []uint64{MaxClones}}, true, 3); err != nil || clone != nil {
		t.Fatalf("a write needing no clone: %v %v", clone, err)
	}
	if _, err := Unmarshal(full.Marshal()); err != nil {
		t.Fatalf("a full snap set does not decode: %v", err)
	}
	trimmed, _ := ss.Trim(func(s uint64) bool { return s == 1 })
	if _, clone, err := trimmed.MakeWriteable(Context{Seq: MaxClones + 1, Snaps: []uint64{MaxClones + 1}}, true, 3); err != nil || clone == nil {
		t.Fatalf("after a trim: %v %v", clone, err)
	}
	over := full.Clone()
	over.Clones = append(over.Clones, Clone{ID: MaxClones + 1, Snaps: []uint64{MaxClones + 1}, Size: 3, Overlap: Whole(3)})
	over.Seq = MaxClones + 1
	if _, err := Unmarshal(over.Marshal()); err == nil {
		t.Fatalf("a snap set of %d clones decodes", MaxClones+1)
	}
}

func TestResolve(t *testing.T) {
	// Clones 3 (snaps 3, 2) and 8 (snaps 8, 6); last write under seq 10;
	// snaps 4, 5, 7 were never served (not in the writers' contexts).
	ss := SnapSet{Seq: 10, Clones: []Clone{
		{ID: 3, Snaps: []uint64{3, 2}, Size: 1, Overlap: Whole(1)},
		{ID: 8, Snaps: []uint64{8, 6}, Size: 1, Overlap: Whole(1)},
	}}
	for _, c := range []struct {
		snap       uint64
		headExists bool
		want       uint64
		err        error
	}{
		{objid.NoSnap, true, objid.NoSnap, nil},
		{objid.NoSnap, false, 0, ErrNotFound},
		{11, true, objid.NoSnap, nil},
		{11, false, 0, ErrNotFound},
		{10, true, 0, ErrNotFound}, // written under seq 10 with no clone for 9, 10: created since
		{8, true, 8, nil},
		{7, false, 8, nil},
		{6, true, 8, nil},
		{5, true, 0, ErrNotFound},
		{3, true, 3, nil},
		{2, true, 3, nil},
		{1, true, 0, ErrNotFound},
	} {
		got, err := ss.Resolve(c.snap, c.headExists)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("Resolve(%s, head %v) = %s %v, want %s %v", objid.SnapString(c.snap), c.headExists,
				objid.SnapString(got), err, objid.SnapString(c.want), c.err)
		}
	}
}

func TestHeadModifiedAndRollback(t *testing.T) {
	ss := SnapSet{Seq: 5, Clones: []Clone{
		{ID: 2, Snaps: []uint64{2}, Size: 100, Overlap: Whole(100)},
		{ID: 5, Snaps: []uint64{5, 4}, Size: 100, Overlap: Whole(100)},
	}}
	w := ss.HeadModified(10, 20).HeadModified(90, 1<<63)
	if want := (Extents{{0, 10}, {30, 60}}); !w.Clones[1].Overlap.Equal(want) || !w.Clones[0].Overlap.Equal(Whole(100)) {
		t.Fatalf("overlaps after writes: %v and %v", w.Clones[0].Overlap, w.Clones[1].Overlap)
	}
	if !ss.Clones[1].Overlap.Equal(Whole(100)) {
		t.Fatal("HeadModified changed its receiver")
	}
	for _, c := range []struct {
		snap       uint64
		headExists bool
		act        RollbackAction
		from       uint64
	}{
		{9, true, RollbackNone, 0},
		{5, true, RollbackFromClone, 5},
		{4, true, RollbackFromClone, 5},
		{2, false, RollbackFromClone, 2},
		{3, true, RollbackDelete, 0},
		{1, true, RollbackDelete, 0},
		{1, false, RollbackNone, 0},
	} {
		act, from := w.Rollback(c.snap, c.headExists)
		if act != c.act || from != c.from {
			t.Errorf("Rollback(%d, head %v) = %d %d, want %d %d", c.snap, c.headExists, act, from, c.act, c.from)
		}
	}
	if r := w.RolledBack(5); !r.Clones[1].Overlap.Equal(Whole(100)) {
		t.Errorf("rolled back from the newest clone: overlap %v", r.Clones[1].Overlap)
	}
	if r := w.RolledBack(2); len(r.Clones[1].Overlap) != 0 || !r.Clones[0].Overlap.Equal(Whole(100)) {
		t.Errorf("rolled back from an older clone: overlaps %v %v", r.Clones[0].Overlap, r.Clones[1].Overlap)
	}
}

func TestTrim(t *testing.T) {
	ss := SnapSet{Seq: 9, Clones: []Clone{
		{ID: 2, Snaps: []uint64{2, 1}, Size: 100, Overlap: Extents{{0, 50}}},
		{ID: 5, Snaps: []uint64{5, 4}, Size: 100, Overlap: Extents{{20, 80}}},
		{ID: 7, Snaps: []uint64{7}, Size: 100, Overlap: Extents{{0, 40}, {60, 40}}},
		{ID: 9, Snaps: []uint64{9, 8}, Size: 100, Overlap: Extents{{0, 100}}},
	}}
	gone := func(ids ...uint64) func(uint64) bool { return func(s uint64) bool { return slices.Contains(ids, s) } }
	for _, c := range []struct {
		name    string
		removed []uint64
		deleted []uint64
		want    []Clone
	}{
		{"nothing removed", nil, nil, ss.Clones},
		{"one of two snaps: the clone stays", []uint64{4}, nil, []Clone{ss.Clones[0],
			{ID: 5, Snaps: []uint64{5}, Size: 100, Overlap: Extents{{20, 80}}}, ss.Clones[2], ss.Clones[3]}},
		{"middle clones go: the older shares what all shared", []uint64{4, 5, 7}, []uint64{5, 7}, []Clone{
			{ID: 2, Snaps: []uint64{2, 1}, Size: 100, Overlap: Extents{{20, 20}}}, ss.Clones[3]}},
		{"the newest goes", []uint64{8, 9}, []uint64{9}, []Clone{ss.Clones[0], ss.Clones[1],
			{ID: 7, Snaps: []uint64{7}, Size: 100, Overlap: Extents{{0, 40}, {60, 40}}}}},
		{"all go", []uint64{1, 2, 4, 5, 7, 8, 9}, []uint64{2, 5, 7, 9}, nil},
	} {
		next, deleted := ss.Trim(gone(c.removed...))
		if !slices.Equal(deleted, c.deleted) || !equalSets(next, SnapSet{Seq: 9, Clones: c.want}) {
			t.Errorf("%s: %+v deleted %v, want %+v and %v", c.name, next.Clones, deleted, c.want, c.deleted)
		}
		if ss.Trimmable(gone(c.removed...)) != (len(c.removed) > 0) {
			t.Errorf("%s: Trimmable wrong", c.name)
		}
		if err := next.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if len(ss.Clones[1].Snaps) != 2 {
		t.Fatal("Trim changed its receiver")
	}
}

func equalClones(a, b Clone) bool {
	return a.ID == b.ID && slices.Equal(a.Snaps, b.Snaps) && a.Size == b.Size && a.Overlap.Equal(b.Overlap)
}

func equalSets(a, b SnapSet) bool {
	return a.Seq == b.Seq && slices.EqualFunc(a.Clones, b.Clones, equalClones)
}

// model is an object with snapshots as a person sees it: its contents at
// every live snapshot, kept whole. The test runs the same history through
// SnapSet and a store of clones and checks every read at every snapshot.
type model struct {
	seq   uint64
	live  []uint64          // live snapshots, oldest first
	at    map[uint64][]byte // contents at each live snap; nil: did not exist
	head  []byte            // nil: no head
	store map[uint64][]byte // the clones SnapSet made, by id
	ss    SnapSet
}

func (m *model) ctx() Context {
	c := Context{Seq: m.seq}
	for i := len(m.live) - 1; i >= 0; i-- {
		c.Snaps = append(c.Snaps, m.live[i])
	}
	return c
}

// write runs one write under the current context: clone first if told.
func (m *model) write(t *testing.T, f func(head []byte) []byte, modified func(SnapSet) SnapSet) {
	next, clone, err := m.ss.MakeWriteable(m.ctx(), m.head != nil, uint64(len(m.head)))
	if err != nil {
		t.Fatal(err)
	}
	if clone != nil {
		m.store[clone.ID] = bytes.Clone(m.head)
	}
	m.ss = modified(next)
	m.head = f(m.head)
}

func TestSnapSetAgainstModel(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 99))
		m := &model{at: map[uint64][]byte{}, store: map[uint64][]byte{}}
		for step := range 60 {
			switch op := r.IntN(10); {
			case op < 2: // take a snapshot
				m.seq++
				m.live = append(m.live, m.seq)
				m.at[m.seq] = bytes.Clone(m.head)
				if m.head == nil {
					m.at[m.seq] = nil
				}
			case op < 6: // write a random extent
				off, n := uint64(r.IntN(40)), uint64(1+r.IntN(20))
				b := byte('a' + step%26)
				m.write(t, func(h []byte) []byte {
					h = bytes.Clone(h)
					for uint64(len(h)) < off+n {
						h = append(h, 0)
					}
					for i := off; i < off+n; i++ {
						h[i] = b
					}
					return h
				}, func(ss SnapSet) SnapSet { return ss.HeadModified(off, n) })
			case op < 7: // truncate
				size := uint64(r.IntN(30))
				if m.head != nil {
					m.write(t, func(h []byte) []byte {
						h = bytes.Clone(h)
						for uint64(len(h)) < size {
							h = append(h, 0)
						}
						return h[:size]
					}, func(ss SnapSet) SnapSet { return ss.HeadModified(size, 1<<63) })
				}
			case op < 8: // delete the head
				if m.head != nil {
					m.write(t, func([]byte) []byte { return nil }, SnapSet.HeadReplaced)
				}
			case op < 9: // roll back to a live snapshot
				if len(m.live) == 0 {
					continue
				}
				snap := m.live[r.IntN(len(m.live))]
				next, clone, err := m.ss.MakeWriteable(m.ctx(), m.head != nil, uint64(len(m.head)))
				if err != nil {
					t.Fatal(err)
				}
				if clone != nil {
					m.store[clone.ID] = bytes.Clone(m.head)
				}
				m.ss = next
				switch act, from := m.ss.Rollback(snap, m.head != nil); act {
				case RollbackFromClone:
					m.head = bytes.Clone(m.store[from])
					if m.head == nil {
						m.head = []byte{}
					}
					m.ss = m.ss.RolledBack(from)
				case RollbackDelete:
					m.head = nil
					m.ss = m.ss.HeadReplaced()
				}
				if !bytes.Equal(m.head, m.at[snap]) || (m.head == nil) != (m.at[snap] == nil) {
					t.Fatalf("seed %d step %d: rollback to %d gives %q, want %q", seed, step, snap, m.head, m.at[snap])
				}
			default: // remove a snapshot and trim
				if len(m.live) == 0 {
					continue
				}
				// One snapshot, or sometimes several at once (a trim that
				// finds many removed).
				for n := 1 + r.IntN(3); n > 0 && len(m.live) > 0; n-- {
					i := r.IntN(len(m.live))
					delete(m.at, m.live[i])
					m.live = slices.Delete(m.live, i, i+1)
				}
				var deleted []uint64
				m.ss, deleted = m.ss.Trim(func(s uint64) bool { return !slices.Contains(m.live, s) })
				for _, id := range deleted {
					delete(m.store, id)
				}
			}
			m.check(t, fmt.Sprintf("seed %d step %d", seed, step))
		}
	}
}

// check reads at every live snapshot and the head, and checks the
// overlaps against the data.
func (m *model) check(t *testing.T, where string) {
	t.Helper()
	if err := m.ss.Validate(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if len(m.store) != len(m.ss.Clones) {
		t.Fatalf("%s: %d clones stored, snap set has %d", where, len(m.store), len(m.ss.Clones))
	}
	for _, s := range append(slices.Clone(m.live), objid.NoSnap) {
		want, ok := m.at[s], true
		if s == objid.NoSnap {
			want = m.head
		}
		ok = want != nil
		v, err := m.ss.Resolve(s, m.head != nil)
		if !ok {
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: read at %s: %s %v, want ErrNotFound", where, objid.SnapString(s), objid.SnapString(v), err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: read at %s: %v, want %q", where, objid.SnapString(s), err, want)
		}
		got := m.head
		if v != objid.NoSnap {
			got = m.store[v]
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: read at %s from %s: %q, want %q", where, objid.SnapString(s), objid.SnapString(v), got, want)
		}
	}
	// Every byte a clone claims to share with the next newer version is
	// the same in both.
	for i, c := range m.ss.Clones {
		newer := m.head
		if i+1 < len(m.ss.Clones) {
			newer = m.store[m.ss.Clones[i+1].ID]
		}
		data := m.store[c.ID]
		if uint64(len(data)) != c.Size {
			t.Fatalf("%s: clone %d size %d, data %d", where, c.ID, c.Size, len(data))
		}
		for _, x := range c.Overlap {
			if x.End() > uint64(len(newer)) || !bytes.Equal(data[x.Off:x.End()], newer[x.Off:x.End()]) {
				t.Fatalf("%s: clone %d claims %d~%d shared, but it differs from the next version", where, c.ID, x.Off, x.Len)
			}
		}
	}
}

// TestMethodsLeaveTheReceiver checks that a snap set's methods, which
// share unchanged clones' slices with the snap sets they return, never
// write into their receiver, nor into it through what they returned
// before.
func TestMethodsLeaveTheReceiver(t *testing.T) {
	ss := SnapSet{Seq: 7, Clones: []Clone{
		{ID: 3, Snaps: []uint64{3, 2}, Size: 100, Overlap: Extents{{0, 100}}},
		{ID: 5, Snaps: []uint64{5}, Size: 80, Overlap: Extents{{0, 40}, {60, 20}}},
	}}
	was := ss.Clone()
	w, _, err := ss.MakeWriteable(Context{Seq: 9, Snaps: []uint64{9, 8, 5, 3, 2}}, true, 120)
	if err != nil {
		t.Fatal(err)
	}
	m := ss.HeadModified(10, 30)
	m = m.HeadModified(0, 5)
	r := ss.RolledBack(5)
	tr, _ := ss.Trim(func(s uint64) bool { return s == 5 || s == 2 })
	w = w.HeadReplaced()
	for _, x := range []SnapSet{w, m, r, tr} {
		if len(x.Clones) > 0 {
			x.Clones[len(x.Clones)-1].Size++ // the caller's own array
		}
	}
	if !reflect.DeepEqual(ss, was) {
		t.Fatalf("the receiver changed: %+v, was %+v", ss, was)
	}
}
