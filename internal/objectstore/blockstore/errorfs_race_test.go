//go:build race

package blockstore

// raceEnabled reports whether the race detector is on; slow tests sample.
const raceEnabled = true
