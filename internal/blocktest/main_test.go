package blocktest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// env is what TestMain prepares for every test: the cuttle binary.
type env struct {
	cuttle string // the binary's path
}

// theEnv is set by TestMain before any test runs and never changed.
var theEnv env

// TestMain builds the cuttle binary once (with -race when this test
// binary has it: the daemons and the NBD server are what these tests
// exercise, and the race build's packages are the ones internal/cli's
// race run compiles anyway, so the build cache shares them) and runs the
// tests against it.
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
	args = append(args, "github.com/cuttlestore/cuttle/cmd/cuttle")
	cmd := exec.Command("go", args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "blocktest: go %v: %v\n", args, err)
		return 1
	}
	return m.Run()
}
