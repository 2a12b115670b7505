package osd

import (
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Scrub scheduling: one scrub at a time per OSD (Ceph's osd_max_scrubs of
// 1), so scrubs never take more than one PG's worth of reads from client
// I/O. Operators' requests (pg scrub|deep-scrub|repair) run first; every
// ScrubCheck the OSD also starts the most overdue scheduled scrub of the
// PGs it is primary of: a light one every ScrubInterval, a deep one every
// DeepScrubInterval, each stretched by up to half for each PG, so that PGs
// created together do not all come due together.

// scrubQueue bounds the operators' scrub requests waiting.
const scrubQueue = 256

// scrubLoop runs scrubs until the OSD stops.
func (o *OSD) scrubLoop() {
	tick := o.cfg.Clock.NewTimer(o.cfg.ScrubCheck)
	defer tick.Stop()
	for {
		select {
		case j := <-o.scrubJobs:
			o.runScrub(j)
		case <-tick.C():
			if j, ok := o.dueScrub(o.cfg.Clock.Now()); ok {
				o.runScrub(j)
			}
			tick.Reset(o.cfg.ScrubCheck)
		case <-o.ctx.Done():
			return
		}
	}
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

// dueScrub returns the most overdue scheduled scrub, if any is due.
func (o *OSD) dueScrub(now time.Time) (scrubJob, bool) {
	o.mu.Lock()
	pgs := make([]*pg, 0, len(o.pgs))
	for _, p := range o.pgs {
		pgs = append(pgs, p)
	}
	o.mu.Unlock()
	var best scrubJob
	var bestLate time.Duration
	opts := o.options()
	for _, p := range pgs {
		p.mu.Lock()
		ok := p.activeLocked() && len(p.acting) >= p.pool.Size && p.scrubbing == ""
		last, lastDeep := p.info.LastScrub, p.info.LastDeepScrub
		born := p.born
		p.mu.Unlock()
		if !ok {
			continue
		}
		stretch := spread(p.id)
		deepLate := now.Sub(since(lastDeep, born)) - stretched(opts.DeepScrubInterval, stretch)
		lightLate := now.Sub(since(last, born)) - stretched(opts.ScrubInterval, stretch)
		switch {
		case deepLate >= 0 && deepLate >= bestLate:
			best, bestLate = scrubJob{pg: p, deep: true}, deepLate
		case lightLate >= 0 && lightLate >= bestLate:
			best, bestLate = scrubJob{pg: p}, lightLate
		}
	}
	return best, best.pg != nil
}

// since is the later of the Unix-nanosecond stamp and born.
func since(stamp int64, born time.Time) time.Time {
	if t := time.Unix(0, stamp); stamp != 0 && t.After(born) {
		return t
	}
	return born
}

// spread is a PG's fixed fraction in [0, 1) by which its intervals
// stretch.
func spread(id osdmap.PG) float64 {
	h := fnv.New32a()
	fmt.Fprint(h, id.String())
	return float64(h.Sum32()%1024) / 1024
}

func stretched(d time.Duration, f float64) time.Duration {
	return d + time.Duration(float64(d)/2*f)
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
