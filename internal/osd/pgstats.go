package osd

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The OSD reports the state and usage of the PGs it is primary of to the
// monitors ("pg report"): soon after any of them changes state, and every
// ReportInterval otherwise. A report equal to the last one accepted is
// not sent again; the monitors keep the newest report of each PG.

// statsDebounce gathers the state changes of a burst (a map that moves
// many PGs) into one report.
const statsDebounce = 500 * time.Millisecond

// statsChanged asks for a report soon.
func (o *OSD) statsChanged() {
	select {
	case o.statsDirty <- struct{}{}:
	default:
	}
}

// reportLoop sends reports until the OSD stops.
func (o *OSD) reportLoop() {
	tick := o.cfg.Clock.NewTimer(o.cfg.ReportInterval)
	defer tick.Stop()
	var last []byte
	for {
		select {
		case <-o.statsDirty:
			debounce := o.cfg.Clock.NewTimer(statsDebounce)
			select {
			case <-debounce.C():
			case <-o.ctx.Done():
				debounce.Stop()
				return
			}
		case <-tick.C():
		case <-o.ctx.Done():
			return
		}
		tick.Reset(o.cfg.ReportInterval)
		last = o.sendStats(last)
	}
}

// sendStats sends the report unless it equals last; it returns the last
// report the monitors accepted.
func (o *OSD) sendStats(last []byte) []byte {
	r, ok := o.statsReport()
	if !ok {
		return last
	}
	b := r.Encode()
	if bytes.Equal(b, last) {
		return last
	}
	ctx, cancel := context.WithTimeout(o.ctx, o.cfg.ReportInterval)
	defer cancel()
	reply, err := o.mon.Run(ctx, wire.NewCommand("pg report", "report", string(b)))
	if err == nil {
		err = reply.Err()
	}
	if err != nil {
		if o.ctx.Err() == nil {
			o.log.Warn("pg stats not taken by the monitors", "err", err)
		}
		return last
	}
	return b
}

// statsReport gathers the report: every PG this OSD is primary of, and
// the store's usage. It is false before the first map.
func (o *OSD) statsReport() (wire.PGStatsReport, bool) {
	o.mu.Lock()
	m := o.osdmap
	pgs := make([]*pg, 0, len(o.pgs))
	for _, p := range o.pgs {
		pgs = append(pgs, p)
	}
	o.mu.Unlock()
	if m == nil {
		return wire.PGStatsReport{}, false
	}
	r := wire.PGStatsReport{OSD: o.cfg.ID, Epoch: uint64(m.Epoch())}
	if o.cfg.Load != nil {
		r.Load = o.cfg.Load()
	}
	if fs, err := o.cfg.Store.StatFS(o.ctx); err == nil {
		r.Total, r.Available = fs.Total, fs.Available
		r.Used = fs.Total - fs.Available
		o.space.note(fs.Total, fs.Available)
	}
	var s osdmap.Scratch
	for _, p := range pgs {
		st, ok := p.stat(m, &s)
		if ok {
			r.PGs = append(r.PGs, st)
		}
	}
	slices.SortFunc(r.PGs, func(a, b wire.PGStat) int { return osdmap.ComparePG(a.PG, b.PG) })
	return r, true
}

// stat is the PG's report, if this OSD is its primary.
func (p *pg) stat(m *osdmap.Map, s *osdmap.Scratch) (wire.PGStat, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.isPrimaryLocked() {
		return wire.PGStat{}, false
	}
	st := wire.PGStat{PG: p.id, State: p.stateLocked(), Acting: slices.Clone(p.acting), Primary: p.primary,
		ReportedEpoch: p.epoch, SameIntervalSince: p.info.SameIntervalSince, LastEpochStarted: p.info.LastEpochStarted,
		LastUpdate: p.info.LastUpdate.String(), LogEntries: int64(p.log.Len()), Objects: p.info.Stats.Objects,
		Bytes: p.info.Stats.Bytes, Degraded: p.degradedLocked(), Misplaced: p.misplacedLocked(), Unfound: int64(len(p.unfound)), BlockedBy: slices.Clone(p.blockedBy),
		DownReason: p.down, LastScrub: unixTime(p.info.LastScrub), LastDeepScrub: unixTime(p.info.LastDeepScrub)}
	st.Inconsistent = p.inconsistentLocked()
	st.ReplicaLag = p.replicaLagLocked()
	if mp, err := m.PGToUpActing(p.id, s); err == nil {
		st.Up = slices.Clone(mp.Up)
	}
	return st, true
}

// maxReportedInconsistent bounds the inconsistent objects a report names
// per PG (the OSD's log names them all).
const maxReportedInconsistent = 100

// unixTime is the time of Unix nanoseconds n (zero for 0).
func unixTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// inconsistentLocked names the objects the last scrub found damaged, in
// object order, at most maxReportedInconsistent; an object stored in the
// wrong PG is followed by the reason in parentheses.
func (p *pg) inconsistentLocked() []string {
	var out []string
	for _, id := range slices.SortedFunc(maps.Keys(p.inconsistent), objid.Compare) {
		if len(out) == maxReportedInconsistent {
			break
		}
		name := id.String()
		if inc := p.inconsistent[id]; inc.Misplaced {
			name += " (" + inc.Why + ")"
		}
		out = append(out, name)
	}
	return out
}

// degradedLocked counts the object copies the PG lacks: those of acting
// members missing from a short acting set, and those recovery has yet to
// copy, but for the misplaced ones.
func (p *pg) degradedLocked() int64 {
	short := int64(max(p.pool.Size-len(p.acting), 0))
	return short*p.info.Stats.Objects + p.missingCopies - p.misplacedLocked()
}

// misplacedLocked counts the copies recovery has yet to make on members
// beyond the pool's size (a temporary acting set keeps the old members
// serving while new ones fill): the PG has enough copies of those
// objects, only not where CRUSH wants them.
func (p *pg) misplacedLocked() int64 {
	surplus := int64(max(len(p.acting)-p.pool.Size, 0))
	return min(p.missingCopies, surplus*p.info.Stats.Objects)
}
