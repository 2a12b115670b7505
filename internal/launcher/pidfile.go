package launcher

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procID identifies one process for as long as the machine runs: a pid
// is reused once its process is gone, but not together with the same
// start time in the same boot.
type procID struct {
	PID int
	// Start is the process's start time in clock ticks after boot
	// (field 22 of /proc/PID/stat).
	Start uint64
	// Boot is the machine's boot id; empty where the system has none.
	Boot string
}

// pidFileVersion is the format of pid files:
//
//	cuttle-pid 1
//	pid 12345
//	start 8812345
//	boot 0b8f6c6e-...
const pidFileVersion = 1

// maxPIDFileSize bounds a pid file.
const maxPIDFileSize = 4096

// errBadPIDFile is wrapped by pid-file parse errors.
var errBadPIDFile = errors.New("launcher: malformed pid file")

func (p procID) marshal() []byte {
	return fmt.Appendf(nil, "cuttle-pid %d\npid %d\nstart %d\nboot %s\n", pidFileVersion, p.PID, p.Start, p.Boot)
}

// parsePIDFile decodes a pid file. It never panics on bad input.
func parsePIDFile(b []byte) (procID, error) {
	if len(b) > maxPIDFileSize {
		return procID{}, fmt.Errorf("%w: %d bytes", errBadPIDFile, len(b))
	}
	var p procID
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 0; sc.Scan(); n++ {
		key, val, _ := strings.Cut(sc.Text(), " ")
		if n == 0 {
			if key != "cuttle-pid" {
				return procID{}, fmt.Errorf("%w: no cuttle-pid header", errBadPIDFile)
			}
			if v, err := strconv.Atoi(val); err != nil || v != pidFileVersion {
				return procID{}, fmt.Errorf("%w: version %q (this cuttle reads %d)", errBadPIDFile, val, pidFileVersion)
			}
			continue
		}
		if seen[key] {
			return procID{}, fmt.Errorf("%w: %q repeated", errBadPIDFile, key)
		}
		seen[key] = true
		var err error
		switch key {
		case "pid":
			p.PID, err = strconv.Atoi(val)
			if err == nil && p.PID <= 0 {
				err = errors.New("not positive")
			}
		case "start":
			p.Start, err = strconv.ParseUint(val, 10, 64)
		case "boot":
			p.Boot = val
		default:
			// Later versions may add lines; they do not change identity.
		}
		if err != nil {
			return procID{}, fmt.Errorf("%w: %s %q: %w", errBadPIDFile, key, val, err)
		}
	}
	if !seen["pid"] || !seen["start"] {
		return procID{}, fmt.Errorf("%w: want pid and start", errBadPIDFile)
	}
	return p, nil
}

// readPIDFile reads a pid file; a missing one is os.ErrNotExist.
func readPIDFile(path string) (procID, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procID{}, err
	}
	p, err := parsePIDFile(b)
	if err != nil {
		return procID{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// procState is what the process table says about a pid now.
type procState struct {
	// Exists is false when no process has the pid.
	Exists bool
	// Start is the process's start time, as in procID.
	Start uint64
	// Zombie is true once the process's main thread has exited. Its
	// other threads may still be exiting, holding its files and sockets.
	Zombie bool
	// Threads counts the process's threads that have not been released
	// (with a zombie, 1 once all but the main thread are gone). 0 where
	// unknown.
	Threads int
}

// running reports whether the process p names is the one that has its
// pid now and has not exited: the same start time in the same boot.
func running(p procID, now procState, boot string) bool {
	return same(p, now, boot) && !now.Zombie
}

// released reports whether the process p names is gone with everything
// it held: not there, or another process, or a zombie with no thread
// left but the (exited) main one.
func released(p procID, now procState, boot string) bool {
	return !same(p, now, boot) || now.Zombie && now.Threads <= 1
}

func same(p procID, now procState, boot string) bool {
	return now.Exists && now.Start == p.Start && p.Boot == boot
}

// alive reports whether the process recorded in p is running now.
func alive(p procID) bool {
	st, err := lookupProc(p.PID)
	if err != nil {
		return false
	}
	return running(p, st, bootID())
}

// gone reports whether the process recorded in p has exited and let go
// of its files and sockets.
func gone(p procID) bool {
	st, err := lookupProc(p.PID)
	if err != nil {
		return false
	}
	return released(p, st, bootID())
}

// identify returns the identity of the running process pid.
func identify(pid int) (procID, error) {
	st, err := lookupProc(pid)
	if err != nil {
		return procID{}, err
	}
	if !st.Exists {
		return procID{}, fmt.Errorf("launcher: process %d is gone", pid)
	}
	return procID{PID: pid, Start: st.Start, Boot: bootID()}, nil
}
