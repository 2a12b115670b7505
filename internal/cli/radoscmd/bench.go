package radoscmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/bench"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/procs"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/cuttlestore/cuttle/rados"
)

// AddBenchCommands adds "cuttle bench", the cluster benchmark (Ceph's
// rados bench), which connects with dial.
func AddBenchCommands(root *cobra.Command, out *cmdutil.Output, dial DialFunc) {
	root.AddCommand(newBenchCommand(out, dial))
}

// benchFlags are the options of `cuttle bench`.
type benchFlags struct {
	pool, ns    string
	readPolicy  string // --read-policy: the client read policy ("" : the config's)
	size        string
	concurrency int
	noCleanup   bool
	runName     string
	seed        uint64
	maxObjects  int64
	adaptive    bool
	reuse       int64
	snapEvery   time.Duration
}

// benchArgs are the positional arguments: SECONDS MODE, or cleanup.
type benchArgs struct {
	cleanup bool
	seconds int
	mode    bench.RadosMode
}

func parseBenchArgs(args []string) (benchArgs, error) {
	if len(args) == 1 && args[0] == "cleanup" {
		return benchArgs{cleanup: true}, nil
	}
	if len(args) != 2 {
		return benchArgs{}, fmt.Errorf("want SECONDS write|seq|rand, or cleanup; got %d arguments", len(args))
	}
	secs, err := strconv.Atoi(args[0])
	if err != nil || secs <= 0 {
		return benchArgs{}, fmt.Errorf("seconds %q: want a positive whole number", args[0])
	}
	mode, err := bench.ParseRadosMode(args[1])
	if err != nil {
		return benchArgs{}, err
	}
	return benchArgs{seconds: secs, mode: mode}, nil
}

