package posixtest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var flagDir = flag.String("posix.dir", "", "run the suite in this directory (a mount) instead of the host's temporary directory")

// TestOnHost runs the suite on the host's file system (or -posix.dir):
// every expectation must hold there, which is what makes it Linux's.
func TestOnHost(t *testing.T) {
	dir := *flagDir
	if dir == "" {
		dir = t.TempDir()
		// Other users (the unprivileged checks) must reach it.
		for _, p := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	Run(t, dir)
}
