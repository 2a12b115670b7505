package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Timed is a benchmark that keeps Concurrency operations in flight for a
// while and measures them as `rados bench` does: every second a Progress
// (operations started and finished, bandwidth, latency), and at the end a
// Summary with the latency distribution. What an operation is (a write
// that counts once committed, a read) is Op's business; Timed knows
// nothing of any engine. RunRados (rados.go) is its user.
type Timed struct {
	// Concurrency is the number of operations in flight (default 16).
	Concurrency int
	// Duration is how long new operations are started; those in flight
	// then finish, and count. Zero: until MaxOps.
	Duration time.Duration
	// MaxOps, if not zero, is how many operations to start at most.
	MaxOps int64
	// OpBytes is the bytes each operation moves, for the bandwidth.
	OpBytes uint64
	// Op performs operation n (0, 1, ... in the order they start) and
	// returns once it is complete. Its error ends the run.
	Op func(ctx context.Context, n int64) error
	// Interval is the time between progress reports (default 1 s).
	Interval time.Duration
	// Progress, if set, is called with a report at the start and after
	// every Interval, from one goroutine.
	Progress func(Progress)
	// Traffic, if set, counts the operations as they finish.
	Traffic *Traffic
}

// Traffic counts the operations a run has finished and the bytes they
// moved, for whoever watches the run's load while it goes (the CLI's
// procs.Governor). It is safe for concurrent use.
type Traffic struct{ ops, bytes atomic.Uint64 }

// Totals returns the operations finished so far and their bytes.
func (t *Traffic) Totals() (ops, bytes uint64) { return t.ops.Load(), t.bytes.Load() }

func (t *Traffic) add(opBytes uint64) {
	if t != nil {
		t.ops.Add(1)
		t.bytes.Add(opBytes)
	}
}

// Progress is the state of a Timed run at one report.
type Progress struct {
	Sec         int           // seconds since the start (whole intervals)
	InFlight    int64         // operations started and not finished
	Started     int64         // operations started so far
	Finished    int64         // operations finished so far
	IntervalOps int64         // operations finished in the last interval
	AvgMBps     float64       // MiB per second since the start
	CurMBps     float64       // MiB per second in the last interval
	LastLat     time.Duration // latency of the last operation finished
	AvgLat      time.Duration // mean latency of the operations finished
	MaxLat      time.Duration // slowest of the operations finished in the last interval
}

// Interval is one interval of a Timed run's timeline.
type Interval struct {
	Sec    int           // its end, in intervals since the start
	Ops    int64         // operations finished in it
	MBps   float64       // MiB per second in it
	MaxLat time.Duration // slowest operation finished in it (0: none)
}

// Summary is what a Timed run measured. Bandwidths are in MiB (2^20
// bytes) per second, which `rados bench` prints as "MB/sec".
type Summary struct {
	Elapsed   time.Duration // from the start to the last operation's end
	Ops       int64         // operations completed
	OpBytes   uint64
	Bytes     uint64
	MBps      float64     // MiB per second over Elapsed
	IOPS      float64     // operations per second over Elapsed
	Bandwidth SampleStats // of the per-interval MiB/s
	IOPSStats SampleStats // of the per-interval operations per second
	Latency   LatencyStats
	// Timeline is every whole interval, in order.
	Timeline []Interval
	// LongestStall is the longest time between two consecutive
	// operation completions (an OSD failing under the load shows here),
	// and StallFrom when it began, since the start.
	LongestStall, StallFrom time.Duration
}

const mib = 1 << 20

func (t Timed) withDefaults() (Timed, error) {
	if t.Concurrency == 0 {
		t.Concurrency = 16
	}
	if t.Interval == 0 {
		t.Interval = time.Second
	}
	switch {
	case t.Concurrency < 0:
		return t, fmt.Errorf("bench: concurrency %d", t.Concurrency)
	case t.Duration < 0 || t.MaxOps < 0 || t.Interval < 0:
		return t, errors.New("bench: negative duration, interval or operation count")
	case t.Duration == 0 && t.MaxOps == 0:
		return t, errors.New("bench: neither a duration nor an operation count")
	case t.Op == nil:
		return t, errors.New("bench: no operation")
	}
	return t, nil
}

// timedState is what the workers and the reporter share.
type timedState struct {
	next     atomic.Int64 // operation numbers handed out
	started  atomic.Int64
	finished atomic.Int64
	latSum   atomic.Int64 // nanoseconds
	lastLat  atomic.Int64 // nanoseconds
	maxLat   atomic.Int64 // nanoseconds, since the last report
}

