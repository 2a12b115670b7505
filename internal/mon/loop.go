package mon

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

type raftMsg struct{ m *pb.Message }

// proposal is an entry for the loop to propose; errc gets Propose's
// result (not the entry's outcome, which arrives through waiting).
type proposal struct {
	data []byte
	errc chan error
}

// readWait is a request for a read index; done is closed once the
// monitor has applied through it.
type readWait struct {
	id    uint64
	index uint64
	done  chan struct{}
}

// loopState is what only the loop goroutine touches.
type loopState struct {
	rn         *raft.RawNode
	reads      map[uint64]*readWait // asked, no index yet
	readsReady []*readWait          // index known, waiting for apply
	sendFailed chan sendResult
}

type sendResult struct {
	to   uint64
	snap bool
	ok   bool
}

// loop owns the RawNode: it ticks it, steps messages into it, proposes,
// asks for read indexes, and handles every Ready.
func (m *Monitor) loop(ctx context.Context, rn *raft.RawNode) error {
	ls := &loopState{rn: rn, reads: make(map[uint64]*readWait), sendFailed: m.sendResults}
	tick := m.cfg.Clock.NewTimer(m.cfg.TickInterval)
	defer tick.Stop()
	svcTick := m.cfg.Clock.Now()
	for {
		// Ready first: a lone voter's campaign (newRawNode) completes
		// before anything else arrives.
		for rn.HasReady() {
			rd := rn.Ready()
			if rd.SoftState != nil {
				// Raft drops read-index requests across a leader
				// change; their waiters retry.
				clear(ls.reads)
			}
			if err := m.handleReady(ls, rd); err != nil {
				m.log.Error("monitor stops: store failure", "err", err)
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-m.stop:
			return nil
		case <-tick.C():
			rn.Tick()
			tick.Reset(m.cfg.TickInterval)
			if now := m.cfg.Clock.Now(); now.Sub(svcTick) >= time.Second {
				svcTick = now
				m.serviceTicks(ctx, rn, now)
			}
		case in := <-m.raftIn:
			if err := rn.Step(in.m); err != nil {
				m.log.Debug("raft step", "err", err)
			}
		case p := <-m.proposeIn:
			p.errc <- rn.Propose(p.data)
		case r := <-m.readIn:
			ls.reads[r.id] = r
			rn.ReadIndex(binary.BigEndian.AppendUint64(nil, r.id))
		case res := <-ls.sendFailed:
			if res.snap {
				status := raft.SnapshotFailure
				if res.ok {
					status = raft.SnapshotFinish
				}
				rn.ReportSnapshot(res.to, status)
			} else if !res.ok {
				rn.ReportUnreachable(res.to)
			}
		}
	}
}

// handleReady persists, sends, applies and advances one Ready.
func (m *Monitor) handleReady(ls *loopState, rd raft.Ready) error {
	if rd.SoftState != nil {
		m.mu.Lock()
		if m.leader != rd.SoftState.Lead {
			m.log.Info("leader changed", "leader", rd.SoftState.Lead, "state", rd.SoftState.RaftState.String())
		}
		m.leader = rd.SoftState.Lead
		m.mu.Unlock()
		isLeader := 0.0
		if rd.SoftState.Lead == m.id {
			isLeader = 1
		}
		m.metrics.leader.Set(isLeader)
	}
	if rd.HardState != nil {
		m.mu.Lock()
		m.term = rd.HardState.GetTerm()
		m.mu.Unlock()
		m.metrics.term.Set(float64(rd.HardState.GetTerm()))
	}
	if err := m.st.Append(rd.HardState, rd.Entries, rd.Snapshot); err != nil {
		return fmt.Errorf("persist raft state: %w", err)
	}
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := m.installed(rd.Snapshot.GetMetadata().GetIndex()); err != nil {
			return err
		}
	}
	m.send(rd.Messages)
	for _, rs := range rd.ReadStates {
		if len(rs.RequestCtx) != 8 {
			continue
		}
		if r, ok := ls.reads[binary.BigEndian.Uint64(rs.RequestCtx)]; ok {
			delete(ls.reads, r.id)
			r.index = rs.Index
			ls.readsReady = append(ls.readsReady, r)
		}
	}
	if len(rd.CommittedEntries) > 0 {
		if err := m.apply(ls.rn, rd.CommittedEntries); err != nil {
			return err
		}
	}
	m.releaseReads(ls)
	ls.rn.Advance(rd)
	return m.maybeCompact()
}

