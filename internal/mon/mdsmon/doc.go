// Package mdsmon is the monitors' MDS-map service (Ceph's MDSMonitor):
// the file systems and the MDS daemons serving them (package mdsmap),
// replicated through the monitors' Raft log like every service's state
// and kept in the monitor store under the key "map".
//
// It owns the commands that change the map (fs new, fs rm, fs set, fs
// fail, fs add_data_pool, fs rm_data_pool, mds fail, mds repaired), the
// read commands (fs ls, fs status, fs dump, fs get, mds stat), the
// health checks (FS_DEGRADED, FS_WITH_FAILED_MDS, MDS_ALL_DOWN,
// MDS_DAMAGE, MDS_INSUFFICIENT_STANDBY) and the handling of MDS beacons
// ("mds beacon", internal/wire's mdsmsg.go). The decisions themselves —
// what a beacon changes, who is laggy, which standby takes which rank —
// are the pure package failover; this package feeds them the applied map
// and carries their result through a proposal.
//
// # What is replicated and what is not
//
// Replicated: the map. Not replicated: when each daemon was last heard
// from (failover.Liveness). Only the leader judges liveness: beacons are
// leader-only commands (LeaderOnly), which a follower refuses as "not
// ready" so the daemon's monitor client moves on to the leader; a beacon
// that changes nothing (the usual case) only refreshes that memory, and
// one that changes the map is proposed. The leader's Tick, every second,
// finds the daemons silent for mds_beacon_grace and returns the command
// "mds failover" naming them, which fails or removes them and assigns
// standbys in one epoch. A new leader (Tick not called for a while)
// first gives every daemon a fresh grace, as Ceph's MDSMonitor does.
//
// A failed rank holder is fenced: every monitor adds its address and
// nonce to the replicated list of fences (fences.go, kept in the store)
// as it applies the change, and the leader's Tick sends "osd blocklist
// add ADDR/NONCE" to the OSD-map service (for a day) until the OSD map
// carries it, then retires it ("mds fenced"), so that the OSDs refuse
// its writes. A leadership change between the two loses no fence: the
// new leader has the list too.
//
// Concurrency: the driver calls it from one goroutine (moncmd.Service's
// contract). Maps it returns are immutable. Start with service.go.
package mdsmon
