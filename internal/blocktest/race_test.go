//go:build race

package blocktest

// raceEnabled: the test binary was built with -race, so the cuttle binary
// the tests run is too.
const raceEnabled = true
