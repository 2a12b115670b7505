package launcher

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// lookupProc reads /proc/PID/stat.
func lookupProc(pid int) (procState, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return procState{}, nil
	}
	if err != nil {
		return procState{}, fmt.Errorf("launcher: %w", err)
	}
	return parseStat(b)
}

// parseStat decodes the state and start time of /proc/PID/stat: "PID
// (COMM) STATE PPID ... STARTTIME ...", where COMM may hold spaces and
// parentheses, so fields are counted after the last ')'.
func parseStat(b []byte) (procState, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procState{}, errors.New("launcher: /proc stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); num_threads is field 20, starttime 22.
	const threadsField, startField = 20 - 3, 22 - 3
	if len(f) <= startField {
		return procState{}, fmt.Errorf("launcher: /proc stat: %d fields", len(f)+2)
	}
	start, err := strconv.ParseUint(f[startField], 10, 64)
	if err != nil {
		return procState{}, fmt.Errorf("launcher: /proc stat: starttime: %w", err)
	}
	threads, err := strconv.Atoi(f[threadsField])
	if err != nil {
		return procState{}, fmt.Errorf("launcher: /proc stat: num_threads: %w", err)
	}
	return procState{Exists: true, Start: start, Zombie: f[0] == "Z" || f[0] == "X", Threads: threads}, nil
}

// bootID is the kernel's id of this boot, or "" if it cannot be read.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
