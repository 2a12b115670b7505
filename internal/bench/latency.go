package bench

import (
	"math"
	"slices"
	"time"
)

// LatencyStats summarises the latencies of a run's operations.
type LatencyStats struct {
	Count  int
	Mean   time.Duration
	Stddev time.Duration // sample standard deviation (n-1), 0 below two samples
	Min    time.Duration
	Max    time.Duration
	P50    time.Duration
	P99    time.Duration
}

// NewLatencyStats computes the statistics of lats, which it sorts in
// place.
func NewLatencyStats(lats []time.Duration) LatencyStats {
	slices.Sort(lats)
	s := LatencyStats{Count: len(lats)}
	if len(lats) == 0 {
		return s
	}
	var sum float64
	for _, l := range lats {
		sum += float64(l)
	}
	mean := sum / float64(len(lats))
	var sq float64
	for _, l := range lats {
		d := float64(l) - mean
		sq += d * d
	}
	if len(lats) > 1 {
		s.Stddev = time.Duration(math.Sqrt(sq / float64(len(lats)-1)))
	}
	s.Mean = time.Duration(mean)
	s.Min, s.Max = lats[0], lats[len(lats)-1]
	s.P50 = Percentile(lats, 50)
	s.P99 = Percentile(lats, 99)
	return s
}

// Percentile returns the p-th percentile (0 to 100) of sorted by the
// nearest-rank method: the smallest value with at least p% of the values
// at or below it. It returns 0 for no values.
func Percentile[T ~int64 | ~float64](sorted []T, p float64) T {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	return sorted[min(max(rank, 1), n)-1]
}

// SampleStats are the mean, sample standard deviation, minimum and
// maximum of per-interval samples (bandwidth or operations per second).
type SampleStats struct {
	Mean, Stddev, Min, Max float64
}

// NewSampleStats computes the statistics of samples.
func NewSampleStats(samples []float64) SampleStats {
	if len(samples) == 0 {
		return SampleStats{}
	}
	s := SampleStats{Min: samples[0], Max: samples[0]}
	var sum float64
	for _, v := range samples {
		sum += v
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	}
	s.Mean = sum / float64(len(samples))
	if len(samples) > 1 {
		var sq float64
		for _, v := range samples {
			sq += (v - s.Mean) * (v - s.Mean)
		}
		s.Stddev = math.Sqrt(sq / float64(len(samples)-1))
	}
	return s
}
