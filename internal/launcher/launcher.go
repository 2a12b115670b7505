package launcher

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Config wires a Launcher to the binary it starts and to the code that
// knows the daemons.
type Config struct {
	// Exe is the cuttle binary that daemons run as (usually
	// os.Executable()). Required.
	Exe string
	// Env is the daemons' environment (nil: the launcher's own).
	Env []string
	// Create makes d's data directory when the cluster is made. It is
	// called once per daemon, in order: for the monitors before anything
	// runs (`cuttle mon mkfs`, which also writes c.Conf and c.Keyring),
	// for every other daemon once the monitors are up and Setup has run
	// (an OSD asks them for its id and key). Required.
	Create func(ctx context.Context, c *Cluster, d Daemon) error
	// Setup, if set, is called once when a new cluster's monitors are
	// up, before its other daemons are created: the cluster's initial
	// settings (the command tree makes a CRUSH rule and a pool).
	Setup func(ctx context.Context, c *Cluster) error
	// Prepare, if set, is called by every Up of a cluster with front
	// ends (the S3 gateway, the NBD server) once its other daemons are
	// up, before the front ends start: what they need from a running
	// cluster (the gateway's user, the exported image). It must do nothing when that is there already.
	Prepare func(ctx context.Context, c *Cluster) error
	// Probe asks the cluster, through c.Conf, whether it answers and is
	// healthy, and returns nil if so or an error saying what is missing.
	// Up calls it until it returns nil. Required.
	Probe func(ctx context.Context, c *Cluster) error
	// Events are called as Up makes progress; nil fields are skipped.
	Events Events
	// Logger receives diagnostics (default: discarded).
	Logger *slog.Logger
	// Free reports whether a port may be used (default PortFree).
	Free func(hostport string) bool
	// StopTimeout is how long Down waits after SIGTERM before SIGKILL
	// (default 10 s).
	StopTimeout time.Duration
	// PollInterval paces Up's health probes and Down's checks that a
	// process is gone (default 100 ms).
	PollInterval time.Duration
	// ProbeTimeout bounds one call of Probe (default 5 s).
	ProbeTimeout time.Duration
}

// Events are callbacks for progress of Up, for people watching and for
// tests. They are called on Up's goroutine.
type Events struct {
	// Created is called after a daemon's data directory is made.
	Created func(d Daemon)
	// Started is called after a daemon's process is started.
	Started func(d Daemon, pid int)
	// Waiting is called once daemons run, before Up waits up to
	// timeout for them (and the cluster) to become healthy: for a new
	// cluster first with its monitors alone, then with every daemon.
	Waiting func(daemons []Daemon, timeout time.Duration)
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Free == nil {
		c.Free = PortFree
	}
	if c.StopTimeout == 0 {
		c.StopTimeout = 10 * time.Second
	}
	if c.PollInterval == 0 {
		c.PollInterval = 100 * time.Millisecond
	}
	if c.ProbeTimeout == 0 {
		c.ProbeTimeout = 5 * time.Second
	}
	return c
}

func (c Config) validate() error {
	if c.Exe == "" || c.Create == nil || c.Probe == nil {
		return errors.New("launcher: Config needs Exe, Create and Probe")
	}
	return nil
}

// Launcher creates, starts, stops and lists local clusters.
type Launcher struct {
	cfg Config
	log *slog.Logger
}

// New returns a Launcher.
func New(cfg Config) (*Launcher, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Launcher{cfg: cfg, log: cfg.Logger.WithGroup("launcher")}, nil
}

// State is a daemon's process state.
type State string

// States of a daemon.
const (
	Running State = "running"
	Stopped State = "stopped"
)

// Status is one daemon and its process.
type Status struct {
	Daemon
	Name string `json:"name"`
	// PID is the daemon's process while it runs, else 0.
	PID   int   `json:"pid"`
	State State `json:"state"`
}

// UpOptions are Options plus how long Up waits for health.
type UpOptions struct {
	Options
	// Wait bounds the wait for a healthy cluster (default 60 s).
	Wait time.Duration
}

