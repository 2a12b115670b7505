package mon

import (
	"context"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// peerState is what this monitor knows of another's liveness and clock.
type peerState struct {
	lastHeard time.Time     // last ping or reply received
	offset    time.Duration // peer clock minus ours, from the last round trip
	rtt       time.Duration
	measured  bool
}

// pinger pings every other monitor each PingInterval.
func (m *Monitor) pinger(ctx context.Context) {
	defer m.wg.Done()
	t := m.cfg.Clock.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.stop:
			return
		case <-t.C():
		}
		now := m.cfg.Clock.Now()
		for _, mi := range m.cfg.MonMap.Mons {
			if mi.Name == m.cfg.Name {
				continue
			}
			p := wire.MonPing{From: m.cfg.Name, Sent: now.UnixNano()}
			sctx, cancel := context.WithTimeout(ctx, m.cfg.PingInterval)
			_ = m.msgr.Send(sctx, auth.EntityName{Type: "mon", ID: mi.Name}, mi.Addr, msgr.Message{Type: wire.TypeMonPing, Version: 1, Payload: p.Encode()})
			cancel()
		}
		t.Reset(m.cfg.PingInterval)
	}
}

// handlePing answers a peer's ping and records what a reply tells.
func (m *Monitor) handlePing(from msgr.Peer, p wire.MonPing) {
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	ps := m.peers[p.From]
	if ps == nil || from.Name.Type != "mon" || from.Name.ID != p.From {
		m.mu.Unlock()
		return
	}
	ps.lastHeard = now
	if p.Reply {
		// Our send time and receive time bracket the peer's reply time.
		sent := time.Unix(0, p.Sent)
		ps.rtt = now.Sub(sent)
		ps.offset = time.Unix(0, p.PeerTime).Sub(sent.Add(ps.rtt / 2))
		ps.measured = true
	}
	m.mu.Unlock()
	if p.Reply {
		return
	}
	r := wire.MonPing{From: m.cfg.Name, Sent: p.Sent, PeerTime: now.UnixNano(), Reply: true}
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.PingInterval)
	defer cancel()
	_ = from.Session.Send(ctx, msgr.Message{Type: wire.TypeMonPing, Version: 1, Payload: r.Encode()})
}

// monView is one monitor as this monitor sees it.
type monView struct {
	Name   string        `json:"name"`
	Addr   string        `json:"addr"`
	Rank   int           `json:"rank"`
	Up     bool          `json:"up"`
	Offset time.Duration `json:"clock_offset_ns"`
	Skewed bool          `json:"clock_skewed"`
}

// view reports every monitor's liveness and clock from here.
func (m *Monitor) view(now time.Time) []monView {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]monView, len(m.cfg.MonMap.Mons))
	for i, mi := range m.cfg.MonMap.Mons {
		v := monView{Name: mi.Name, Addr: mi.Addr, Rank: i, Up: true}
		if ps := m.peers[mi.Name]; ps != nil {
			v.Up = !ps.lastHeard.IsZero() && now.Sub(ps.lastHeard) < m.cfg.MonDownAfter
			v.Offset = ps.offset
			v.Skewed = ps.measured && v.Up && (ps.offset > m.cfg.MaxClockSkew || ps.offset < -m.cfg.MaxClockSkew)
		}
		out[i] = v
	}
	return out
}
