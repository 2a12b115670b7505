package bench

import (
	"fmt"
	"io"
	"strconv"
	"time"
)

// ProgressHeader is the heading of the progress lines, as `rados bench`
// prints it.
const ProgressHeader = "  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)"

// String formats p in the columns of ProgressHeader. The last latency is
// "-" when no operation finished in the interval.
func (p Progress) String() string {
	last := "-"
	if p.IntervalOps > 0 {
		last = num(p.LastLat.Seconds())
	}
	return fmt.Sprintf("%5d %7d %9d %9d %9s %9s %11s %11s",
		p.Sec, p.InFlight, p.Started, p.Finished, num(p.AvgMBps), num(p.CurMBps), last, num(p.AvgLat.Seconds()))
}

// WriteProgress writes p as one line, preceded by ProgressHeader at the
// start and every 20 seconds, as `rados bench` does.
func WriteProgress(w io.Writer, p Progress) error {
	if p.Sec%20 == 0 {
		if _, err := fmt.Fprintln(w, ProgressHeader); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, p)
	return err
}

// num formats a figure as C++ streams do by default (six significant
// digits, no trailing zeros), which is how `rados bench` prints them.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// WriteSummary writes s as `rados bench` prints its summary, with the
// latency percentiles and the longest time without a completion added. reads selects the wording of a read run
// ("Total reads made") over a write run's; objectSize is printed for
// writes.
func (s Summary) WriteSummary(w io.Writer, reads bool, objectSize uint64) error {
	secs := func(d time.Duration) string { return num(d.Seconds()) }
	type line struct{ label, value string }
	var lines []line
	lines = append(lines, line{"Total time run:", num(s.Elapsed.Seconds())})
	if reads {
		lines = append(lines, line{"Total reads made:", fmt.Sprint(s.Ops)},
			line{"Read size:", fmt.Sprint(s.OpBytes)},
			line{"Object size:", fmt.Sprint(objectSize)})
	} else {
		lines = append(lines, line{"Total writes made:", fmt.Sprint(s.Ops)},
			line{"Write size:", fmt.Sprint(s.OpBytes)},
			line{"Object size:", fmt.Sprint(objectSize)})
	}
	lines = append(lines,
		line{"Bandwidth (MB/sec):", num(s.MBps)},
		line{"Stddev Bandwidth:", num(s.Bandwidth.Stddev)},
		line{"Max bandwidth (MB/sec):", num(s.Bandwidth.Max)},
		line{"Min bandwidth (MB/sec):", num(s.Bandwidth.Min)},
		line{"Average IOPS:", fmt.Sprint(int64(s.IOPS + 0.5))},
		line{"Stddev IOPS:", num(s.IOPSStats.Stddev)},
		line{"Max IOPS:", fmt.Sprint(int64(s.IOPSStats.Max))},
		line{"Min IOPS:", fmt.Sprint(int64(s.IOPSStats.Min))},
		line{"Average Latency(s):", secs(s.Latency.Mean)},
		line{"Stddev Latency(s):", secs(s.Latency.Stddev)},
		line{"Max latency(s):", secs(s.Latency.Max)},
		line{"Min latency(s):", secs(s.Latency.Min)},
		line{"p50 latency(s):", secs(s.Latency.P50)},
		line{"p99 latency(s):", secs(s.Latency.P99)},
		line{"Longest stall(s):", secs(s.LongestStall)},
		line{"Stall began at(s):", secs(s.StallFrom)},
	)
	for _, l := range lines {
		if _, err := fmt.Fprintf(w, "%-24s%s\n", l.label, l.value); err != nil {
			return err
		}
	}
	return nil
}
