//go:build !linux

package blockstore_test

import "time"

// processCPU is not measured off Linux.
func processCPU() time.Duration { return 0 }
