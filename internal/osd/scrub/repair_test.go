package scrub

import (
	"errors"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

func TestPlanRepair(t *testing.T) {
	id := objid.Object(1, "", "a")
	for _, tc := range []struct {
		name string
		inc  Inconsistency
		self int32
		want Repair
		err  error
	}{
		{name: "the primary's copy is good: push it to the bad members",
			inc: Inconsistency{Auth: []int32{0, 2}, Bad: []int32{1, 3}}, self: 0, want: Repair{Pull: -1, Push: []int32{1, 3}}},
		{name: "the primary's copy is bad: pull it from the first good member, then push",
			inc: Inconsistency{Auth: []int32{2, 3}, Bad: []int32{0, 1}}, self: 0, want: Repair{Pull: 2, Push: []int32{1}}},
		{name: "only the primary's copy is bad",
			inc: Inconsistency{Auth: []int32{1, 2}, Bad: []int32{0}}, self: 0, want: Repair{Pull: 1}},
		{name: "the primary is not the lowest id",
			inc: Inconsistency{Auth: []int32{1, 5}, Bad: []int32{3}}, self: 5, want: Repair{Pull: -1, Push: []int32{3}}},
		{name: "no good copy", inc: Inconsistency{Bad: []int32{0, 1}, Why: "no readable copy"}, err: ErrNoGoodCopy},
		{name: "in the wrong PG", inc: Inconsistency{Bad: []int32{0, 1}, Misplaced: true, Why: "stored in pg 1.1"}, err: ErrMisplaced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PlanRepair(id, tc.inc, tc.self)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Pull != tc.want.Pull || !slices.Equal(got.Push, tc.want.Push) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Repairing as Compare decided makes every member hold the
// authoritative copy.
func TestRepairOfCompared(t *testing.T) {
	a := objid.Object(1, "", "a")
	for _, primary := range []int32{0, 1, 2} {
		maps := map[int32][]wire.ScrubObject{0: {good(a, v1, 7)}, 1: {good(a, v1, 9)}, 2: {good(a, v1, 7)}}
		inc := Compare(maps, primary)[a]
		r, err := PlanRepair(a, inc, primary)
		if err != nil {
			t.Fatal(err)
		}
		copies := map[int32]uint32{0: 7, 1: 9, 2: 7}
		if r.Pull >= 0 {
			copies[primary] = copies[r.Pull]
		}
		for _, x := range r.Push {
			copies[x] = copies[primary]
		}
		for x, d := range copies {
			if d != 7 {
				t.Errorf("primary osd.%d: after %+v, osd.%d holds %d", primary, r, x, d)
			}
		}
	}
}