// noteMax raises maxLat to lat.
func (st *timedState) noteMax(lat time.Duration) {
	for {
		cur := st.maxLat.Load()
		if int64(lat) <= cur || st.maxLat.CompareAndSwap(cur, int64(lat)) {
			return
		}
	}
}

// Run runs the benchmark. It stops at the first failed operation (after
// the others in flight end) and returns that error.
func (t Timed) Run(ctx context.Context) (Summary, error) {
	t, err := t.withDefaults()
	if err != nil {
		return Summary{}, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var st timedState
	start := time.Now()
	var deadline time.Time
	if t.Duration > 0 {
		deadline = start.Add(t.Duration)
	}
	lats := make([][]time.Duration, t.Concurrency)
	ends := make([][]time.Duration, t.Concurrency) // completions, since start
	var wg sync.WaitGroup
	for w := range t.Concurrency {
		wg.Go(func() {
			for ctx.Err() == nil && (deadline.IsZero() || time.Now().Before(deadline)) {
				n := st.next.Add(1) - 1
				if t.MaxOps > 0 && n >= t.MaxOps {
					return
				}
				st.started.Add(1)
				t0 := time.Now()
				if err := t.Op(ctx, n); err != nil {
					cancel(err)
					return
				}
				end := time.Now()
				lat := end.Sub(t0)
				lats[w] = append(lats[w], lat)
				ends[w] = append(ends[w], end.Sub(start))
				st.latSum.Add(int64(lat))
				st.lastLat.Store(int64(lat))
				st.noteMax(lat)
				st.finished.Add(1)
				t.Traffic.add(t.OpBytes)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var mbps, iops []float64
	var timeline []Interval
	if t.Progress != nil {
		t.Progress(Progress{})
	}
	tick := time.NewTicker(t.Interval)
	prev := int64(0)
	for sec := 1; ; sec++ {
		select {
		case <-done:
		case <-tick.C:
			p := st.progress(sec, start, prev, t)
			prev = p.Finished
			mbps = append(mbps, p.CurMBps)
			timeline = append(timeline, Interval{Sec: p.Sec, Ops: p.IntervalOps, MBps: p.CurMBps, MaxLat: p.MaxLat})
			iops = append(iops, float64(p.IntervalOps)/t.Interval.Seconds())
			if t.Progress != nil {
				t.Progress(p)
			}
			continue
		}
		break
	}
	tick.Stop()
	elapsed := time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return Summary{}, err
	}
	all := slices.Concat(lats...)
	s := Summary{Elapsed: elapsed, Ops: int64(len(all)), OpBytes: t.OpBytes, Bytes: uint64(len(all)) * t.OpBytes,
		Bandwidth: NewSampleStats(mbps), IOPSStats: NewSampleStats(iops), Latency: NewLatencyStats(all), Timeline: timeline}
	s.LongestStall, s.StallFrom = longestGap(slices.Concat(ends...))
	if secs := elapsed.Seconds(); secs > 0 {
		s.MBps = float64(s.Bytes) / mib / secs
		s.IOPS = float64(s.Ops) / secs
	}
	return s, nil
}

// longestGap returns the longest time between consecutive completions
// (times since the start, in any order) and when it began.
func longestGap(ends []time.Duration) (gap, from time.Duration) {
	slices.Sort(ends)
	for i := 1; i < len(ends); i++ {
		if d := ends[i] - ends[i-1]; d > gap {
			gap, from = d, ends[i-1]
		}
	}
	return gap, from
}

// progress reports the state after sec intervals; prev is the number of
// operations finished at the previous report.
func (st *timedState) progress(sec int, start time.Time, prev int64, t Timed) Progress {
	fin := st.finished.Load()
	p := Progress{Sec: sec, Started: st.started.Load(), Finished: fin, IntervalOps: fin - prev,
		LastLat: time.Duration(st.lastLat.Load()), MaxLat: time.Duration(st.maxLat.Swap(0))}
	p.InFlight = p.Started - p.Finished
	if secs := time.Since(start).Seconds(); secs > 0 {
		p.AvgMBps = float64(uint64(fin)*t.OpBytes) / mib / secs
	}
	p.CurMBps = float64(uint64(p.IntervalOps)*t.OpBytes) / mib / t.Interval.Seconds()
	if fin > 0 {
		p.AvgLat = time.Duration(st.latSum.Load() / fin)
	}
	return p
}
