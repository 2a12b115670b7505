package pgmon

import "time"

// Recovery progress: as reports apply, the service samples the object
// copies left to recover (degraded and misplaced). "status" shows how
// much of the largest backlog since recovery began is done, the rate at
// which copies were recovered over the last rateWindow, and the time left
// at that rate. The samples live in memory only, on every monitor (each
// applies the same reports at the same entry times); a restarted monitor
// starts afresh.
const (
	rateWindow = time.Minute
	maxSamples = 64
)

type sample struct {
	at   time.Time
	left int64
}

// progress holds the samples of the current backlog, oldest first, when
// it began and its peak.
type progress struct {
	samples []sample
	since   time.Time
	peak    int64
}

// add records that left copies were left to recover at at. Recovery is
// over at zero, and the next backlog starts a new progress.
func (p *progress) add(at time.Time, left int64) {
	if left <= 0 {
		*p = progress{}
		return
	}
	if len(p.samples) == 0 {
		p.since = at
	}
	p.peak = max(p.peak, left)
	if n := len(p.samples); n > 0 && p.samples[n-1].left == left {
		return // nothing moved
	}
	p.samples = append(p.samples, sample{at, left})
	// Keep one sample from before the window, where its first step
	// starts.
	from := at.Add(-rateWindow)
	for len(p.samples) > maxSamples || len(p.samples) > 1 && !p.samples[1].at.After(from) {
		p.samples = p.samples[1:]
	}
}

// estimate is the recovery as "status" shows it.
type estimate struct {
	left, peak int64
	since      time.Time     // when the backlog began
	done       float64       // fraction of peak recovered, 0 to 1
	rate       float64       // copies recovered per second over the window
	eta        time.Duration // at rate; 0 if the rate is 0
}

// estimate returns the progress at now; ok is false when nothing is left
// to recover. The rate counts the copies recovered (the backlog's falls;
// its rises are new damage, not negative progress) in the window that
// ends at now, or since the backlog began, so a stalled recovery's rate
// falls to zero.
func (p *progress) estimate(now time.Time) (estimate, bool) {
	n := len(p.samples)
	if n == 0 {
		return estimate{}, false
	}
	last := p.samples[n-1]
	e := estimate{left: last.left, peak: p.peak, since: p.since, done: 1 - float64(last.left)/float64(p.peak)}
	from := now.Add(-rateWindow)
	start := from
	if p.since.After(from) {
		start = p.since
	}
	var recovered int64
	for i := 1; i < n; i++ {
		if p.samples[i].at.After(from) {
			recovered += max(p.samples[i-1].left-p.samples[i].left, 0)
		}
	}
	if span := now.Sub(start).Seconds(); span > 0 && recovered > 0 {
		e.rate = float64(recovered) / span
		e.eta = time.Duration(float64(last.left) / e.rate * float64(time.Second)).Round(time.Second)
	}
	return e, true
}
