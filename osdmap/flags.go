package osdmap

import (
	"fmt"
	"strings"
)

// Flags are cluster-wide flags of the map. The bit values are Ceph's
// (CEPH_OSDMAP_*).
type Flags uint32

// Map flags.
const (
	FlagPauseRead    Flags = 1 << 2  // pauserd: clients hold reads
	FlagPauseWrite   Flags = 1 << 3  // pausewr: clients hold writes
	FlagPauseRecover Flags = 1 << 4  // pauserec
	FlagNoUp         Flags = 1 << 5  // OSDs may not be marked up
	FlagNoDown       Flags = 1 << 6  // OSDs may not be marked down
	FlagNoOut        Flags = 1 << 7  // down OSDs are not marked out
	FlagNoIn         Flags = 1 << 8  // booting OSDs are not marked in
	FlagNoBackfill   Flags = 1 << 9  // backfill pauses
	FlagNoRecover    Flags = 1 << 10 // recovery pauses
	FlagNoScrub      Flags = 1 << 11
	FlagNoDeepScrub  Flags = 1 << 12
	FlagNoRebalance  Flags = 1 << 14
	FlagNoSnapTrim   Flags = 1 << 21
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{FlagPauseRead, "pauserd"}, {FlagPauseWrite, "pausewr"}, {FlagPauseRecover, "pauserec"},
	{FlagNoUp, "noup"}, {FlagNoDown, "nodown"}, {FlagNoOut, "noout"}, {FlagNoIn, "noin"},
	{FlagNoBackfill, "nobackfill"}, {FlagNoRebalance, "norebalance"}, {FlagNoRecover, "norecover"},
	{FlagNoScrub, "noscrub"}, {FlagNoDeepScrub, "nodeep-scrub"}, {FlagNoSnapTrim, "nosnaptrim"},
}

// String lists the flags by Ceph's names, comma-separated; unnamed bits
// print in hex.
func (f Flags) String() string {
	var names []string
	for _, n := range flagNames {
		if f&n.f != 0 {
			names = append(names, n.name)
			f &^= n.f
		}
	}
	if f != 0 {
		names = append(names, fmt.Sprintf("%#x", uint32(f)))
	}
	return strings.Join(names, ",")
}

// ParseFlag returns the flag Ceph calls name ("noout", "nodown", ...).
func ParseFlag(name string) (Flags, error) {
	for _, n := range flagNames {
		if n.name == name {
			return n.f, nil
		}
	}
	return 0, fmt.Errorf("osdmap: unknown flag %q", name)
}
