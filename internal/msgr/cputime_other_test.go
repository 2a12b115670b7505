//go:build !linux

package msgr_test

import "time"

// processCPU is not measured off Linux; the CPU metric is then omitted.
func processCPU() time.Duration { return 0 }