// Up makes sure the cluster in o.Dir runs: it creates the cluster if the
// directory holds none (the directory must then be missing or empty),
// starts every daemon that is not running, and waits until Probe reports
// the cluster healthy, at most o.Wait. Daemons already running are left
// alone. It returns the cluster's record and its daemons' states.
func (l *Launcher) Up(ctx context.Context, o UpOptions) (*Cluster, []Status, error) {
	if o.Wait == 0 {
		o.Wait = 60 * time.Second
	}
	if o.Dir == "" {
		return nil, nil, errors.New("launcher: no directory")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("launcher: %w", err)
	}
	o.Dir = dir
	// Options that cannot make a cluster are refused before the
	// directory is touched.
	if err := o.Options.withDefaults().validate(); err != nil {
		return nil, nil, err
	}
	_, statErr := os.Stat(dir)
	existed := statErr == nil
	if err := os.MkdirAll(filepath.Join(dir, "run"), 0o700); err != nil {
		return nil, nil, fmt.Errorf("launcher: %w", err)
	}
	unlock, err := l.lockDir(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()

	var children []*child // the daemons started by this Up
	c, err := loadRecord(dir)
	switch {
	case err == nil:
		if err := checkCounts(c, o.Options); err != nil {
			return nil, nil, err
		}
	case errors.Is(err, ErrNoCluster):
		c, err = l.create(ctx, o.Options, existed)
		if err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, err
	}
	if len(c.Pending) > 0 {
		children, err = l.finishCreate(ctx, c, o.Wait)
		if err != nil {
			return c, l.statuses(c), err
		}
	}

	// The daemons of the cluster itself first; front ends, which serve
	// clients on top of it, once it is up and prepared for them.
	core, fronts := c.split()
	for _, part := range []*Cluster{core, fronts} {
		if len(part.Daemons) == 0 {
			continue
		}
		if part == fronts && l.cfg.Prepare != nil {
			if err := l.cfg.Prepare(ctx, c); err != nil {
				return c, l.statuses(c), fmt.Errorf("launcher: prepare for %s: %w (cuttle cluster up tries again)", names(fronts.Daemons), err)
			}
		}
		started, err := l.startStopped(ctx, part)
		children = append(children, started...)
		if err != nil {
			return nil, nil, err
		}
		if f := l.cfg.Events.Waiting; f != nil {
			f(part.Daemons, o.Wait)
		}
		// The probe sees what has been started so far.
		seen := core
		if part == fronts {
			seen = c
		}
		if err := l.waitHealthy(ctx, seen, children, o.Wait); err != nil {
			return c, l.statuses(c), err
		}
	}
	return c, l.statuses(c), nil
}

// names joins daemons' names with commas.
func names(ds []Daemon) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.Name()
	}
	return strings.Join(s, ", ")
}

// checkCounts refuses options that ask an existing cluster for another
// number of monitors or OSDs than it has.
func checkCounts(c *Cluster, o Options) error {
	if o.Mons != 0 && o.Mons != len(c.Mons()) {
		return fmt.Errorf("launcher: %s holds a cluster of %d monitor(s), not %d (remove it to start afresh)", c.Dir, len(c.Mons()), o.Mons)
	}
	osds := o.OSDs
	if osds == NoOSDs {
		osds = 0
	}
	if o.OSDs != 0 && osds != len(c.OSDs()) {
		return fmt.Errorf("launcher: %s holds a cluster of %d OSD(s), not %d (remove it to start afresh)", c.Dir, len(c.OSDs()), osds)
	}
	return nil
}

// startStopped starts every daemon of c that is not running, in order,
// and returns those it started.
func (l *Launcher) startStopped(ctx context.Context, c *Cluster) ([]*child, error) {
	var children []*child
	for _, d := range c.Daemons {
		if p, err := readPIDFile(pidPath(c.Dir, d)); err == nil && alive(p) {
			l.log.Info("daemon already running", "daemon", d.Name(), "pid", p.PID)
			continue
		}
		// A daemon that was just killed may still hold its ports while
		// its threads exit: give them a moment.
		for _, a := range []string{d.Addr, d.MetricsAddr} {
			if a != "" && !l.poll(ctx, portWait, func() bool { return l.cfg.Free(a) }) {
				return children, fmt.Errorf("launcher: cannot start %s: %s is in use by %s", d.Name(), a, portUser(a, c.Dir))
			}
		}
		ch, err := l.start(c, d)
		if err != nil {
			return children, err
		}
		children = append(children, ch)
		if f := l.cfg.Events.Started; f != nil {
			f(d, ch.id.PID)
		}
	}
	return children, nil
}

