package osd

import (
	"slices"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The replication lag of a pool in ack primary mode (docs/OSD.md,
// "Acknowledging on the primary"): the primary answers a write once it
// committed it, and tracks, for each replica, the writes of the interval
// it has yet to commit (those still in p.writes) and the newest one it
// did. What a replica misses when the interval ends (it failed, or the
// primary did) is not resent by a second path: the next peering finds
// the primary's log newest and recovers the replica from it, as any
// member that missed writes.

// ackPrimaryLagLimit is how many writes a PG in ack primary mode answers
// ahead of its replicas' commits: osd_ack_primary_max_lag (opt), and at
// most half its log (logLimit entries). Beyond it a write is answered
// once every member committed it, as in ack all, until the replicas
// catch up, so that the buffers and rep ops the primary holds for them
// stay bounded, a write that falls back waits for a bounded backlog (a
// slow replica commits the writes of every PG in one queue: with 32 PGs
// lagging 520 writes each, a 125-write-a-second disk owed two minutes,
// past the clients' op timeout), and a replica behind when the interval
// ends is still recovered from the log rather than backfilled.
func ackPrimaryLagLimit(opt int, logLimit int64) int {
	return int(max(min(int64(opt), logLimit/2), 1))
}

// noteReplicaCommitLocked records that replica osd committed the write
// at v.
func (p *pg) noteReplicaCommitLocked(osd int32, v wire.Version) {
	if p.acked == nil {
		p.acked = map[int32]wire.Version{}
	}
	if cur, ok := p.acked[osd]; !ok || cur.Less(v) {
		p.acked[osd] = v
	}
}

// replicaLagLocked returns each replica's lag, in acting order, on a
// primary of a pool in ack primary mode; nil elsewhere (in ack all the
// clients wait for every replica: nothing answered lags).
func (p *pg) replicaLagLocked() []wire.ReplicaLag {
	if !p.isPrimaryLocked() || p.pool.Ack != osdmap.AckPrimary {
		return nil
	}
	var out []wire.ReplicaLag
	for _, id := range p.replicasLocked() {
		if slices.ContainsFunc(out, func(l wire.ReplicaLag) bool { return l.OSD == id }) {
			continue
		}
		l := wire.ReplicaLag{OSD: id}
		if v, ok := p.acked[id]; ok {
			l.Acked = v.String()
		}
		for _, w := range p.writes {
			if w.answered && !w.acks.Committed(id) {
				l.Writes++
				l.Bytes += int64(w.bytes)
			}
		}
		out = append(out, l)
	}
	return out
}
