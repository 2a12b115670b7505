package osd

import (
	"math"
	"sync/atomic"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// This file holds the OSD's side of the fullness ratios (Ceph's full,
// backfillfull and nearfull states; docs/OSD.md "Full OSDs and pools").
//
//   - A write that may add data (anything but removals) to a PG whose
//     pool has the flag full, or while the map marks this OSD full, is
//     refused with ENOSPC before anything is applied or sent to a
//     replica. Removals and reads always pass, so space can be freed.
//   - A local failsafe refuses such writes too when this OSD's own store
//     is at or above the map's full_ratio, before the monitors mark it:
//     the usage is cached (refreshed with every PG report, and once the
//     bytes written since the last look exceed a hundredth of the
//     store), and the bytes written since are counted as used, so the
//     check costs no store call per op.
//   - Backfill pushes nothing to a target the map marks backfillfull or
//     full; the PG shows backfill_toofull and resumes on a map that
//     clears the state (recovery.Plan.Next, pg.advance).

// spaceGuard caches this OSD's store usage for the failsafe. Every write
// op reads it, so it is lock-free: total and used may be read from two
// different looks, which moves the answer by one refresh's worth at most.
type spaceGuard struct {
	total, used  atomic.Uint64 // the store's, at the last look
	written      atomic.Int64
	refreshEvery atomic.Int64 // bytes written between looks
	// mapFull says the map marks this OSD full; fullRatio is the map's.
	mapFull   atomic.Bool
	fullRatio atomic.Uint32 // float32 bits
}

// minRefreshBytes bounds how often the failsafe looks at the store.
const minRefreshBytes = 1 << 20

// note records the store's usage as just read.
func (g *spaceGuard) note(total, available uint64) {
	g.total.Store(total)
	g.used.Store(total - min(available, total))
	g.refreshEvery.Store(max(int64(total/100), minRefreshBytes))
	g.written.Store(0)
}

// noteMap records what map m says of this OSD's fullness.
func (g *spaceGuard) noteMap(m *osdmap.Map, self int32) {
	g.mapFull.Store(m.IsFull(self))
	g.fullRatio.Store(math.Float32bits(m.Ratios().Full))
}

// wrote counts n bytes of writes; it reports whether the cache is due a
// refresh: only for the write that crosses the threshold, so that the
// writes after it, until the refresh lands, do not each start another.
func (g *spaceGuard) wrote(n int) bool {
	w := g.written.Add(int64(n))
	every := g.refreshEvery.Load()
	return every > 0 && w >= every && w-int64(n) < every
}

// overRatio reports whether the cached usage, with the bytes written
// since, is at or above the map's full ratio.
func (g *spaceGuard) overRatio() bool {
	return g.over(math.Float32frombits(g.fullRatio.Load()))
}

// over reports whether the cached usage, with the bytes written since,
// is at or above ratio (0: never).
func (g *spaceGuard) over(ratio float32) bool {
	total, used := g.total.Load(), g.used.Load()
	if total == 0 {
		return false
	}
	used += uint64(max(g.written.Load(), 0))
	// As the monitors decide (osdmap.Ratios.Fullness): in float32.
	return ratio > 0 && float32(float64(used)/float64(total)) >= ratio
}

// failsafeFullRatio is the usage past which even an MDS's writes are
// refused (Ceph's osd_failsafe_full_ratio): the margin between the
// cluster's full ratio and this is what lets a full file system's
// metadata server journal the deletes that free space.
const failsafeFullRatio = 0.97

// refreshSpace reads the store's usage into the cache.
func (o *OSD) refreshSpace() {
	if fs, err := o.cfg.Store.StatFS(o.ctx); err == nil {
		o.space.note(fs.Total, fs.Available)
	}
}

// removesOnly reports whether ops only take data away (remove the
// object, an attribute or omap keys, truncate) or read: such a request
// passes when the cluster is full, so a full file system's files can be
// truncated and removed.
func removesOnly(ops []wire.ObjectOp) bool {
	for i := range ops {
		switch c := ops[i].Code; c {
		case wire.OpDelete, wire.OpRmXattr, wire.OpOmapRmKeys, wire.OpOmapClear,
			wire.OpTruncate: // a cut frees space; growing is sparse
		default:
			if c.IsWrite() || c == wire.OpCall {
				return false
			}
		}
	}
	return true
}

// fullRefusal says why a write request r to PG p must be refused for
// lack of space (the reason, for the log), or "" if it may go on. The
// caller holds p.mu.
func (p *pg) fullRefusalLocked(r *request) string {
	if removesOnly(r.op.Ops) {
		return ""
	}
	g := &p.o.space
	if r.from.Name.Type == "mds" {
		// A metadata server writes past full (Ceph's MDS does with
		// FULL_FORCE): it refuses its clients' space-taking operations
		// itself, and must journal the deletes that free space. Only
		// the failsafe stops it.
		if g.over(max(failsafeFullRatio, math.Float32frombits(g.fullRatio.Load()))) {
			return "store at or above the failsafe full ratio"
		}
		return ""
	}
	switch {
	case p.pool.Flags&osdmap.PoolFull != 0:
		return "pool full"
	case g.mapFull.Load():
		return "osd marked full"
	case g.overRatio():
		return "store at or above full_ratio (failsafe)"
	}
	return ""
}

// backfillTooFullLocked reports whether backfill waits: a backfill target
// that still lacks objects is backfillfull or full in the PG's map.
func (p *pg) backfillTooFullLocked() bool { return p.recPlan.TooFull() }

// noteBackfillFullLocked records which acting OSDs map m marks
// backfillfull or full; it reports whether that changed.
func (p *pg) noteBackfillFullLocked(m *osdmap.Map) bool {
	next := map[int32]bool{}
	for _, x := range p.acting {
		if x >= 0 && m.IsBackfillFull(x) {
			next[x] = true
		}
	}
	changed := len(next) != len(p.backfillFull)
	for x := range next {
		changed = changed || !p.backfillFull[x]
	}
	p.backfillFull = next
	p.recPlan.SetFull(next)
	return changed
}
