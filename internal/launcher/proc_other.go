//go:build unix && !linux

package launcher

import (
	"errors"
	"syscall"
)

// lookupProc asks whether pid exists. Without /proc there is no start
// time, so identity rests on the pid alone, and an unreaped zombie counts
// as existing.
func lookupProc(pid int) (procState, error) {
	err := syscall.Kill(pid, 0)
	if err == nil || errors.Is(err, syscall.EPERM) {
		return procState{Exists: true}, nil
	}
	return procState{}, nil
}

// bootID is empty where the system offers none.
func bootID() string { return "" }
