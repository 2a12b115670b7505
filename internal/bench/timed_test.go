package bench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	for _, tc := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 0, 7 * time.Millisecond},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{ms(1, 2, 3, 4), 51, 3 * time.Millisecond},
		{ms(1, 2, 3, 4), 100, 4 * time.Millisecond},
		{ms(1, 2, 3, 4), 0, 1 * time.Millisecond},
	} {
		if got := Percentile(tc.in, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.in, tc.p, got, tc.want)
		}
	}
	// 1..100: p99 is 99, p50 is 50.
	var hundred []float64
	for i := 100; i >= 1; i-- {
		hundred = append(hundred, float64(i))
	}
	for i, j := 0, len(hundred)-1; i < j; i, j = i+1, j-1 {
		hundred[i], hundred[j] = hundred[j], hundred[i]
	}
	if got := Percentile(hundred, 99); got != 99 {
		t.Errorf("p99 of 1..100 = %v", got)
	}
	if got := Percentile(hundred, 50); got != 50 {
		t.Errorf("p50 of 1..100 = %v", got)
	}
}

func TestLatencyStats(t *testing.T) {
	lats := []time.Duration{4, 2, 9, 4, 5, 5, 7, 4} // mean 5, sample variance 32/7
	s := NewLatencyStats(lats)
	want := LatencyStats{Count: 8, Mean: 5, Stddev: 2, Min: 2, Max: 9, P50: 4, P99: 9}
	if s != want {
		t.Errorf("stats %+v, want %+v", s, want)
	}
	if (NewLatencyStats(nil) != LatencyStats{}) {
		t.Error("stats of nothing are not zero")
	}
	if one := NewLatencyStats([]time.Duration{3}); one.Stddev != 0 || one.Mean != 3 || one.P99 != 3 {
		t.Errorf("one sample: %+v", one)
	}
	ss := NewSampleStats([]float64{10, 20, 30})
	if ss.Mean != 20 || ss.Stddev != 10 || ss.Min != 10 || ss.Max != 30 {
		t.Errorf("sample stats %+v", ss)
	}
}

