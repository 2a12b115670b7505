package osdmap

import (
	"fmt"
	"strings"
)

// OSDState holds an OSD's state bits. The values are Ceph's.
type OSDState uint32

// OSD state bits.
const (
	OSDExists       OSDState = 1 << 0
	OSDUp           OSDState = 1 << 1
	OSDAutoOut      OSDState = 1 << 2 // marked out by the monitor, not an operator
	OSDNew          OSDState = 1 << 3 // created, never marked in
	OSDFull         OSDState = 1 << 4
	OSDNearFull     OSDState = 1 << 5
	OSDBackfillFull OSDState = 1 << 6
	OSDDestroyed    OSDState = 1 << 7
	OSDNoUp         OSDState = 1 << 8
	OSDNoDown       OSDState = 1 << 9
	OSDNoIn         OSDState = 1 << 10
	OSDNoOut        OSDState = 1 << 11
	OSDStop         OSDState = 1 << 12
)

var osdStateNames = []struct {
	s    OSDState
	name string
}{
	{OSDExists, "exists"}, {OSDUp, "up"}, {OSDAutoOut, "autoout"}, {OSDNew, "new"},
	{OSDFull, "full"}, {OSDNearFull, "nearfull"}, {OSDBackfillFull, "backfillfull"},
	{OSDDestroyed, "destroyed"}, {OSDNoUp, "noup"}, {OSDNoDown, "nodown"},
	{OSDNoIn, "noin"}, {OSDNoOut, "noout"}, {OSDStop, "stop"},
}

// String lists the state bits by Ceph's names, comma-separated.
func (s OSDState) String() string {
	var names []string
	for _, n := range osdStateNames {
		if s&n.s != 0 {
			names = append(names, n.name)
			s &^= n.s
		}
	}
	if s != 0 {
		names = append(names, fmt.Sprintf("%#x", uint32(s)))
	}
	return strings.Join(names, ",")
}

// Weights in 16.16 fixed point, as in Ceph.
const (
	// WeightIn is the reweight of an OSD that is fully in (CEPH_OSD_IN).
	WeightIn uint32 = 0x10000
	// WeightOut is the reweight of an OSD that is out (CEPH_OSD_OUT).
	WeightOut uint32 = 0
	// DefaultPrimaryAffinity lets an OSD be primary whenever CRUSH puts it
	// first (CEPH_OSD_DEFAULT_PRIMARY_AFFINITY, also the maximum).
	DefaultPrimaryAffinity uint32 = 0x10000
)

// OSD is one OSD's entry in the map. An OSD that does not exist has the
// zero OSD as its entry.
type OSD struct {
	State OSDState
	// Weight is the in/out reweight in 16.16 fixed point: WeightOut,
	// WeightIn, or between to shed that fraction of the OSD's PGs. It is
	// the reweight vector CRUSH maps with, not the CRUSH weight.
	Weight uint32
	// PrimaryAffinity in 16.16 fixed point: the fraction of the PGs that
	// CRUSH puts first on this OSD for which it stays primary.
	PrimaryAffinity uint32
	// Addr is the address clients reach the OSD at (opaque here).
	Addr string
	// UpFrom is the epoch the OSD last came up, UpThru the last epoch it
	// reported being up through, DownAt the epoch it last went down.
	UpFrom, UpThru, DownAt Epoch
	// LostAt is the epoch an operator declared the OSD lost (`osd
	// lost`): peering no longer waits for it in intervals that began
	// before, accepting that what only it held is gone (Ceph's
	// lost_at). 0: never.
	LostAt Epoch
	// Load is how busy the OSD reported itself, as the monitors last
	// published it (load.go): what clients with read_policy score weigh.
	Load Load
}

// LostSince reports whether the OSD was declared lost after epoch
// first: for an interval that began at first, it is not waited for.
func (o OSD) LostSince(first Epoch) bool { return o.LostAt > first }

// Exists reports whether the OSD exists.
func (o OSD) Exists() bool { return o.State&OSDExists != 0 }

// IsUp reports whether the OSD exists and is up.
func (o OSD) IsUp() bool { return o.Exists() && o.State&OSDUp != 0 }

// IsIn reports whether the OSD exists and is in (has a non-zero weight).
func (o OSD) IsIn() bool { return o.Exists() && o.Weight != WeightOut }

func (o *OSD) validate(id int32) error {
	switch {
	case !o.Exists() && *o != (OSD{}):
		return fmt.Errorf("osd.%d does not exist but has state %s, weight %#x", id, o.State, o.Weight)
	case o.Weight > WeightIn:
		return fmt.Errorf("osd.%d: weight %#x above %#x", id, o.Weight, WeightIn)
	case o.PrimaryAffinity > DefaultPrimaryAffinity:
		return fmt.Errorf("osd.%d: primary affinity %#x above %#x", id, o.PrimaryAffinity, DefaultPrimaryAffinity)
	case len(o.Addr) > MaxNameLen:
		return fmt.Errorf("osd.%d: address longer than %d bytes", id, MaxNameLen)
	case !o.Load.valid():
		return fmt.Errorf("osd.%d: load %v above 100%%", id, o.Load)
	}
	return nil
}
