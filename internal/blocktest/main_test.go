package blocktest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cuttlestore/cuttle/internal/invariants"
)

// env is what TestMain prepares for every test: the cuttle binary.
type env struct {
	cuttle string // the binary's path
}

// theEnv is set by TestMain before any test runs and never changed.
var theEnv env

// TestMain builds the cuttle binary once, with the flags this test
// binary has (-race, -tags invariants: make test's), and runs the tests
// against it. The daemons and the NBD server are what these tests
// exercise, so they are worth the race detector's cost (the package's
// tests take under 4 minutes with it on 2 cores); and with the same flags
// the build reuses the packages internal/cli's test binary compiled.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "blocktest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "blocktest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	theEnv.cuttle = filepath.Join(dir, "cuttle")
	args := []string{"build", "-o", theEnv.cuttle}
	if raceEnabled {
		args = append(args, "-race")
	}
	if invariants.Enabled { // make test: the daemons check theirs too
		args = append(args, "-tags", "invariants")
	}
	args = append(args, "github.com/cuttlestore/cuttle/cmd/cuttle")
	cmd := exec.Command("go", args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "blocktest: go %v: %v\n", args, err)
		return 1
	}
	return m.Run()
}
