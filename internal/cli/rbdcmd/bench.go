package rbdcmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/bench"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/procs"
	"github.com/cuttlestore/cuttle/rbd"
)

// benchConfig is the shape of an `rbd bench` run, as Ceph's flags name it.
type benchConfig struct {
	IOType    string `json:"io_type"`    // write or read
	IOSize    uint64 `json:"io_size"`    // bytes per call
	IOThreads int    `json:"io_threads"` // calls in flight
	IOTotal   uint64 `json:"io_total"`   // bytes in all
	Pattern   string `json:"io_pattern"` // seq or rand
	Cache     bool   `json:"cache"`      // through the write-back cache
}

// benchResult is what `rbd bench --format json` prints.
type benchResult struct {
	benchConfig
	Ops         uint64  `json:"ops"`
	Seconds     float64 `json:"elapsed_sec"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	BytesPerSec float64 `json:"bytes_per_sec"`
	MeanUsec    float64 `json:"latency_mean_usec"`
	P50Usec     float64 `json:"latency_p50_usec"`
	P99Usec     float64 `json:"latency_p99_usec"`
	MaxUsec     float64 `json:"latency_max_usec"`
}

func (c benchConfig) check(size uint64) error {
	switch {
	case c.IOType != "write" && c.IOType != "read":
		return fmt.Errorf("--io-type %q: want write or read (EINVAL)", c.IOType)
	case c.Pattern != "seq" && c.Pattern != "rand":
		return fmt.Errorf("--io-pattern %q: want seq or rand (EINVAL)", c.Pattern)
	case c.IOSize == 0 || c.IOSize > 64<<20:
		return fmt.Errorf("--io-size %d: want 1 byte to 64 MiB (EINVAL)", c.IOSize)
	case c.IOThreads < 1 || c.IOThreads > 1024:
		return fmt.Errorf("--io-threads %d: want 1 to 1024 (EINVAL)", c.IOThreads)
	case c.IOSize > size:
		return fmt.Errorf("--io-size %d is larger than the image (%d bytes); grow it with rbd resize (EINVAL)", c.IOSize, size)
	case c.IOTotal < c.IOSize:
		return fmt.Errorf("--io-total %d is below --io-size %d (EINVAL)", c.IOTotal, c.IOSize)
	}
	return nil
}

// runBench runs c against img: IOTotal/IOSize calls of IOSize bytes,
// IOThreads in flight, at offsets in order (seq, wrapping at the image's
// end) or at random multiples of IOSize. tick, if not nil, is called
// every second with the seconds elapsed and the calls done; done counts
// the calls done as they complete.
//
// With the cache, the image is flushed once before (so that writes are
// cached from the first: write-through-until-flush is over) and once
// after the calls, within the time measured: what was written is durable
// when the bench ends.
func runBench(ctx context.Context, img *rbd.Image, c benchConfig, done *atomic.Uint64, tick func(sec int, ops uint64, elapsed time.Duration)) (benchResult, error) {
	size := img.Size()
	if c.Cache {
		if err := img.Flush(ctx); err != nil {
			return benchResult{}, fmt.Errorf("rbd bench: %w", err)
		}
	}
	slots := size / c.IOSize // offsets are multiples of IOSize below the end
	total := c.IOTotal / c.IOSize
	var next atomic.Uint64
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lats := make([][]time.Duration, c.IOThreads)
	// Each caller's buffer and generator, made before the clock starts:
	// filling 16 buffers of 4 MiB with random bytes takes a tenth of a
	// second of CPU, which is not the image's time. Reads fill nothing.
	seed := uint64(time.Now().UnixNano())
	bufs := make([][]byte, c.IOThreads)
	rngs := make([]*rand.Rand, c.IOThreads)
	for w := range c.IOThreads {
		rngs[w] = rand.New(rand.NewPCG(uint64(w), seed))
		bufs[w] = make([]byte, c.IOSize)
		if c.IOType == "write" {
			for i := range bufs[w] {
				bufs[w][i] = byte(rngs[w].Uint32()) | 1
			}
		}
	}
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c.IOThreads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng, buf := rngs[w], bufs[w]
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				off := (i % slots) * c.IOSize
				if c.Pattern == "rand" {
					off = rng.Uint64N(slots) * c.IOSize
				}
				t0 := time.Now()
				var err error
				if c.IOType == "write" {
					err = img.WriteAt(ctx, buf, off)
				} else {
					err = img.ReadAt(ctx, buf, off)
				}
				if err != nil {
					cancel(err)
					return
				}
				lats[w] = append(lats[w], time.Since(t0))
				done.Add(1)
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	if tick != nil {
		t := time.NewTicker(time.Second)
		defer t.Stop()
	ticks:
		for sec := 1; ; sec++ {
			select {
			case <-t.C:
				tick(sec, done.Load(), time.Since(start))
			case <-finished:
				break ticks
			}
		}
	}
	<-finished
	if c.Cache && context.Cause(ctx) == nil {
		if err := img.Flush(ctx); err != nil {
			cancel(err)
		}
	}
	elapsed := time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return benchResult{}, fmt.Errorf("rbd bench: %w", err)
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	st := bench.NewLatencyStats(all)
	usec := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	n := done.Load()
	return benchResult{benchConfig: c, Ops: n, Seconds: elapsed.Seconds(), OpsPerSec: float64(n) / elapsed.Seconds(),
		BytesPerSec: float64(n*c.IOSize) / elapsed.Seconds(), MeanUsec: usec(st.Mean), P50Usec: usec(st.P50),
		P99Usec: usec(st.P99), MaxUsec: usec(st.Max)}, nil
}

// benchProcsInterval is the window over which the benchmark's
// procs.Governor judges its load (as cuttle bench's).
const benchProcsInterval = 250 * time.Millisecond

func benchCommand(e *env) *cobra.Command {
	c := benchConfig{IOType: "", IOThreads: 16, Pattern: "seq"}
	adaptive := true
	var cpuProfile string
	size := sizeFlag{v: 4 << 10}
	total := sizeFlag{v: 1 << 30}
	cmd := &cobra.Command{
		Use:   "bench [POOL/]IMAGE --io-type write|read [--io-size SIZE] [--io-threads N] [--io-total SIZE] [--io-pattern seq|rand]",
		Short: "Measure an image's I/O: calls of one size, N in flight, as Ceph's rbd bench",
		Long: `Write or read the image with --io-total bytes in calls of --io-size
(default 4K), --io-threads (default 16) in flight, in order (seq, the
default, wrapping at the image's end) or at random offsets (rand, multiples
of the size). Prints the calls done each second, then the totals with the
latency's mean, p50, p99 and max. Writes overwrite the image's data; reads
of a never-written image read holes (write it first).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := e.parseSpec(args[0], -1)
			if err != nil {
				return err
			}
			c.IOSize, c.IOTotal = size.v, total.v
			o := rbd.OpenOptions{ReadOnly: c.IOType == "read"}
			if c.Cache {
				co := rbd.DefaultCacheOptions()
				o.Cache = &co
			}
			return e.withImage(cmd, s, o, func(ctx context.Context, _ *rbd.Pool, img *rbd.Image) error {
				if err := c.check(img.Size()); err != nil {
					return err
				}
				plain := e.out.Format != cmdutil.FormatJSON
				var tick func(int, uint64, time.Duration)
				if plain {
					fmt.Fprintf(e.out.W, "bench  type %s io_size %d io_threads %d bytes %d pattern %s\n", c.IOType, c.IOSize, c.IOThreads, c.IOTotal, c.Pattern)
					fmt.Fprintf(e.out.W, "%5s %10s %12s %14s\n", "SEC", "OPS", "OPS/SEC", "BYTES/SEC")
					var last uint64
					tick = func(sec int, ops uint64, _ time.Duration) {
						fmt.Fprintf(e.out.W, "%5d %10d %12.2f %14s\n", sec, ops, float64(ops-last), cmdutil.FormatSize((ops-last)*c.IOSize)+"/s")
						last = ops
					}
				}
				var done atomic.Uint64
				if adaptive && procs.Enabled() {
					// As cuttle bench: sixteen callers each waiting on
					// its own reply hand work back and forth between
					// goroutines, which on one P costs no thread
					// wake-ups (procs' package doc).
					gctx, stop := context.WithCancel(ctx)
					defer stop()
					traffic := func() (uint64, uint64) { n := done.Load(); return n, n * c.IOSize }
					go procs.New(procs.ClientPolicy()).Run(gctx, benchProcsInterval, traffic, slog.Default())
				}
				stopProfile, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				r, err := runBench(ctx, img, c, &done, tick)
				if perr := stopProfile(); err == nil {
					err = perr
				}
				if err != nil {
					return err
				}
				return e.out.Print(r, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "elapsed: %.2f  ops: %d  ops/sec: %.2f  bytes/sec: %s/s  latency mean %.0f us p50 %.0f us p99 %.0f us max %.0f us\n",
						r.Seconds, r.Ops, r.OpsPerSec, cmdutil.FormatSize(uint64(r.BytesPerSec)), r.MeanUsec, r.P50Usec, r.P99Usec, r.MaxUsec)
					return err
				})
			})
		},
	}
	cmd.Flags().StringVar(&c.IOType, "io-type", "", "write or read (required)")
	cmd.Flags().Var(&size, "io-size", "bytes per call (default 4K)")
	cmd.Flags().IntVar(&c.IOThreads, "io-threads", 16, "calls in flight")
	cmd.Flags().Var(&total, "io-total", "bytes in all (default 1G)")
	cmd.Flags().StringVar(&c.Pattern, "io-pattern", "seq", "seq or rand")
	cmd.Flags().BoolVar(&c.Cache, "cache", false, "through the write-back cache (rbd_cache's defaults); the final flush is timed")
	cmd.Flags().BoolVar(&adaptive, "adaptive-procs", true, "run on one scheduler thread (GOMAXPROCS 1) while the calls are small and the benchmark uses under 0.9 of a core, as cuttle bench; off when GOMAXPROCS is set")
	addCPUProfileFlag(cmd, &cpuProfile)
	return cmd
}