// benchStats is a SampleStats in JSON.
type benchStats struct {
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// benchLatency is a LatencyStats in seconds, in JSON.
type benchLatency struct {
	Avg    float64 `json:"avg"`
	Stddev float64 `json:"stddev"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	P50    float64 `json:"p50"`
	P99    float64 `json:"p99"`
}

// benchCleanup says what cleaning up removed.
type benchCleanup struct {
	Removed int64   `json:"removed"`
	Seconds float64 `json:"seconds"`
}

// benchReport is the JSON form of `cuttle bench`; bandwidths are in MiB
// per second, as the plain form's "MB/sec".
type benchReport struct {
	Mode        string       `json:"mode"`
	Pool        string       `json:"pool"`
	Namespace   string       `json:"namespace"`
	Concurrency int          `json:"concurrency"`
	OpSize      uint64       `json:"op_size"`
	ObjectSize  uint64       `json:"object_size"`
	Prefix      string       `json:"prefix"`
	RunName     string       `json:"run_name"`
	Objects     int64        `json:"objects"`
	TotalTime   float64      `json:"total_time_s"`
	Ops         int64        `json:"ops"`
	Bytes       uint64       `json:"bytes"`
	Bandwidth   float64      `json:"bandwidth_mb_s"`
	IOPS        float64      `json:"iops"`
	BWStats     benchStats   `json:"bandwidth_per_second"`
	IOPSStats   benchStats   `json:"iops_per_second"`
	Latency     benchLatency `json:"latency_s"`
	// LongestStall is the longest time between two completions, from
	// StallFrom seconds after the start.
	LongestStall float64         `json:"longest_stall_s"`
	StallFrom    float64         `json:"stall_from_s"`
	Timeline     []benchInterval `json:"timeline"`
	Cleanup      *benchCleanup   `json:"cleanup,omitempty"`
	// Reuse is how many objects a write overwrote in turn (0: it
	// created one per operation).
	Reuse int64 `json:"reuse,omitempty"`
	// Snapshots is how many snapshots --snap-every took (and removed),
	// of kind SnapMode ("selfmanaged" or "pool").
	Snapshots int    `json:"snapshots,omitempty"`
	SnapMode  string `json:"snap_mode,omitempty"`
}

// benchInterval is one second of the run.
type benchInterval struct {
	Sec    int     `json:"sec"`
	Ops    int64   `json:"ops"`
	MBps   float64 `json:"mb_s"`
	MaxLat float64 `json:"max_lat_s"` // 0: no operation finished
}

func newBenchReport(r bench.RadosResult, f *benchFlags, conc int) benchReport {
	s := r.Summary
	st := func(x bench.SampleStats) benchStats { return benchStats{x.Mean, x.Stddev, x.Min, x.Max} }
	timeline := make([]benchInterval, 0, len(s.Timeline))
	for _, iv := range s.Timeline {
		timeline = append(timeline, benchInterval{Sec: iv.Sec, Ops: iv.Ops, MBps: iv.MBps, MaxLat: iv.MaxLat.Seconds()})
	}
	return benchReport{Mode: string(r.Mode), Pool: f.pool, Namespace: f.ns, Concurrency: conc,
		OpSize: s.OpBytes, ObjectSize: r.Meta.ObjectSize, Prefix: r.Meta.Prefix, RunName: f.runName, Objects: r.Meta.Objects,
		TotalTime: s.Elapsed.Seconds(), Ops: s.Ops, Bytes: s.Bytes, Bandwidth: s.MBps, IOPS: s.IOPS,
		BWStats: st(s.Bandwidth), IOPSStats: st(s.IOPSStats),
		Latency: benchLatency{Avg: s.Latency.Mean.Seconds(), Stddev: s.Latency.Stddev.Seconds(), Min: s.Latency.Min.Seconds(),
			Max: s.Latency.Max.Seconds(), P50: s.Latency.P50.Seconds(), P99: s.Latency.P99.Seconds()},
		LongestStall: s.LongestStall.Seconds(), StallFrom: s.StallFrom.Seconds(), Timeline: timeline,
		Reuse: f.reuse, Snapshots: r.Snaps, SnapMode: r.SnapMode}
}

func newBenchCommand(out *cmdutil.Output, dial DialFunc) *cobra.Command {
	f := &benchFlags{}
	c := &cobra.Command{
		Use:   "bench -p POOL SECONDS write|seq|rand [-b SIZE] [-t CONCURRENCY] [--no-cleanup] [--run-name NAME] [--reuse N] [--snap-every DURATION]",
		Short: "Measure the cluster's object write and read throughput and latency (Ceph's rados bench)",
		Long: `Keep CONCURRENCY operations in flight on pool POOL for SECONDS and print, every
second, operations started and finished, bandwidth and latency, then a
summary (bandwidth, IOPS, latency average, deviation, extremes, p50, p99).

  write  creates objects of SIZE bytes, one per operation, counting each
         when it is committed (durable on every replica; on the primary
         alone in a pool in ack primary mode). It records the
         objects in the metadata object --run-name and, unless --no-cleanup,
         removes them all at the end.
  seq    reads the objects the last write (with --no-cleanup) left, in the
         order they were written, until all are read or SECONDS pass.
  rand   reads those objects at random for SECONDS.

A write with --reuse N first writes N objects (not measured), then each
operation rewrites the next of them whole, so that writes overwrite as a
block device's do. --snap-every DURATION takes a snapshot every DURATION
during a write (self-managed ones, as a block image takes, or pool
snapshots if the pool has those) and removes them at the end: with --reuse
that measures the cost of copy-on-write.

"cuttle bench -p POOL cleanup [--run-name NAME]" removes the objects a
write left. Bandwidths are in MiB (2^20 bytes) per second, printed "MB/s"
as rados bench does.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := parseBenchArgs(args)
			if err != nil {
				return err
			}
			opSize, err := cmdutil.ParseSize(f.size)
			if err != nil || opSize == 0 {
				return fmt.Errorf("-b %q: want a positive size", f.size)
			}
			if f.concurrency <= 0 {
				return fmt.Errorf("-t %d: want at least 1", f.concurrency)
			}
			if f.maxObjects < 0 {
				return fmt.Errorf("--max-objects %d: want 0 or more", f.maxObjects)
			}
			if f.reuse < 0 || f.snapEvery < 0 {
				return fmt.Errorf("--reuse %d, --snap-every %v: want 0 or more", f.reuse, f.snapEvery)
			}
			if (f.reuse > 0 || f.snapEvery > 0) && !a.cleanup && a.mode != bench.RadosWrite {
				return fmt.Errorf("--reuse and --snap-every are for write, not %s", a.mode)
			}
			if f.readPolicy != "" {
				if _, err := osdmap.ParseReadPolicy(f.readPolicy); err != nil && f.readPolicy != "pool" {
					return fmt.Errorf("--read-policy %q: want pool, primary, balance or score", f.readPolicy)
				}
				cmd.SetContext(cmdutil.WithReadPolicy(cmd.Context(), f.readPolicy))
			}
			e := &radosEnv{out: out, dial: dial, pool: f.pool, ns: f.ns}
			return e.with(cmd, func(ctx context.Context, ioc *rados.IOContext) error {
				if a.cleanup {
					return benchCleanupRun(ctx, ioc, out, f)
				}
				return benchRun(ctx, ioc, out, f, a, opSize)
			})
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.pool, "pool", "p", "", "pool to benchmark (required)")
	fl.StringVarP(&f.ns, "namespace", "N", "", "namespace of the benchmark's objects")
	fl.StringVarP(&f.size, "block-size", "b", "4M", "size of each object written (write)")
	fl.IntVarP(&f.concurrency, "concurrent-ios", "t", 16, "operations in flight")
	fl.BoolVar(&f.noCleanup, "no-cleanup", false, "keep the objects a write creates, for seq and rand")
	fl.StringVar(&f.runName, "run-name", bench.DefaultRunName, "metadata object recording what a write created")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of rand's choice of objects")
	fl.Int64Var(&f.maxObjects, "max-objects", 0, "write at most this many objects (0: no bound), ending sooner once they are written")
	fl.Int64Var(&f.reuse, "reuse", 0, "write: overwrite this many objects in turn, written once before the run (0: create an object per write)")
	fl.DurationVar(&f.snapEvery, "snap-every", 0, "write: take a snapshot of the pool this often during the run, and remove them at the end (0: none)")
	fl.StringVar(&f.readPolicy, "read-policy", "", "where seq and rand send reads: pool (the pool's read_policy), primary, balance or score (docs/OSD.md, Reading from replicas); default: client_read_policy in --conf")
	fl.BoolVar(&f.adaptive, "adaptive-procs", true, "run on one scheduler thread (GOMAXPROCS 1) while the ops are small and the benchmark uses under 0.9 of a core; off when GOMAXPROCS is set")
	return c
}

