package pgmon

import "time"

// Recovery progress: as reports apply, the service samples the object
// copies left to recover (degraded and misplaced). "status" shows how
// much of the largest backlog since recovery began is done, the rate over
// the last rateWindow and the time left at that rate. The samples live in
// memory only, on every monitor (each applies the same reports at the
// same entry times); a restarted monitor starts afresh.
const (
	rateWindow = time.Minute
	maxSamples = 64
)

type sample struct {
	at   time.Time
	left int64
}

// progress holds the samples, oldest first, and the backlog's peak.
type progress struct {
	samples []sample
	peak    int64
}

// add records that left copies were left to recover at at. Recovery is
// over at zero, and the next backlog starts a new progress.
func (p *progress) add(at time.Time, left int64) {
	if left <= 0 {
		*p = progress{}
		return
	}
	p.peak = max(p.peak, left)
	if n := len(p.samples); n > 0 && p.samples[n-1].left == left {
		return // nothing moved: keep the older sample, the rate's base
	}
	p.samples = append(p.samples, sample{at, left})
	// Keep one sample from before the window, the level it starts at.
	from := at.Add(-rateWindow)
	for len(p.samples) > maxSamples || len(p.samples) > 1 && !p.samples[1].at.After(from) {
		p.samples = p.samples[1:]
	}
}

// estimate is the recovery as "status" shows it.
type estimate struct {
	left, peak int64
	done       float64       // fraction of peak recovered, 0 to 1
	rate       float64       // copies recovered per second over the window
	eta        time.Duration // at rate; 0 if the rate is 0
}

// estimate returns the progress at now; ok is false when nothing is left
// to recover. The rate is what was recovered over the window that ends
// at now (or since the first sample), so a stalled recovery's rate falls
// to zero.
func (p *progress) estimate(now time.Time) (estimate, bool) {
	n := len(p.samples)
	if n == 0 {
		return estimate{}, false
	}
	last := p.samples[n-1]
	e := estimate{left: last.left, peak: p.peak, done: 1 - float64(last.left)/float64(p.peak)}
	// base is the level at the window's start: the newest sample not
	// after it, or the first.
	from := now.Add(-rateWindow)
	base := p.samples[0]
	for _, s := range p.samples[1:] {
		if !s.at.After(from) {
			base = s
		}
	}
	start := base.at
	if start.Before(from) {
		start = from
	}
	if span := now.Sub(start).Seconds(); span > 0 && base.left > last.left {
		e.rate = float64(base.left-last.left) / span
		e.eta = time.Duration(float64(last.left) / e.rate * float64(time.Second)).Round(time.Second)
	}
	return e, true
}