// installed reloads every service after a snapshot replaced the store's
// contents.
func (m *Monitor) installed(index uint64) error {
	m.log.Info("installed a snapshot from the leader", "index", index)
	if err := m.loadServices(); err != nil {
		return err
	}
	m.setApplied(index)
	m.notifySubscribers()
	return nil
}

func (m *Monitor) setApplied(index uint64) {
	m.metrics.applied.Set(float64(index))
	m.mu.Lock()
	m.applied = index
	close(m.appliedCh)
	m.appliedCh = make(chan struct{})
	m.mu.Unlock()
}

func (m *Monitor) releaseReads(ls *loopState) {
	m.mu.Lock()
	applied := m.applied
	m.mu.Unlock()
	keep := ls.readsReady[:0]
	for _, r := range ls.readsReady {
		if r.index <= applied {
			close(r.done)
		} else {
			keep = append(keep, r)
		}
	}
	ls.readsReady = keep
}

// apply applies committed entries in one store batch and hands the
// replies to the requests waiting on this monitor.
func (m *Monitor) apply(rn *raft.RawNode, ents []*pb.Entry) error {
	b := m.st.NewBatch()
	defer b.Close()
	type result struct {
		req   uint64
		reply moncmd.Reply
	}
	var results []result
	changed := map[string]bool{}
	m.svcMu.Lock()
	for _, e := range ents {
		switch e.GetType() {
		case pb.EntryConfChange:
			var cc pb.ConfChange
			if err := proto.Unmarshal(e.GetData(), &cc); err != nil {
				m.svcMu.Unlock()
				return fmt.Errorf("entry %d: conf change: %w", e.GetIndex(), err)
			}
			b.SetConfState(rn.ApplyConfChange(&cc))
		case pb.EntryConfChangeV2:
			var cc pb.ConfChangeV2
			if err := proto.Unmarshal(e.GetData(), &cc); err != nil {
				m.svcMu.Unlock()
				return fmt.Errorf("entry %d: conf change: %w", e.GetIndex(), err)
			}
			b.SetConfState(rn.ApplyConfChange(&cc))
		case pb.EntryNormal:
			if len(e.GetData()) == 0 {
				continue // a new leader's empty entry
			}
			reply, err := m.applyEntry(b, e)
			if err != nil {
				m.svcMu.Unlock()
				return fmt.Errorf("entry %d: %w", e.GetIndex(), err)
			}
			if reply.req != 0 {
				results = append(results, result{reply.req, reply.reply})
			}
			changed[reply.service] = true
			if e.GetIndex()%expireEvery == 0 && reply.at != 0 {
				if err := m.cmds.expire(b, reply.at-int64(commandMemory)); err != nil {
					m.svcMu.Unlock()
					return fmt.Errorf("entry %d: command log: %w", e.GetIndex(), err)
				}
			}
		}
	}
	m.svcMu.Unlock()
	last := ents[len(ents)-1].GetIndex()
	if err := m.st.Commit(last, b); err != nil {
		return fmt.Errorf("commit through %d: %w", last, err)
	}
	m.setApplied(last)
	m.mu.Lock()
	for _, r := range results {
		if ch, ok := m.waiting[r.req]; ok {
			ch <- r.reply
			delete(m.waiting, r.req)
		}
	}
	m.mu.Unlock()
	if changed[osdmapService] {
		m.notifySubscribers()
	}
	return nil
}

type applied struct {
	service string
	req     uint64
	reply   moncmd.Reply
	at      int64 // the entry's time (Unix ns)
}

