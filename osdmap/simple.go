package osdmap

import "github.com/cuttlestore/cuttle/crush"

// NewSimple returns epoch 1 of a map over crushMap with OSDs 0 to
// numOSDs-1 existing, up and in, and the given pools. It is the quick way
// to a working map for tools and tests; a monitor builds its first map
// from a Spec.
func NewSimple(crushMap *crush.Map, numOSDs int, pools ...Pool) (*Map, error) {
	spec := Spec{Epoch: 1, Crush: crushMap, Pools: pools}
	if numOSDs > 0 && numOSDs <= MaxOSDs {
		spec.OSDs = make([]OSD, numOSDs)
		for i := range spec.OSDs {
			spec.OSDs[i] = OSD{State: OSDExists | OSDUp, Weight: WeightIn, PrimaryAffinity: DefaultPrimaryAffinity, UpFrom: 1}
		}
	} else if numOSDs > MaxOSDs {
		spec.OSDs = make([]OSD, MaxOSDs+1) // let New report the limit
	}
	return New(spec)
}
