package scrub

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/objid"
)

var (
	// ErrNoGoodCopy means no member could read the object: repair has
	// nothing to copy.
	ErrNoGoodCopy = errors.New("scrub: no good copy")
	// ErrMisplaced means the object is stored in a PG its name does not
	// map to: copying it among the PG's members cannot put it where
	// clients look for it.
	ErrMisplaced = errors.New("scrub: stored in the wrong PG")
)

// Repair is what the primary does to make every member's copy of an
// object equal to the authoritative one.
type Repair struct {
	// Pull is the member to fetch the authoritative copy from first,
	// when the primary's own copy is bad; -1 when it is good.
	Pull int32
	// Push are the members, not the primary, to send the (then good)
	// primary's copy to, in OSD order.
	Push []int32
}

// PlanRepair returns how the primary self repairs object id, which a
// scrub found inconsistent as inc: the primary's copy is replaced by the
// first authoritative member's if it is bad, then pushed to every other
// bad member. It fails with ErrNoGoodCopy when no copy is authoritative
// and with ErrMisplaced for an object in the wrong PG.
func PlanRepair(id objid.ID, inc Inconsistency, self int32) (Repair, error) {
	if inc.Misplaced {
		return Repair{}, fmt.Errorf("%w: %v (%s)", ErrMisplaced, id, inc.Why)
	}
	if len(inc.Auth) == 0 {
		return Repair{}, fmt.Errorf("%w of %v", ErrNoGoodCopy, id)
	}
	r := Repair{Pull: -1}
	if !slices.Contains(inc.Auth, self) {
		r.Pull = inc.Auth[0]
	}
	for _, x := range inc.Bad {
		if x != self {
			r.Push = append(r.Push, x)
		}
	}
	return r, nil
}