// applyEntry decodes one proposal and applies it through its service.
// An entry that does not decode or names no service is skipped with an
// error log on every monitor alike, never applied in part.
func (m *Monitor) applyEntry(b *monstore.Batch, e *pb.Entry) (applied, error) {
	en, err := decodeEntry(e.GetData())
	if err != nil {
		m.log.Error("skipping an undecodable entry", "index", e.GetIndex(), "err", err)
		return applied{}, nil
	}
	svc := m.service(en.Service)
	if svc == nil {
		m.log.Error("skipping an entry of an unknown service", "index", e.GetIndex(), "service", en.Service)
		return applied{}, nil
	}
	reply, err := m.applyOnce(b, svc, en)
	if err != nil {
		return applied{}, fmt.Errorf("%s: apply: %w", en.Service, err)
	}
	a := applied{service: en.Service, reply: reply, at: en.Time}
	if en.Origin == m.id {
		a.req = en.Request
	}
	return a, nil
}

// applyOnce applies an entry through its service, unless the command log
// knows its command already (a second copy of it): then it answers from
// the log.
func (m *Monitor) applyOnce(b *monstore.Batch, svc moncmd.Service, en entry) (moncmd.Reply, error) {
	id := en.Command
	if id.Client != "" {
		reply, seen, err := m.cmds.seen(b, id, en.Time)
		if err != nil || seen {
			if seen {
				m.metrics.repeats.Inc()
			}
			return reply, err
		}
	}
	reply, err := svc.Apply(b, en.Proposal, time.Unix(0, en.Time).UTC())
	if err != nil || id.Client == "" {
		return reply, err
	}
	return reply, m.cmds.record(b, id, reply)
}

func (m *Monitor) service(name string) moncmd.Service {
	for _, s := range m.cfg.Services {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

// maybeCompact drops log entries well behind the applied index; a
// follower that needs them gets a snapshot instead.
func (m *Monitor) maybeCompact() error {
	m.mu.Lock()
	applied := m.applied
	m.mu.Unlock()
	first, err := m.st.FirstIndex()
	if err != nil {
		return err
	}
	if applied < first+m.cfg.CompactEvery {
		return nil
	}
	keep := m.cfg.CompactEvery / 4
	if err := m.st.Compact(applied - keep); err != nil {
		return fmt.Errorf("compact log: %w", err)
	}
	m.log.Debug("compacted raft log", "through", applied-keep)
	return nil
}

// serviceTicks proposes what the services want done because time passed
// (leader only).
func (m *Monitor) serviceTicks(ctx context.Context, rn *raft.RawNode, now time.Time) {
	if rn.BasicStatus().RaftState != raft.StateLeader {
		return
	}
	m.bootstrap(ctx, now)
	m.svcMu.Lock()
	var cmds []moncmd.Command
	for _, s := range m.cfg.Services {
		cmds = append(cmds, s.Tick(now)...)
	}
	m.svcMu.Unlock()
	for _, c := range cmds {
		go func() {
			if r, err := m.runCommand(ctx, c, now, commandID{}); err != nil || r.Code != moncmd.OK {
				m.log.Info("tick command not applied", "command", c.String(), "status", r.Status, "err", err)
			}
		}()
	}
}

// bootstrap runs the Bootstrap commands not yet done, one pass at a time,
// in order (a later one may need an earlier one's change).
func (m *Monitor) bootstrap(ctx context.Context, now time.Time) {
	if len(m.cfg.Bootstrap) == 0 || !m.bootstrapping.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer m.bootstrapping.Store(false)
		for i, c := range m.cfg.Bootstrap {
			if m.bootstrapped[i].Load() {
				continue
			}
			r, err := m.runCommand(ctx, c, now, commandID{})
			if err != nil || (r.Code != moncmd.OK && r.Code != moncmd.EEXIST) {
				m.log.Info("bootstrap command not done yet", "command", c.Prefix, "status", r.Status, "err", err)
				return
			}
			m.bootstrapped[i].Store(true)
			m.log.Info("bootstrap command done", "command", c.Prefix, "status", r.Status)
		}
	}()
}
