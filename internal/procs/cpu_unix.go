//go:build unix

package procs

import (
	"syscall"
	"time"
)

const cpuTimeSupported = true

// cpuTime returns the CPU time the process has used (user and system),
// 0 if it cannot be read.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