func TestProgressFormat(t *testing.T) {
	p := Progress{Sec: 3, InFlight: 16, Started: 140, Finished: 124, IntervalOps: 40,
		AvgMBps: 165.333333, CurMBps: 160, LastLat: 412345 * time.Microsecond, AvgLat: 383 * time.Millisecond}
	want := "    3      16       140       124   165.333       160    0.412345       0.383"
	if got := p.String(); got != want {
		t.Errorf("progress line\n got %q\nwant %q", got, want)
	}
	if len(ProgressHeader) != len(want) {
		t.Errorf("header is %d columns, lines %d", len(ProgressHeader), len(want))
	}
	idle := Progress{Sec: 4, InFlight: 16, Started: 140, Finished: 124, AvgMBps: 124, AvgLat: time.Second}
	if got := idle.String(); !strings.HasSuffix(got, "          -           1") {
		t.Errorf("an interval without completions shows its last latency: %q", got)
	}
	var b bytes.Buffer
	for sec := range 22 {
		if err := WriteProgress(&b, Progress{Sec: sec}); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(b.String(), ProgressHeader); n != 2 {
		t.Errorf("header printed %d times in 22 seconds, want at 0 and 20", n)
	}
}

func TestSummaryText(t *testing.T) {
	s := Summary{Elapsed: 2 * time.Second, Ops: 10, OpBytes: 4 << 20, Bytes: 40 << 20, MBps: 20, IOPS: 5,
		Bandwidth: SampleStats{Mean: 20, Stddev: 4, Min: 16, Max: 24}, IOPSStats: SampleStats{Mean: 5, Stddev: 1, Min: 4, Max: 6},
		Latency: LatencyStats{Count: 10, Mean: 800 * time.Millisecond, Stddev: 100 * time.Millisecond, Min: 500 * time.Millisecond,
			Max: time.Second, P50: 790 * time.Millisecond, P99: time.Second},
		LongestStall: 1500 * time.Millisecond, StallFrom: 8 * time.Second}
	var b bytes.Buffer
	if err := s.WriteSummary(&b, false, 4<<20); err != nil {
		t.Fatal(err)
	}
	want := `Total time run:         2
Total writes made:      10
Write size:             4194304
Object size:            4194304
Bandwidth (MB/sec):     20
Stddev Bandwidth:       4
Max bandwidth (MB/sec): 24
Min bandwidth (MB/sec): 16
Average IOPS:           5
Stddev IOPS:            1
Max IOPS:               6
Min IOPS:               4
Average Latency(s):     0.8
Stddev Latency(s):      0.1
Max latency(s):         1
Min latency(s):         0.5
p50 latency(s):         0.79
p99 latency(s):         1
Longest stall(s):       1.5
Stall began at(s):      8
`
	if b.String() != want {
		t.Errorf("summary\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := s.WriteSummary(&b, true, 4<<20); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Total reads made:       10\nRead size:") {
		t.Errorf("read summary:\n%s", b.String())
	}
}

// A run in a synctest bubble, where each operation takes exactly 300 ms
// of virtual time (never ending on a report's tick): the progress lines
// and the summary are exact.
func TestTimedRunProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []Progress
		tm := Timed{Concurrency: 4, Duration: 2 * time.Second, OpBytes: 1 << 20,
			Op: func(ctx context.Context, n int64) error {
				time.Sleep(300 * time.Millisecond)
				return nil
			},
			Progress: func(p Progress) { got = append(got, p) }}
		s, err := tm.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// Each of 4 workers starts ops at 0, 0.3, ... 1.8 s (7), the
		// last ending at 2.1 s.
		if s.Ops != 28 || s.Elapsed != 2100*time.Millisecond || s.Bytes != 28<<20 || math.Abs(s.IOPS-28/2.1) > 1e-9 || math.Abs(s.MBps-28/2.1) > 1e-9 {
			t.Fatalf("summary %+v", s)
		}
		if s.Latency.Min != 300*time.Millisecond || s.Latency.Max != 300*time.Millisecond || s.Latency.P99 != 300*time.Millisecond || s.Latency.Stddev != 0 {
			t.Errorf("latency %+v", s.Latency)
		}
		if len(got) != 3 || got[0] != (Progress{}) {
			t.Fatalf("progress %+v", got)
		}
		want := []Progress{
			{Sec: 1, InFlight: 4, Started: 16, Finished: 12, IntervalOps: 12, AvgMBps: 12, CurMBps: 12,
				LastLat: 300 * time.Millisecond, AvgLat: 300 * time.Millisecond, MaxLat: 300 * time.Millisecond},
			{Sec: 2, InFlight: 4, Started: 28, Finished: 24, IntervalOps: 12, AvgMBps: 12, CurMBps: 12,
				LastLat: 300 * time.Millisecond, AvgLat: 300 * time.Millisecond, MaxLat: 300 * time.Millisecond},
		}
		for i, w := range want {
			if got[i+1] != w {
				t.Errorf("progress at %d s: %+v, want %+v", i+1, got[i+1], w)
			}
		}
		if s.Bandwidth != (SampleStats{Mean: 12, Min: 12, Max: 12}) || s.IOPSStats != (SampleStats{Mean: 12, Min: 12, Max: 12}) {
			t.Errorf("per-second stats %+v %+v", s.Bandwidth, s.IOPSStats)
		}
	})
}

// Two workers whose ops take 100 ms, except two that take 1.45 s, both
// started at 0.5 s (as if an OSD died under them): the longest time
// without a completion is those 1.45 s from 0.5 s, and the timeline has
// each second's completions and slowest op.
func TestTimedStallAndTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := Timed{Concurrency: 2, Duration: 2500 * time.Millisecond, OpBytes: 4 << 10,
			Op: func(ctx context.Context, n int64) error {
				d := 100 * time.Millisecond
				if n == 10 || n == 11 {
					d = 1450 * time.Millisecond
				}
				time.Sleep(d)
				return nil
			}}
		s, err := tm.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s.LongestStall != 1450*time.Millisecond || s.StallFrom != 500*time.Millisecond {
			t.Errorf("longest stall %v from %v, want 1.45s from 0.5s", s.LongestStall, s.StallFrom)
		}
		want := []Interval{
			{Sec: 1, Ops: 10, MBps: 10 * 4.0 / 1024, MaxLat: 100 * time.Millisecond},
			{Sec: 2, Ops: 2, MBps: 2 * 4.0 / 1024, MaxLat: 1450 * time.Millisecond},
		}
		if !slices.Equal(s.Timeline, want) {
			t.Errorf("timeline %+v, want %+v", s.Timeline, want)
		}
	})
}

func TestTimedMaxOpsAndErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		seen := map[int64]int{}
		s, err := Timed{Concurrency: 3, MaxOps: 10, Op: func(ctx context.Context, n int64) error {
			mu.Lock()
			seen[n]++
			mu.Unlock()
			time.Sleep(time.Millisecond)
			return nil
		}}.Run(context.Background())
		if err != nil || s.Ops != 10 || len(seen) != 10 {
			t.Fatalf("ops %d, seen %v: %v", s.Ops, seen, err)
		}
		for n := range int64(10) {
			if seen[n] != 1 {
				t.Errorf("op %d ran %d times", n, seen[n])
			}
		}

		boom := errors.New("boom")
		_, err = Timed{Concurrency: 4, Duration: time.Minute, Op: func(ctx context.Context, n int64) error {
			if n == 5 {
				return boom
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Millisecond):
				return nil
			}
		}}.Run(context.Background())
		if !errors.Is(err, boom) {
			t.Fatalf("err %v, want boom", err)
		}
		if _, err := (Timed{Op: func(context.Context, int64) error { return nil }}).Run(context.Background()); err == nil {
			t.Error("a run without an end was accepted")
		}
	})
}

func TestRadosMetadataRoundTrip(t *testing.T) {
	m := RadosMetadata{Prefix: "benchmark_data_host_42", Objects: 1234, ObjectSize: 4 << 20}
	b, _ := m.MarshalBinary()
	var got RadosMetadata
	if err := got.UnmarshalBinary(b); err != nil || got != m {
		t.Fatalf("round trip %+v %v", got, err)
	}
	if err := got.UnmarshalBinary(b[:len(b)-1]); err == nil {
		t.Error("truncated metadata decoded")
	}
	if m.ObjectName(7) != "benchmark_data_host_42_object7" {
		t.Errorf("object name %q", m.ObjectName(7))
	}
	if _, err := ParseRadosMode("seq"); err != nil {
		t.Error(err)
	}
	if _, err := ParseRadosMode("read"); err == nil {
		t.Error("mode read accepted")
	}
}

func FuzzRadosMetadata(f *testing.F) {
	b, _ := RadosMetadata{Prefix: "p", Objects: 3, ObjectSize: 10}.MarshalBinary()
	f.Add(b)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m RadosMetadata
		if err := m.UnmarshalBinary(b); err != nil {
			return
		}
		again, _ := m.MarshalBinary()
		var m2 RadosMetadata
		if err := m2.UnmarshalBinary(again); err != nil || m2 != m {
			t.Fatalf("re-encoding %+v gives %+v, %v", m, m2, err)
		}
	})
}

// TestPickObject checks that random reads stay in range, repeat for the
// same seed and read number, and reach every object about evenly.
func TestPickObject(t *testing.T) {
	const objects, reads = 10, 100_000
	var hits [objects]int
	for n := range int64(reads) {
		o := pickObject(7, n, objects)
		if o < 0 || o >= objects {
			t.Fatalf("read %d picks object %d of %d", n, o, objects)
		}
		if again := pickObject(7, n, objects); again != o {
			t.Fatalf("read %d picks %d, then %d", n, o, again)
		}
		hits[o]++
	}
	for o, h := range hits {
		if h < reads/objects*9/10 || h > reads/objects*11/10 {
			t.Fatalf("object %d read %d times of %d: %v", o, h, reads, hits)
		}
	}
	if pickObject(7, 1, 1<<40) == pickObject(8, 1, 1<<40) {
		t.Fatal("the seed does not change the choice")
	}
}

// TestTimedCountsTraffic checks that a run's Traffic counts every
// finished operation and its bytes, as they finish.
func TestTimedCountsTraffic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := new(Traffic)
		var seenMidway atomic.Uint64
		s, err := Timed{Concurrency: 2, MaxOps: 12, OpBytes: 4096, Traffic: tr, Op: func(ctx context.Context, n int64) error {
			if n == 6 {
				ops, _ := tr.Totals()
				seenMidway.Store(ops)
			}
			time.Sleep(time.Millisecond)
			return nil
		}}.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ops, bytes := tr.Totals(); ops != uint64(s.Ops) || ops != 12 || bytes != 12*4096 {
			t.Fatalf("traffic %d ops %d bytes, want 12 and %d", ops, bytes, 12*4096)
		}
		if m := seenMidway.Load(); m == 0 || m >= 12 {
			t.Fatalf("traffic midway %d ops, want some but not all", m)
		}
	})
}
