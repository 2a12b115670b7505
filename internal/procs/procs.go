// Package procs sizes a daemon's Go scheduler to the work it does.
//
// A Go process runs goroutines on at most GOMAXPROCS threads at once
// (its Ps). When a goroutine makes another runnable while a P is idle,
// the runtime wakes a second thread to run it. An OSD serving small ops
// hands each one from the connection's reader to the dispatcher, to its
// PG and to the connection's writer, so with two Ps nearly every hand-off
// became a futex wake-up and a context switch: on the benchmark machine
// (two vCPUs shared by three OSDs and a client) those were the largest
// costs of 4 KiB reads, and one P per OSD served 20-54% more of them
// (docs/benchmarks/2026-11-27.md, "Session 23": "One P while the ops
// are small"). Large transfers are the other way round: checksums and
// copies of 4 MiB need more than one core at times, and one P cost 4 MiB
// writes 11%.
//
// A Governor samples the daemon's traffic and CPU time and runs it on one
// P while its messages are small and it uses little CPU, and on all of
// them otherwise. Background work that takes a core for tens of
// milliseconds at a time (a store's memtable flushes and compactions)
// holds all the Ps while it runs (Hold, Release): on one P the daemon's
// requests waited behind it, for up to the runtime's 10 ms preemption
// slice at a time. The average message size is a rough measure: an OSD's
// small messages (pings, replica acks) dilute it, so writes up to about
// 100 KiB at size 3 count as small; the CPU bound keeps such work on all
// Ps when it needs them.
package procs

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"
)

// Sample is a daemon's running totals at one moment.
type Sample struct {
	At    time.Time
	Msgs  uint64        // messages received
	Bytes uint64        // bytes they carried, plus the data sent back in replies
	CPU   time.Duration // CPU time the process has used, user and system
}

// Policy decides when one P is enough.
type Policy struct {
	// SmallBytes is the average bytes per message under which the
	// work is small.
	SmallBytes uint64
	// MinRate is the message rate (per second) under which a window
	// says nothing: an idle daemon keeps the Ps it has.
	MinRate float64
	// LowCPU and HighCPU, in cores: with all Ps the daemon drops to one
	// only while it uses less than LowCPU; with one it goes back to all
	// once it uses more than HighCPU.
	LowCPU, HighCPU float64
	// DownWindows is how many windows in a row must call for one P
	// before the Governor drops to it; one window is enough to go back
	// to all, since large work on one P loses more than small work on
	// all of them does.
	DownWindows int
}

// DefaultPolicy is the policy OSDs run with: messages under 64 KiB on
// average are small, and with Run's quarter-second windows the governor
// drops to one P after a second of small work and goes back within a
// quarter of a second of large work. Small work drops to one P under 0.8
// of a core and goes back to all over 0.95: below a full core one P is
// not what holds the OSD back. (At 0.5 and 0.8, OSDs under replicated
// 4 KiB writes on the two-vCPU benchmark machine used about half a core
// each and some stayed on all Ps, at 20% more CPU per write.)
func DefaultPolicy() Policy {
	return Policy{SmallBytes: 64 << 10, MinRate: 200, LowCPU: 0.8, HighCPU: 0.95, DownWindows: 4}
}

// ClientPolicy is for a client process that drives small operations,
// such as cuttle bench: a client waits on one reply per op in flight
// and does little else, so it may use most of a core before it needs a
// second P. It goes to one P under 0.9 of a core and back to all of them
// over 0.95: a client that one P holds back runs at one full core.
func ClientPolicy() Policy {
	return Policy{SmallBytes: 64 << 10, MinRate: 200, LowCPU: 0.9, HighCPU: 0.95, DownWindows: 4}
}

// Governor switches a process between one P and all of them. Step is
// deterministic; Run drives it from a ticker. Hold and Release are safe
// for concurrent use, with each other and with Run.
type Governor struct {
	policy Policy
	one    bool   // the policy calls for one P
	votes  int    // windows in a row that called for one P
	last   Sample // the start of the current window; zero before the first

	// setOne sets GOMAXPROCS to one (true) or the runtime's default.
	setOne func(one bool)

	mu      sync.Mutex
	running bool // Run is setting GOMAXPROCS
	onOne   bool // GOMAXPROCS is 1, as setOne last made it
	held    int  // Holds not yet released
}

