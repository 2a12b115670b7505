package rbdcmd

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// addCPUProfileFlag adds the hidden --cpuprofile flag: a file to write
// the command's CPU profile to (go tool pprof reads it), for finding
// where the client's time goes in rbd bench and rbd export.
func addCPUProfileFlag(cmd *cobra.Command, path *string) {
	cmd.Flags().StringVar(path, "cpuprofile", "", "write a CPU profile of the run to this file")
	_ = cmd.Flags().MarkHidden("cpuprofile") // the flag was just added: MarkHidden cannot fail
}

// startCPUProfile starts profiling into path ("" profiles nothing);
// stop ends it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}, nil
}
