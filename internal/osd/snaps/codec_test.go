package snaps

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
)

func sampleSets() []SnapSet {
	return []SnapSet{
		{},
		{Seq: 7},
		{Seq: 9, Clones: []Clone{
			{ID: 2, Snaps: []uint64{2, 1}, Size: 100, Overlap: Extents{{0, 50}}},
			{ID: 5, Snaps: []uint64{5}, Size: 0},
			{ID: 9, Snaps: []uint64{9, 8, 6}, Size: 1 << 40, Overlap: Extents{{0, 4096}, {8192, 1 << 30}}},
		}},
	}
}

func TestSnapSetRoundTrip(t *testing.T) {
	for _, ss := range sampleSets() {
		b := ss.Marshal()
		got, err := Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if !equalSets(got, ss) || !bytes.Equal(got.Marshal(), b) {
			t.Fatalf("round trip: %+v, want %+v", got, ss)
		}
	}
}

func TestSnapSetDecodeRejects(t *testing.T) {
	for name, ss := range map[string]SnapSet{
		"clones unsorted":       {Seq: 9, Clones: []Clone{{ID: 5, Snaps: []uint64{5}}, {ID: 2, Snaps: []uint64{2}}}},
		"clone above seq":       {Seq: 4, Clones: []Clone{{ID: 5, Snaps: []uint64{5}}}},
		"clone serves nothing":  {Seq: 5, Clones: []Clone{{ID: 5}}},
		"snap above its clone":  {Seq: 9, Clones: []Clone{{ID: 5, Snaps: []uint64{6}}}},
		"snaps unsorted":        {Seq: 9, Clones: []Clone{{ID: 5, Snaps: []uint64{3, 4}}}},
		"snap of older clone":   {Seq: 9, Clones: []Clone{{ID: 3, Snaps: []uint64{3}}, {ID: 5, Snaps: []uint64{5, 3}}}},
		"overlap past the size": {Seq: 9, Clones: []Clone{{ID: 5, Snaps: []uint64{5}, Size: 10, Overlap: Extents{{5, 6}}}}},
		"seq is head":           {Seq: 1<<64 - 2},
	} {
		if _, err := Unmarshal(ss.Marshal()); !errors.Is(err, encoding.ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	b := sampleSets()[2].Marshal()
	for n := range len(b) {
		if _, err := Unmarshal(b[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: decoded", n)
		}
	}
}

func FuzzDecodeSnapSet(f *testing.F) {
	for _, ss := range sampleSets() {
		f.Add(ss.Marshal())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, err := Unmarshal(b)
		if err != nil {
			return
		}
		again := ss.Marshal()
		ss2, err := Unmarshal(again)
		if err != nil || !bytes.Equal(ss2.Marshal(), again) {
			t.Fatalf("re-decode: %v", err)
		}
		// Whatever decodes, the decisions run on without panicking and
		// keep the snap set valid.
		for _, snap := range []uint64{0, 1, ss.Seq, ss.Seq + 1} {
			ss.Resolve(snap, true)
			ss.Rollback(snap, false)
		}
		next, _, err := ss.MakeWriteable(Context{Seq: ss.Seq + 1, Snaps: []uint64{ss.Seq + 1}}, true, 10)
		if err == nil && ss.Seq+1 < 1<<64-2 {
			if err := next.HeadModified(3, 4).Validate(); err != nil {
				t.Fatalf("after a write: %v", err)
			}
		}
		trimmed, _ := ss.Trim(func(s uint64) bool { return s%2 == 0 })
		if err := trimmed.Validate(); err != nil {
			t.Fatalf("after a trim: %v", err)
		}
	})
}
