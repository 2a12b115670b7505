//go:build !unix

package procs

import "time"

// cpuTimeSupported is false here: without the process's CPU time the
// governor cannot tell busy from idle, so it stays off.
const cpuTimeSupported = false

func cpuTime() time.Duration { return 0 }
