package server

import (
	"net"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// Health is the rank's health report at now, which the daemon sends in
// its beacons: the sessions, the requests in flight and those slow past
// OpComplaintTime, and the clients the engine finds slow to give back
// caps, named by entity and host (Ceph's MDS_SLOW_REQUEST and
// MDS_CLIENT_LATE_RELEASE). A daemon holding no rank reports nothing.
func (s *Server) Health(now time.Time) wire.MDSHealth {
	s.mu.Lock()
	eng := s.engine
	h := wire.MDSHealth{ComplaintTime: s.cfg.OpComplaintTime}
	if s.phase == phaseStandby {
		s.mu.Unlock()
		return h
	}
	h.Sessions, h.InFlight = s.sessions.Len(), s.ops.len()
	h.Slow, h.Oldest = s.ops.slow(now, s.cfg.OpComplaintTime)
	s.mu.Unlock()
	if eng == nil {
		return h
	}
	// Outside s.mu: the engine takes its own lock, under which it calls
	// the Outbox (which takes s.mu).
	eh := eng.Health(now)
	late := eh.LateReleases
	s.mu.Lock()
	defer s.mu.Unlock()
	h.Damaged = eh.Damaged
	h.LateClients = len(late)
	for _, l := range late[:min(len(late), wire.MaxLateRelease)] {
		r := wire.MDSLateRelease{ClientID: uint64(l.Client), Ino: l.Ino, Age: max(now.Sub(l.Since), 0)}
		if se, ok := s.sessions.Get(l.Client); ok {
			r.Entity = clip(se.Name, mdsmap.MaxName)
		}
		if conn := s.conns[l.Client]; conn != nil {
			r.Host = clip(hostOf(conn.PeerAddr()), mdsmap.MaxAddr)
		}
		h.LateRelease = append(h.LateRelease, r)
	}
	return h
}

// clip cuts s to at most n bytes (the beacon decoder's bounds).
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// hostOf is the host of an instance address HOST:PORT/NONCE.
func hostOf(addr string) string {
	addr, _, _ = strings.Cut(addr, "/")
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}
