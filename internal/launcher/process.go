package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// child is a daemon this launcher started and has not yet let go of.
type child struct {
	d  Daemon
	id procID
	// exited is closed once the process has ended and been reaped (the
	// launcher reaps its children so that none is left a zombie); err is
	// then Wait's result.
	exited chan struct{}
	err    error
}

// pidPath is where the pid file of d is kept.
func pidPath(dir string, d Daemon) string {
	return filepath.Join(dir, "run", d.Name()+".pid")
}

// start starts d in a session of its own (so it outlives the launcher
// and its terminal's signals), with standard input from /dev/null and
// standard output and error appended to its log file, and records its pid
// file.
func (l *Launcher) start(c *Cluster, d Daemon) (*child, error) {
	if err := os.MkdirAll(filepath.Dir(d.Log), 0o755); err != nil {
		return nil, fmt.Errorf("launcher: %s: %w", d.Name(), err)
	}
	logf, err := os.OpenFile(d.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("launcher: %s: %w", d.Name(), err)
	}
	defer logf.Close() // the child has its own descriptor
	fmt.Fprintf(logf, "--- cuttle cluster up: starting %s at %s\n", d.Name(), time.Now().Format(time.RFC3339))
	cmd := exec.Command(l.cfg.Exe, d.Args...)
	cmd.Env = l.cfg.Env
	cmd.Dir = c.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("launcher: start %s: %w", d.Name(), err)
	}
	// Until Wait below, the process cannot vanish from the process
	// table: at worst it is a zombie, which still has its start time.
	id, err := identify(cmd.Process.Pid)
	if err == nil {
		err = writeFileAtomic(pidPath(c.Dir, d), id.marshal(), 0o644)
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("launcher: %s: %w", d.Name(), err)
	}
	ch := &child{d: d, id: id, exited: make(chan struct{})}
	go func() {
		ch.err = cmd.Wait()
		close(ch.exited)
	}()
	l.log.Info("started daemon", "daemon", d.Name(), "pid", id.PID, "addr", d.Addr, "log", d.Log)
	return ch, nil
}

// stopResult says how a daemon was stopped.
type stopResult int

const (
	notRunning stopResult = iota // it was not running
	terminated                   // it exited after SIGTERM
	killed                       // it did not, and was killed with SIGKILL
)

// stop ends the process p if it is still the one recorded: SIGTERM, then
// SIGKILL if it has not exited after timeout. It returns once the process
// is gone.
func (l *Launcher) stop(ctx context.Context, p procID, timeout time.Duration) (stopResult, error) {
	// On Linux, FindProcess holds a pidfd: the signals below reach this
	// process or none, even if the pid is reused after the check.
	proc, err := os.FindProcess(p.PID)
	if err != nil {
		return notRunning, nil
	}
	defer proc.Release()
	if !alive(p) {
		l.waitGone(ctx, p, killWait) // it may be exiting still
		return notRunning, nil
	}
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		if errors.Is(err, os.ErrProcessDone) {
			return notRunning, nil
		}
		return notRunning, fmt.Errorf("launcher: SIGTERM pid %d: %w", p.PID, err)
	}
	if l.waitGone(ctx, p, timeout) {
		return terminated, nil
	}
	if err := proc.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return notRunning, fmt.Errorf("launcher: SIGKILL pid %d: %w", p.PID, err)
	}
	if l.waitGone(ctx, p, killWait) {
		return killed, nil
	}
	return killed, fmt.Errorf("launcher: pid %d still running %v after SIGKILL", p.PID, killWait)
}

// killWait bounds the wait for a process to vanish after SIGKILL.
const killWait = 10 * time.Second

// waitGone polls until p is gone with all it held, ctx ends or timeout
// passes, and reports whether p is gone.
func (l *Launcher) waitGone(ctx context.Context, p procID, timeout time.Duration) bool {
	return l.poll(ctx, timeout, func() bool { return gone(p) })
}

// poll checks cond every PollInterval until it holds, ctx ends or timeout
// passes, and reports whether it held.
func (l *Launcher) poll(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	tick := time.NewTicker(l.cfg.PollInterval)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return cond()
		case <-t.C:
			return cond()
		case <-tick.C:
		}
	}
}

// lockDir takes an exclusive lock on DIR/run/lock, waiting (until ctx
// ends) for another launcher to finish, and returns its release.
func (l *Launcher) lockDir(ctx context.Context, dir string) (func(), error) {
	path := filepath.Join(dir, "run", "lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("launcher: lock: %w", err)
	}
	tick := time.NewTicker(l.cfg.PollInterval)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("launcher: lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("launcher: %s is locked by another cuttle cluster command: %w", dir, ctx.Err())
		case <-tick.C:
		}
	}
}