// New returns a governor that starts on all Ps.
func New(p Policy) *Governor { return &Governor{policy: p, setOne: setGOMAXPROCS} }

func setGOMAXPROCS(one bool) {
	if one {
		runtime.GOMAXPROCS(1)
	} else {
		runtime.SetDefaultGOMAXPROCS()
	}
}

// Hold runs the process on all its Ps, whatever the policy says, until
// the matching Release; Holds nest. The store calls it as a flush or a
// compaction starts, so that the work gets a P of its own and the
// requests keep theirs.
func (g *Governor) Hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held++
	g.applyLocked()
}

// Release ends a Hold. A Release without a Hold does nothing: the
// calls come from a library's event hooks, and a miscount there must
// not take a daemon down.
func (g *Governor) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held > 0 {
		g.held--
	}
	g.applyLocked()
}

// applyLocked makes GOMAXPROCS what the policy and the holds call for
// while Run runs, and the runtime's default otherwise. It reports
// whether it changed it.
func (g *Governor) applyLocked() bool {
	one := g.running && g.one && g.held == 0
	if one == g.onOne {
		return false
	}
	g.setOne(one)
	g.onOne = one
	return true
}

// observe ends a window with s, as Step, and applies the decision. It
// reports whether GOMAXPROCS changed.
func (g *Governor) observe(s Sample) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.Step(s)
	return g.applyLocked()
}

// setRunning marks Run started or stopped and applies what that means.
func (g *Governor) setRunning(running bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running = running
	g.applyLocked()
}

// Step ends the window that began at the previous sample with s and
// reports whether the policy now calls for one P (a Hold may keep all of
// them). It is not safe for concurrent use with Run.
func (g *Governor) Step(s Sample) (one bool) {
	a := g.last
	g.last = s
	if a.At.IsZero() {
		return g.one
	}
	secs := s.At.Sub(a.At).Seconds()
	// A window whose totals went backwards (a counter restarted, or the
	// CPU time could not be read) says nothing.
	if secs <= 0 || s.Msgs <= a.Msgs || s.Bytes < a.Bytes || s.CPU < a.CPU {
		g.votes = 0
		return g.one
	}
	msgs := s.Msgs - a.Msgs
	if float64(msgs)/secs < g.policy.MinRate {
		g.votes = 0
		return g.one
	}
	small := (s.Bytes-a.Bytes)/msgs < g.policy.SmallBytes
	cores := (s.CPU - a.CPU).Seconds() / secs
	switch {
	case g.one && (!small || cores > g.policy.HighCPU):
		g.one, g.votes = false, 0
	case !g.one && small && cores < g.policy.LowCPU:
		if g.votes++; g.votes >= g.policy.DownWindows {
			g.one, g.votes = true, 0
		}
	case !g.one:
		g.votes = 0
	}
	return g.one
}

// Enabled reports whether a governor may change GOMAXPROCS here: not if
// the operator set GOMAXPROCS, nor with a single P to begin with, nor
// where the process's CPU time cannot be read.
func Enabled() bool {
	_, set := os.LookupEnv("GOMAXPROCS")
	return cpuTimeSupported && !set && runtime.GOMAXPROCS(0) > 1
}

// Run samples traffic (the daemon's message and byte totals) and the
// process's CPU time every interval and sets GOMAXPROCS as the governor
// decides, until ctx is done; then it gives the runtime back its
// default. Where Enabled is false it returns at once: setting the
// default back would override the operator's GOMAXPROCS.
func (g *Governor) Run(ctx context.Context, interval time.Duration, traffic func() (msgs, bytes uint64), log *slog.Logger) {
	if !Enabled() {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	g.setRunning(true)
	defer runtime.SetDefaultGOMAXPROCS()
	defer g.setRunning(false)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			msgs, bytes := traffic()
			if g.observe(Sample{At: time.Now(), Msgs: msgs, Bytes: bytes, CPU: cpuTime()}) {
				log.Debug("scheduler resized", "gomaxprocs", runtime.GOMAXPROCS(0))
			}
		}
	}
}