// portWait bounds the wait for a daemon's port to be free before Up
// starts it.
const portWait = 3 * time.Second

// create plans a new cluster in o.Dir and makes what needs nothing
// running: the monitors' data directories. It saves the record last, so
// that a directory with a record holds a cluster whose monitors can
// start; the rest of the creation is the record's Pending steps. If it
// fails in a directory it created, it removes the directory again.
func (l *Launcher) create(ctx context.Context, o Options, existed bool) (c *Cluster, err error) {
	entries, err := os.ReadDir(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("launcher: %w", err)
	}
	for _, e := range entries {
		if e.Name() != "run" {
			return nil, fmt.Errorf("launcher: %s is not empty and holds no cluster (no %s); remove it or choose another --dir", o.Dir, recordFile)
		}
	}
	defer func() {
		if err != nil {
			if existed {
				err = fmt.Errorf("%w (remove what it left in %s before trying again)", err, o.Dir)
			} else {
				_ = os.RemoveAll(o.Dir)
			}
		}
	}()
	c, err = Plan(o, newUUID(), l.cfg.Free)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "log"), 0o755); err != nil {
		return nil, fmt.Errorf("launcher: %w", err)
	}
	for _, d := range c.Mons() {
		if err := l.createDaemon(ctx, c, d); err != nil {
			return nil, err
		}
	}
	if err := saveRecord(c); err != nil {
		return nil, err
	}
	return c, nil
}

// finishCreate does the record's Pending steps: it starts the monitors
// that are not running, waits until they are up, and runs Setup and
// Create for the other daemons, saving the record after each step. It
// returns the monitors it started.
func (l *Launcher) finishCreate(ctx context.Context, c *Cluster, wait time.Duration) ([]*child, error) {
	mons := c.only(KindMon)
	children, err := l.startStopped(ctx, mons)
	if err != nil {
		return children, err
	}
	if f := l.cfg.Events.Waiting; f != nil {
		f(mons.Daemons, wait)
	}
	if err := l.waitHealthy(ctx, mons, children, wait); err != nil {
		return children, err
	}
	for len(c.Pending) > 0 {
		step := c.Pending[0]
		if step == setupStep {
			if l.cfg.Setup != nil {
				if err := l.cfg.Setup(ctx, c); err != nil {
					return children, fmt.Errorf("launcher: set up the cluster: %w (cuttle cluster up tries again)", err)
				}
			}
		} else {
			i := slices.IndexFunc(c.Daemons, func(d Daemon) bool { return d.Name() == step })
			if i < 0 {
				return children, fmt.Errorf("launcher: %s: pending step %q names no daemon", filepath.Join(c.Dir, recordFile), step)
			}
			if err := l.createDaemon(ctx, c, c.Daemons[i]); err != nil {
				return children, fmt.Errorf("%w (cuttle cluster up tries again)", err)
			}
		}
		c.Pending = c.Pending[1:]
		if err := saveRecord(c); err != nil {
			return children, err
		}
	}
	return children, nil
}

// createDaemon calls Create for d.
func (l *Launcher) createDaemon(ctx context.Context, c *Cluster, d Daemon) error {
	if err := l.cfg.Create(ctx, c, d); err != nil {
		return fmt.Errorf("launcher: create %s: %w", d.Name(), err)
	}
	l.log.Info("created daemon", "daemon", d.Name(), "data", d.Data)
	if f := l.cfg.Events.Created; f != nil {
		f(d)
	}
	return nil
}

// waitHealthy probes the cluster until it is healthy, a daemon started
// here exits, or wait passes.
func (l *Launcher) waitHealthy(ctx context.Context, c *Cluster, children []*child, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(l.cfg.PollInterval)
	defer tick.Stop()
	for {
		for _, ch := range children {
			select {
			case <-ch.exited:
				return fmt.Errorf("launcher: %s exited (%v) before the cluster became healthy; the end of %s:\n%s",
					ch.d.Name(), ch.err, ch.d.Log, tail(ch.d.Log, 10))
			default:
			}
		}
		pctx, pcancel := context.WithTimeout(ctx, l.cfg.ProbeTimeout)
		err := l.cfg.Probe(pctx, c)
		pcancel()
		if err == nil {
			return nil
		}
		l.log.Debug("cluster not ready", "err", err)
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return fmt.Errorf("launcher: interrupted while waiting for the cluster (the daemons keep running; cuttle cluster status shows them): %w", ctx.Err())
			}
			return fmt.Errorf("launcher: the cluster is not healthy after %v: %w (daemons' logs are in %s)",
				wait, err, filepath.Join(c.Dir, "log"))
		case <-tick.C:
		}
	}
}

