package osd

import (
	"errors"
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/internal/osd/scrub"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Scrub scheduling: MaxScrubs scrubs at a time per OSD (Ceph's
// osd_max_scrubs, 1 by default), so scrubs never take more than that many
// PGs' worth of reads from client I/O: a scrub holds one of the OSD's
// scrub slots (an opq.Limiter, whose limit follows the option at run
// time), and its chunks go through its PG's op queue (scrub.go).
// Operators' requests (pg scrub|deep-scrub|repair) run first; every
// ScrubCheck the OSD also starts the most overdue scheduled scrub of the
// PGs it is primary of, as scrub.Next picks it: a light one every
// ScrubInterval, a deep one every DeepScrubInterval, each stretched by up
// to half for each PG, so that PGs created together do not all come due
// together; the cluster's and pools' noscrub and nodeep-scrub flags hold
// scheduled scrubs back.

// scrubQueue bounds the operators' scrub requests waiting.
const scrubQueue = 256

// scrubLoop starts scrubs until the OSD stops, each once it holds a
// scrub slot.
func (o *OSD) scrubLoop() {
	tick := o.cfg.Clock.NewTimer(o.cfg.ScrubCheck)
	defer tick.Stop()
	for {
		select {
		case j := <-o.scrubJobs:
			if !o.scrubSlots.Acquire(o.ctx.Done(), nil) {
				return
			}
			o.startScrub(j)
		case <-tick.C():
			if !o.scrubSlots.Acquire(o.ctx.Done(), nil) {
				return
			}
			// Picked once a slot is held, so that the pick is current.
			if j, ok := o.dueScrub(o.cfg.Clock.Now()); ok {
				o.startScrub(j)
			} else {
				o.scrubSlots.Release()
			}
			tick.Reset(o.cfg.ScrubCheck)
		case <-o.ctx.Done():
			return
		}
	}
}

// startScrub runs j, holding a scrub slot it gives back when done.
func (o *OSD) startScrub(j scrubJob) {
	o.wg.Go(func() {
		defer o.scrubSlots.Release()
		o.runScrub(j)
	})
}

func (o *OSD) runScrub(j scrubJob) {
	err := j.pg.scrub(j.deep, j.repair)
	kind := "light"
	if j.deep {
		kind = "deep"
	}
	switch {
	case err == nil:
		o.metrics.scrubs.WithLabelValues(kind).Inc()
	case errors.Is(err, errIntervalEnded) || errors.Is(err, errNotScrubbable):
		o.log.Info("scrub not done; the PG changed", "pg", j.pg.id.String(), "err", err)
	default:
		o.log.Warn("scrub failed", "pg", j.pg.id.String(), "deep", j.deep, "err", err)
	}
}

// dueScrub returns the most overdue scheduled scrub, if any is due, as
// scrub.Next picks it among the PGs that can be scrubbed now.
func (o *OSD) dueScrub(now time.Time) (scrubJob, bool) {
	o.mu.Lock()
	pgs := make([]*pg, 0, len(o.pgs))
	for _, p := range o.pgs {
		pgs = append(pgs, p)
	}
	o.mu.Unlock()
	var flags osdmap.Flags
	if m := o.currentMap(); m != nil {
		flags = m.Flags()
	}
	byID := make(map[osdmap.PG]*pg, len(pgs))
	candidates := make([]scrub.Candidate, 0, len(pgs))
	for _, p := range pgs {
		p.mu.Lock()
		ok := p.activeLocked() && len(p.acting) >= p.pool.Size && p.scrubbing == ""
		c := scrub.Candidate{PG: p.id, LastScrub: unixTime(p.info.LastScrub), LastDeepScrub: unixTime(p.info.LastDeepScrub), Since: p.born,
			NoScrub:     flags&osdmap.FlagNoScrub != 0 || p.pool.Flags&osdmap.PoolNoScrub != 0,
			NoDeepScrub: flags&osdmap.FlagNoDeepScrub != 0 || p.pool.Flags&osdmap.PoolNoDeepScrub != 0}
		p.mu.Unlock()
		if ok {
			byID[p.id] = p
			candidates = append(candidates, c)
		}
	}
	opts := o.options()
	next, ok := scrub.Next(now, scrub.Intervals{Light: opts.ScrubInterval, Deep: opts.DeepScrubInterval}, candidates)
	if !ok {
		return scrubJob{}, false
	}
	return scrubJob{pg: byID[next.PG], deep: next.Deep}, true
}

// requestScrub queues an operator's scrub of a PG this OSD is primary
// of: "pg scrub", "pg deep-scrub" or "pg repair" (a deep scrub that
// repairs what it finds).
func (o *OSD) requestScrub(cmd wire.Command) wire.Reply {
	id, err := osdmap.ParsePG(cmd.Args["pgid"])
	if err != nil {
		return wire.Errorf(wire.EINVAL, "%s: %v", cmd.Prefix, err)
	}
	p, _ := o.lookupPG(id)
	if p == nil {
		return wire.Errorf(wire.ENOENT, "%s: osd.%d does not hold pg %v", cmd.Prefix, o.cfg.ID, id)
	}
	p.mu.Lock()
	primary := p.isPrimaryLocked()
	p.mu.Unlock()
	if !primary {
		return wire.Errorf(wire.EAGAIN, "%s: osd.%d is not the primary of pg %v", cmd.Prefix, o.cfg.ID, id)
	}
	j := scrubJob{pg: p, deep: cmd.Prefix != "pg scrub", repair: cmd.Prefix == "pg repair"}
	select {
	case o.scrubJobs <- j:
	default:
		return wire.Errorf(wire.EAGAIN, "%s: osd.%d has %d scrubs waiting already", cmd.Prefix, o.cfg.ID, scrubQueue)
	}
	what := map[string]string{"pg scrub": "scrub", "pg deep-scrub": "deep-scrub", "pg repair": "repair"}[cmd.Prefix]
	return wire.Reply{Status: fmt.Sprintf("instructing pg %v on osd.%d to %s", id, o.cfg.ID, what),
		Text: fmt.Sprintf("instructing pg %v on osd.%d to %s\n", id, o.cfg.ID, what)}
}
