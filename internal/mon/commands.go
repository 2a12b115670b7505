package mon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"go.etcd.io/raft/v3"
)

// Retry pacing of commands: how long one attempt to get a read index or
// to commit a proposal may take before it is retried, and how many
// stale-state refusals (EAGAIN) a write survives.
const (
	attemptTimeout = 3 * time.Second
	maxStaleRetry  = 20
)

// CallerArg is the argument the monitor sets on every command to the
// authenticated entity that sent it, replacing whatever the client put
// there, so services can answer per caller (a daemon fetching its own
// service's rotating keys).
const CallerArg = "_caller"

// handleCommand authorizes and runs a command from a client; id numbers
// it if the client did.
func (m *Monitor) handleCommand(ctx context.Context, from msgr.Peer, cmd moncmd.Command, id commandID) moncmd.Reply {
	if cmd.Args == nil {
		cmd.Args = map[string]string{}
	}
	cmd.Args[CallerArg] = from.Name.String()
	if b, ok := m.builtin(cmd.Prefix); ok {
		if err := m.authorize(from, cmd, false); err != nil {
			return moncmd.Errorf(moncmd.EACCES, "%v", err)
		}
		if err := m.waitRead(ctx); err != nil {
			return moncmd.FromError(err, moncmd.EAGAIN)
		}
		return b(cmd, m.cfg.Clock.Now())
	}
	svc, write := m.route(cmd.Prefix)
	if svc == nil {
		return moncmd.Errorf(moncmd.EINVAL, "unknown command %q", cmd.Prefix)
	}
	if err := m.authorize(from, cmd, write); err != nil {
		return moncmd.Errorf(moncmd.EACCES, "%v", err)
	}
	if lo, ok := svc.(moncmd.LeaderOnly); ok && lo.LeaderOnly(cmd.Prefix) && !m.isLeader() {
		return moncmd.Errorf(moncmd.EAGAIN, "mon.%s not ready for %q: not the leader", m.cfg.Name, cmd.Prefix)
	}
	if !write {
		if err := m.waitRead(ctx); err != nil {
			return moncmd.FromError(err, moncmd.EAGAIN)
		}
		m.svcMu.Lock()
		defer m.svcMu.Unlock()
		return svc.Query(cmd)
	}
	r, err := m.runCommand(ctx, cmd, m.cfg.Clock.Now(), id)
	if err != nil {
		return moncmd.FromError(err, moncmd.EAGAIN)
	}
	return r
}

func (m *Monitor) authorize(from msgr.Peer, cmd moncmd.Command, write bool) error {
	if m.cfg.Authorize == nil || (from.Name.Type == "mon" && m.peers[from.Name.ID] != nil) {
		return nil
	}
	return m.cfg.Authorize(from.Name, from.Caps, cmd, write)
}

// route finds the service owning a command prefix.
func (m *Monitor) route(prefix string) (moncmd.Service, bool) {
	m.svcMu.Lock()
	defer m.svcMu.Unlock()
	for _, s := range m.cfg.Services {
		if ok, write := s.Handles(prefix); ok {
			return s, write
		}
	}
	return nil, false
}

// runCommand prepares a write command on this monitor's applied state,
// proposes it and waits for it to apply, preparing it again when another
// proposal got in first or the proposal seems lost. Every proposal of the
// command carries id, so that at most one of them applies.
func (m *Monitor) runCommand(ctx context.Context, cmd moncmd.Command, now time.Time, id commandID) (moncmd.Reply, error) {
	svc, write := m.route(cmd.Prefix)
	if svc == nil || !write {
		return moncmd.Errorf(moncmd.EINVAL, "%q is not a write command", cmd.Prefix), nil
	}
	for attempt := 0; ; attempt++ {
		if err := m.waitRead(ctx); err != nil {
			return moncmd.Reply{}, err
		}
		m.svcMu.Lock()
		prop, reply := svc.Prepare(cmd, now)
		m.svcMu.Unlock()
		if prop == nil {
			return reply, nil
		}
		reply, err := m.propose(ctx, entry{Service: svc.Name(), Proposal: prop, Origin: m.id, Time: now.UnixNano(), Command: id})
		switch {
		case errors.Is(err, errLost):
			continue
		case err != nil:
			return moncmd.Reply{}, err
		case reply.Code == moncmd.EAGAIN && attempt < maxStaleRetry:
			continue
		}
		return reply, nil
	}
}

// errLost means a proposal did not apply within an attempt (dropped by
// a leader change, or no leader): prepare it again.
var errLost = errors.New("mon: proposal lost")

// propose hands an entry to Raft and waits for its reply from Apply.
func (m *Monitor) propose(ctx context.Context, en entry) (moncmd.Reply, error) {
	ch := make(chan moncmd.Reply, 1)
	m.mu.Lock()
	m.nextReq++
	en.Request = m.nextReq
	m.waiting[en.Request] = ch
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.waiting, en.Request)
		m.mu.Unlock()
	}()
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	p := proposal{data: en.encode(), errc: make(chan error, 1)}
	select {
	case m.proposeIn <- p:
	case <-actx.Done():
		return moncmd.Reply{}, m.attemptErr(ctx)
	case <-m.stop:
		return moncmd.Reply{}, ErrNotReady
	}
	// proposeIn is buffered: the loop may stop before it takes p.
	var err error
	select {
	case err = <-p.errc:
	case <-actx.Done():
		return moncmd.Reply{}, m.attemptErr(ctx)
	case <-m.stop:
		return moncmd.Reply{}, ErrNotReady
	}
	if err != nil {
		if errors.Is(err, raft.ErrProposalDropped) {
			m.pause(actx)
			return moncmd.Reply{}, m.attemptErr(ctx)
		}
		return moncmd.Reply{}, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return moncmd.Reply{}, ErrNotReady
		}
		return r, nil
	case <-actx.Done():
		return moncmd.Reply{}, m.attemptErr(ctx)
	}
}

// attemptErr is errLost while the request's own context lasts.
func (m *Monitor) attemptErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrNotReady, err)
	}
	return errLost
}

// pause waits a little before an attempt is retried (a tick's worth),
// so a monitor without a leader does not spin.
func (m *Monitor) pause(ctx context.Context) {
	t := m.cfg.Clock.NewTimer(2 * m.cfg.TickInterval)
	defer t.Stop()
	select {
	case <-t.C():
	case <-ctx.Done():
	case <-m.stop:
	}
}

// waitRead returns once this monitor has applied everything committed
// when it was called (Raft's ReadIndex), so that a read after a write
// sees it on any monitor.
func (m *Monitor) waitRead(ctx context.Context) error {
	for {
		m.mu.Lock()
		m.nextReq++
		r := &readWait{id: m.nextReq, done: make(chan struct{})}
		m.mu.Unlock()
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		err := m.readOnce(actx, r)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrNotReady, ctx.Err())
		}
		m.pause(ctx)
	}
}

func (m *Monitor) readOnce(ctx context.Context, r *readWait) error {
	select {
	case m.readIn <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-m.stop:
		return ErrNotReady
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-m.stop:
		return ErrNotReady
	}
}

// isLeader reports whether this monitor is the Raft leader.
func (m *Monitor) isLeader() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leader == m.id
}