// tail returns the last n lines of a file, or a note that it cannot be
// read.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Status returns the record of the cluster in dir and the state of each
// daemon.
func (l *Launcher) Status(dir string) (*Cluster, []Status, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("launcher: %w", err)
	}
	c, err := loadRecord(dir)
	if err != nil {
		return nil, nil, err
	}
	return c, l.statuses(c), nil
}

func (l *Launcher) statuses(c *Cluster) []Status {
	out := make([]Status, 0, len(c.Daemons))
	for _, d := range c.Daemons {
		s := Status{Daemon: d, Name: d.Name(), State: Stopped}
		if p, err := readPIDFile(pidPath(c.Dir, d)); err == nil && alive(p) {
			s.PID, s.State = p.PID, Running
		}
		out = append(out, s)
	}
	return out
}

// Stop is what Down did to one daemon.
type Stop struct {
	Name string `json:"name"`
	// PID is the process that was stopped (0 if none ran).
	PID int `json:"pid"`
	// Result is "stopped" (it exited after SIGTERM), "killed" (after
	// SIGKILL) or "not running".
	Result string `json:"result"`
}

// Down stops the daemons of the cluster in dir that this launcher
// started and that still run: SIGTERM, then SIGKILL for those still
// running after StopTimeout. Daemons other than monitors stop first, then
// the monitors. Pid files are removed. A process whose pid was reused is
// left alone.
func (l *Launcher) Down(ctx context.Context, dir string) ([]Stop, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("launcher: %w", err)
	}
	c, err := loadRecord(dir)
	if err != nil {
		return nil, err
	}
	unlock, err := l.lockDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	results := make(map[string]Stop, len(c.Daemons))
	var errs []error
	for _, tier := range stopTiers(c.Daemons) {
		type done struct {
			s   Stop
			err error
		}
		ch := make(chan done, len(tier))
		for _, d := range tier {
			go func() {
				s := Stop{Name: d.Name(), Result: "not running"}
				p, err := readPIDFile(pidPath(dir, d))
				if errors.Is(err, os.ErrNotExist) {
					ch <- done{s: s}
					return
				}
				if err != nil {
					ch <- done{s: s, err: err}
					return
				}
				r, err := l.stop(ctx, p, l.cfg.StopTimeout)
				switch r {
				case terminated:
					s.PID, s.Result = p.PID, "stopped"
				case killed:
					s.PID, s.Result = p.PID, "killed"
				}
				if err == nil {
					err = os.Remove(pidPath(dir, d))
				}
				l.log.Info("stopped daemon", "daemon", d.Name(), "pid", p.PID, "result", s.Result, "err", err)
				ch <- done{s: s, err: err}
			}()
		}
		for range tier {
			r := <-ch
			results[r.s.Name] = r.s
			if r.err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.s.Name, r.err))
			}
		}
	}
	out := make([]Stop, 0, len(c.Daemons))
	for _, d := range c.Daemons {
		out = append(out, results[d.Name()])
	}
	return out, errors.Join(errs...)
}

// stopTiers orders daemons for stopping: MDS daemons and front ends
// first (MDSs flush their journals to the OSDs as they go, the gateway
// and the NBD server finish the requests they are serving), then every other kind but
// monitors (they may still report to the monitors as they go), then the
// monitors.
func stopTiers(ds []Daemon) [][]Daemon {
	var fronts, others, mons []Daemon
	for _, d := range ds {
		switch d.Kind {
		case KindMon:
			mons = append(mons, d)
		case KindMDS, KindS3, KindNBD:
			fronts = append(fronts, d)
		default:
			others = append(others, d)
		}
	}
	return slices.DeleteFunc([][]Daemon{fronts, others, mons}, func(t []Daemon) bool { return len(t) == 0 })
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
