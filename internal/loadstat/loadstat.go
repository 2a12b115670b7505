// Package loadstat measures how busy an OSD is — its host's CPU and
// memory, from /proc, and its disk, from the store's own busy time (an
// emulated device's, internal/objectstore/devemu) — as the osdmap.Load
// the OSD reports with its PG stats and the monitors publish for clients
// with read_policy score (docs/OSD.md, "Reading from replicas").
//
// The parsing and arithmetic are pure functions with table tests; a
// Sampler holds the previous counters and reads /proc through an fs.FS,
// so tests give it files. It knows nothing of OSDs, maps or the
// network. A Sampler is safe for concurrent use. Start at Sampler.Sample.
package loadstat

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/osdmap"
)

// Step is the percent a Sampler rounds each load to, so that a report
// changes (and the monitors store and publish it) only when a load moved
// that much.
const Step = 10

// cpuTimes are /proc/stat's first line: all the CPU time so far, and the
// idle part of it (idle and iowait), in clock ticks.
type cpuTimes struct{ total, idle uint64 }

// parseCPU reads the "cpu" line of /proc/stat.
func parseCPU(stat []byte) (cpuTimes, error) {
	sc := bufio.NewScanner(bytes.NewReader(stat))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[0] != "cpu" {
			continue
		}
		var t cpuTimes
		for i, s := range f[1:] {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return cpuTimes{}, fmt.Errorf("loadstat: /proc/stat cpu field %d: %w", i+1, err)
			}
			t.total += n
			if i == 3 || i == 4 { // idle, iowait
				t.idle += n
			}
		}
		return t, nil
	}
	return cpuTimes{}, fmt.Errorf("loadstat: /proc/stat has no cpu line")
}

// parseMem returns the percent of memory in use from /proc/meminfo:
// 100 x (1 - MemAvailable / MemTotal).
func parseMem(meminfo []byte) (float64, error) {
	var total, avail uint64
	var haveT, haveA bool
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		n, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			total, haveT = n, true
		case "MemAvailable:":
			avail, haveA = n, true
		}
	}
	if !haveT || !haveA || total == 0 || avail > total {
		return 0, fmt.Errorf("loadstat: /proc/meminfo lacks a usable MemTotal and MemAvailable")
	}
	return 100 * (1 - float64(avail)/float64(total)), nil
}

// cpuBusy is the percent of CPU time not idle between two readings.
func cpuBusy(prev, cur cpuTimes) float64 {
	if cur.total <= prev.total || cur.idle < prev.idle {
		return 0
	}
	dt, di := float64(cur.total-prev.total), float64(cur.idle-prev.idle)
	return 100 * max(0, 1-di/dt)
}

// diskBusy is the percent of elapsed the disk was busy.
func diskBusy(prev, cur, elapsed time.Duration) float64 {
	if elapsed <= 0 || cur <= prev {
		return 0
	}
	return min(100, 100*float64(cur-prev)/float64(elapsed))
}

// round rounds a percent to Step, within [0, 100].
func round(pct float64) uint8 {
	if pct != pct {
		return 0
	}
	return uint8(min(100, max(0, math.Round(pct/Step)*Step)))
}

// Sampler measures loads between its calls.
type Sampler struct {
	proc     fs.FS                // /proc
	diskTime func() time.Duration // the disk's busy time so far; nil: not measured (0)
	now      func() time.Time

	mu      sync.Mutex
	have    bool
	cpu     cpuTimes
	disk    time.Duration
	at      time.Time
	last    osdmap.Load
	lastErr error
}

// New returns a Sampler reading proc (os.DirFS("/proc")), the disk's
// busy time from diskTime (nil: the disk reads as idle) and the time
// from now.
func New(proc fs.FS, diskTime func() time.Duration, now func() time.Time) *Sampler {
	return &Sampler{proc: proc, diskTime: diskTime, now: now}
}

// Sample returns the loads since the previous Sample (the first call
// has no CPU or disk interval yet and reports them idle). What it
// cannot read it reports idle; Err says why.
func (s *Sampler) Sample() osdmap.Load {
	s.mu.Lock()
	defer s.mu.Unlock()
	var l osdmap.Load
	var errs []string
	now := s.now()
	if b, err := fs.ReadFile(s.proc, "meminfo"); err == nil {
		if pct, err := parseMem(b); err == nil {
			l.Memory = round(pct)
		} else {
			errs = append(errs, err.Error())
		}
	} else {
		errs = append(errs, err.Error())
	}
	cpu, cerr := cpuTimes{}, error(nil)
	if b, err := fs.ReadFile(s.proc, "stat"); err == nil {
		cpu, cerr = parseCPU(b)
	} else {
		cerr = err
	}
	if cerr != nil {
		errs = append(errs, cerr.Error())
	}
	var disk time.Duration
	if s.diskTime != nil {
		disk = s.diskTime()
	}
	if s.have {
		if cerr == nil {
			l.CPU = round(cpuBusy(s.cpu, cpu))
		}
		l.Disk = round(diskBusy(s.disk, disk, now.Sub(s.at)))
	}
	s.have, s.cpu, s.disk, s.at, s.last = true, cpu, disk, now, l
	s.lastErr = nil
	if len(errs) > 0 {
		s.lastErr = fmt.Errorf("loadstat: %s", strings.Join(errs, "; "))
	}
	return l
}

// Err returns why the last Sample could not read something, or nil.
func (s *Sampler) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}