// benchProcsInterval is the window over which the benchmark's
// procs.Governor judges its load.
const benchProcsInterval = 250 * time.Millisecond

func benchRun(ctx context.Context, ioc *rados.IOContext, out *cmdutil.Output, f *benchFlags, a benchArgs, opSize uint64) error {
	plain := out.Format != cmdutil.FormatJSON
	w := bench.RadosWorkload{Mode: a.mode, Duration: time.Duration(a.seconds) * time.Second, OpSize: opSize,
		Concurrency: f.concurrency, RunName: f.runName, Prefix: benchPrefix(), Seed: f.seed, MaxObjects: f.maxObjects,
		Reuse: f.reuse, SnapEvery: f.snapEvery}
	var werr error
	if plain {
		w.Progress = func(p bench.Progress) {
			if err := bench.WriteProgress(out.W, p); err != nil && werr == nil {
				werr = err
			}
		}
		var err error
		if a.mode == bench.RadosWrite {
			_, err = fmt.Fprintf(out.W, "Maintaining %d concurrent writes of %d bytes to objects of size %d for up to %d seconds\nObject prefix: %s\n",
				f.concurrency, opSize, opSize, a.seconds, w.Prefix)
			if err == nil && f.reuse > 0 {
				_, err = fmt.Fprintf(out.W, "Overwriting %d objects in turn (written first)\n", f.reuse)
			}
			if err == nil && f.snapEvery > 0 {
				_, err = fmt.Fprintf(out.W, "Taking a snapshot every %v\n", f.snapEvery)
			}
		}
		if err != nil {
			return err
		}
	}
	if f.adaptive && procs.Enabled() {
		// Sixteen workers each waiting on its own reply hand work back
		// and forth between goroutines; on one P that costs no thread
		// wake-ups (procs' package doc).
		w.Traffic = new(bench.Traffic)
		gctx, stop := context.WithCancel(ctx)
		defer stop()
		go procs.New(procs.ClientPolicy()).Run(gctx, benchProcsInterval, w.Traffic.Totals, slog.Default())
	}
	res, err := bench.RunRados(ctx, ioc, w)
	if err != nil {
		return benchFailure(ioc, err)
	}
	if werr != nil {
		return werr
	}
	rep := newBenchReport(res, f, f.concurrency)
	if plain {
		if err := res.WriteSummary(out.W, a.mode != bench.RadosWrite, res.Meta.ObjectSize); err != nil {
			return err
		}
		if res.Snaps > 0 {
			if _, err := fmt.Fprintf(out.W, "Snapshots taken:        %d (%s), removed\n", res.Snaps, res.SnapMode); err != nil {
				return err
			}
		}
	}
	if a.mode == bench.RadosWrite && !f.noCleanup {
		if plain {
			if _, err := fmt.Fprintln(out.W, "Cleaning up (deleting benchmark objects)"); err != nil {
				return err
			}
		}
		cl, err := benchCleanupObjects(ctx, ioc, f)
		if err != nil {
			return err
		}
		rep.Cleanup = &cl
		if plain {
			if err := printCleanup(out.W, cl); err != nil {
				return err
			}
		}
	}
	if plain {
		return nil
	}
	return out.Print(rep, nil)
}

func benchCleanupObjects(ctx context.Context, ioc *rados.IOContext, f *benchFlags) (benchCleanup, error) {
	start := time.Now()
	n, err := bench.CleanupRados(ctx, ioc, f.runName, f.concurrency)
	if err != nil {
		return benchCleanup{}, benchFailure(ioc, err)
	}
	return benchCleanup{Removed: n, Seconds: time.Since(start).Seconds()}, nil
}

func printCleanup(w io.Writer, cl benchCleanup) error {
	_, err := fmt.Fprintf(w, "Removed %d objects\nClean up completed and total clean up time :%.6g\n", cl.Removed, cl.Seconds)
	return err
}

func benchCleanupRun(ctx context.Context, ioc *rados.IOContext, out *cmdutil.Output, f *benchFlags) error {
	cl, err := benchCleanupObjects(ctx, ioc, f)
	if err != nil {
		return err
	}
	return out.Print(cl, func(w io.Writer) error { return printCleanup(w, cl) })
}

// benchFailure says what failed: a missing metadata object as bench
// says it, the rest through the CLI's error table.
func benchFailure(ioc *rados.IOContext, err error) error {
	if errors.Is(err, bench.ErrNoMetadata) {
		return err
	}
	return radosFailure("bench "+ioc.PoolName(), err)
}

// benchPrefix names a write benchmark's objects as rados bench does:
// benchmark_data_HOST_PID.
func benchPrefix() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("benchmark_data_%s_%d", host, os.Getpid())
}
