package server

import (
	"fmt"

	"github.com/cuttlestore/cuttle/mdsmap"
)

// holders remembers, from the MDS maps a daemon has seen, the last other
// incarnation that held each rank: when the daemon is given a rank, that
// incarnation is the one to fence before replaying (it may still be
// alive, cut off, and writing). Pure; the Server serializes calls.
type holders struct {
	last map[rankKey]mdsmap.Daemon
}

type rankKey struct {
	fs   mdsmap.FSID
	rank mdsmap.Rank
}

func newHolders() *holders { return &holders{last: map[rankKey]mdsmap.Daemon{}} }

// Observe notes the rank holders of m other than self.
func (h *holders) Observe(m *mdsmap.Map, self mdsmap.GID) {
	if m == nil {
		return
	}
	for _, g := range m.GIDs() {
		d := m.Daemons[g]
		if g != self && d.State.HoldsRank() {
			h.last[rankKey{d.FS, d.Rank}] = *d
		}
	}
}

// Previous is the last other incarnation seen holding rank.
func (h *holders) Previous(fs mdsmap.FSID, rank mdsmap.Rank) (mdsmap.Daemon, bool) {
	d, ok := h.last[rankKey{fs, rank}]
	return d, ok
}

// FenceAddr is the blocklist entry that fences incarnation d, as the
// monitors write it when they fail a rank holder ("ADDR/NONCE", so its
// restart, with a new nonce, is not fenced).
func FenceAddr(d mdsmap.Daemon) string { return fmt.Sprintf("%s/%d", d.Addr, d.Nonce) }

// ClientFenceAddr is the blocklist entry that fences client c: its
// RADOS instance (ENTITY/INCARNATION, which the OSDs match against every
// op's request id) when the client told it at session open; else, for
// an older client, "client.gid.ID", which the OSDs cannot match: such a
// client loses its session and caps but not its access to the data pool.
func ClientFenceAddr(c ClientID, instance string) string {
	if instance != "" {
		return instance
	}
	return fmt.Sprintf("client.gid.%d", uint64(c))
}
