package mdsmap

import "fmt"

// State is a daemon's state, as Ceph names them ("up:active").
type State uint8

// States, in the order a rank moves through them (Ceph's MDSMap
// DaemonState). Boot is what a daemon reports before the monitors know
// it; the map never holds it.
const (
	StateNone          State = iota // not in the map
	StateBoot                       // a new daemon announcing itself (beacons only)
	StateStandby                    // no rank; may be given one
	StateStandbyReplay              // follows a rank's journal, ready to take it over
	StateCreating                   // holds a new rank: creates its journal (and rank 0 the root)
	StateReplay                     // holds a rank, replaying its journal
	StateResolve                    // several ranks: resolving uncommitted cross-rank operations
	StateReconnect                  // waiting for the clients' sessions to reconnect
	StateRejoin                     // rejoining the distributed cache
	StateClientReplay               // replaying the clients' unsafe requests
	StateActive                     // serving
	StateStopping                   // handing its subtrees away (max_mds lowered)
	StateStopped                    // done stopping (beacons only): the rank leaves
	StateDamaged                    // the daemon found its rank's metadata damaged (beacons only)
	numStates
)

var stateNames = [...]string{"none", "boot", "standby", "standby-replay", "creating", "replay", "resolve", "reconnect", "rejoin",
	"clientreplay", "active", "stopping", "stopped", "damaged"}

// String is Ceph's name without its "up:" prefix ("active").
func (s State) String() string {
	if s < numStates {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Up is Ceph's spelling with the prefix: "up:active", "up:standby".
func (s State) Up() string { return "up:" + s.String() }

// ParseState reads a state name, with or without "up:".
func ParseState(s string) (State, error) {
	if len(s) > 3 && s[:3] == "up:" {
		s = s[3:]
	}
	for i, n := range stateNames {
		if n == s {
			return State(i), nil
		}
	}
	return StateNone, fmt.Errorf("mdsmap: unknown state %q", s)
}

// Valid reports whether s is a known state.
func (s State) Valid() bool { return s < numStates }

// HoldsRank reports whether a daemon in s holds a rank (creating to
// stopping).
func (s State) HoldsRank() bool { return s >= StateCreating && s <= StateStopping }

// InMap reports whether the map may hold a daemon in s.
func (s State) InMap() bool { return s >= StateStandby && s <= StateStopping }

// next lists the states a rank holder may move to from each state, as
// its beacons report progress (Ceph's MDSMonitor checks the same order).
var next = map[State][]State{
	StateCreating:     {StateActive},
	StateReplay:       {StateResolve, StateReconnect},
	StateResolve:      {StateReconnect},
	StateReconnect:    {StateRejoin},
	StateRejoin:       {StateClientReplay, StateActive},
	StateClientReplay: {StateActive},
	StateActive:       {StateStopping},
	StateStopping:     {StateStopped},
}

// CanAdvance reports whether a rank holder in from may report to.
func CanAdvance(from, to State) bool {
	for _, s := range next[from] {
		if s == to {
			return true
		}
	}
	return false
}
