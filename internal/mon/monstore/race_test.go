//go:build race

package monstore

// raceEnabled reports whether the race detector is on; slow tests sample.
const raceEnabled = true
