package kvcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/bench"
	"github.com/cuttlestore/cuttle/kv"
	"github.com/cuttlestore/cuttle/rados"
)

// benchConfig is a `cuttle kv bench` run.
type benchConfig struct {
	keys      int           // prefilled keys
	clients   int           // store handles
	depth     int           // operations in flight per client
	duration  time.Duration // measured interval
	mix       [3]int        // weights of get, put, rm
	k         uint32
	valueSize int
	seed      uint64
	every     int    // a series point every this many inserts (0: none)
	plot      string // a PNG of the series' put latency (needs every)
	noWatch   bool   // wait for busy leaves by backoff only
}

// parseMix parses "get=70,put=20,rm=10".
func parseMix(s string) ([3]int, error) {
	var m [3]int
	for _, part := range strings.Split(s, ",") {
		name, w, ok := strings.Cut(part, "=")
		n, err := strconv.Atoi(w)
		if !ok || err != nil || n < 0 {
			return m, fmt.Errorf("bad --mix part %q: want get=N,put=N,rm=N (EINVAL)", part)
		}
		switch name {
		case "get":
			m[0] = n
		case "put":
			m[1] = n
		case "rm":
			m[2] = n
		default:
			return m, fmt.Errorf("bad --mix operation %q: want get, put or rm (EINVAL)", name)
		}
	}
	if m[0]+m[1]+m[2] == 0 {
		return m, fmt.Errorf("--mix %q has no weight (EINVAL)", s)
	}
	return m, nil
}

type opReport struct {
	Ops       int     `json:"ops"`
	OpsPerSec float64 `json:"ops_per_sec"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
}

type benchReport struct {
	Store           string              `json:"store"`
	K               uint32              `json:"k"`
	Keys            int                 `json:"keys"`
	Clients         int                 `json:"clients"`
	InFlight        int                 `json:"in_flight"`
	PrefillPerSec   float64             `json:"prefill_inserts_per_sec"`
	PrefillP99Ms    float64             `json:"prefill_p99_ms"`
	Seconds         float64             `json:"seconds"`
	OpsPerSec       float64             `json:"ops_per_sec"`
	Ops             map[string]opReport `json:"ops"`
	Errors          int                 `json:"errors"`
	ListSeconds     float64             `json:"list_all_seconds"`
	ListedKeys      int                 `json:"listed_keys"`
	LeavesAfter     int                 `json:"leaves_after"`
	EntriesAfter    uint64              `json:"entries_after"`
	ProblemsAtCheck int                 `json:"problems_at_check"`
	// Waits for busy leaves (all clients, prefill and mix): ended by a
	// notify, or by the backoff running out; the time spent waiting.
	WaitsWoken     int64   `json:"waits_woken"`
	WaitsBackedOff int64   `json:"waits_backed_off"`
	WaitedSeconds  float64 `json:"waited_seconds"`
	// Series: the prefill's put latency as the store grows, one point
	// per --report-every inserts (by completion).
	Series []seriesPoint `json:"series,omitempty"`
}

// seriesPoint is the latency of the inserts that completed while the
// store grew to Keys entries from the point before.
type seriesPoint struct {
	Keys   int     `json:"keys"`
	PerSec float64 `json:"inserts_per_sec"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// insert is one prefill insert: its latency and when it completed,
// since the prefill started.
type insert struct {
	lat, done time.Duration
}

// series cuts the prefill's inserts, in order of completion, into
// points of every inserts (the last one possibly shorter).
func series(ins []insert, every int) []seriesPoint {
	slices.SortFunc(ins, func(a, b insert) int { return cmp.Compare(a.done, b.done) })
	var out []seriesPoint
	var prev time.Duration
	for from := 0; from < len(ins); from += every {
		to := min(from+every, len(ins))
		lats := make([]time.Duration, 0, to-from)
		for _, in := range ins[from:to] {
			lats = append(lats, in.lat)
		}
		st := bench.NewLatencyStats(lats)
		pt := seriesPoint{Keys: to, P50Ms: ms(st.P50), P99Ms: ms(st.P99), MaxMs: ms(st.Max)}
		if span := ins[to-1].done - prev; span > 0 {
			pt.PerSec = float64(to-from) / span.Seconds()
		}
		prev = ins[to-1].done
		out = append(out, pt)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func benchKey(i int) string { return fmt.Sprintf("key%010d", i) }

// runBench creates store name in ioc, prefills it, runs the mix for the
// duration, lists it all and checks it.
func runBench(ctx context.Context, ioc *rados.IOContext, name string, cfg benchConfig) (benchReport, error) {
	r := benchReport{Store: name, Keys: cfg.keys, Clients: cfg.clients, InFlight: cfg.clients * cfg.depth, Ops: map[string]opReport{}}
	stores := make([]*kv.Store, cfg.clients)
	defer func() {
		for _, s := range stores {
			if s != nil {
				_ = s.Close(context.WithoutCancel(ctx))
			}
		}
	}()
	for i := range stores {
		var err error
		if i == 0 {
			stores[i], err = kv.Create(ctx, ioc, name, kv.Options{K: cfg.k}, kv.Config{NoWatch: cfg.noWatch})
		} else {
			stores[i], err = kv.Open(ctx, ioc, name, kv.Config{NoWatch: cfg.noWatch})
		}
		if err != nil {
			return r, err
		}
	}
	r.K = stores[0].K()
	value := make([]byte, cfg.valueSize)
	for i := range value {
		value[i] = 'v'
	}
	// Prefill: every client's goroutines insert a share of the keys.
	var mu sync.Mutex
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
	}
	order := rand.New(rand.NewPCG(cfg.seed, 1)).Perm(cfg.keys)
	lats := make([][]insert, cfg.clients*cfg.depth)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range cfg.clients * cfg.depth {
		s := stores[w%cfg.clients]
		wg.Go(func() {
			for i := w; i < len(order); i += cfg.clients * cfg.depth {
				t := time.Now()
				if err := s.Put(ctx, benchKey(order[i]), value); err != nil {
					fail(err)
					return
				}
				now := time.Now()
				lats[w] = append(lats[w], insert{lat: now.Sub(t), done: now.Sub(start)})
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return r, fmt.Errorf("prefill: %w", firstErr)
	}
	var ins []insert
	var all []time.Duration
	for _, l := range lats {
		ins = append(ins, l...)
		for _, in := range l {
			all = append(all, in.lat)
		}
	}
	r.PrefillPerSec = float64(cfg.keys) / time.Since(start).Seconds()
	r.PrefillP99Ms = ms(bench.NewLatencyStats(all).P99)
	if cfg.every > 0 {
		r.Series = series(ins, cfg.every)
	}

	// The measured mix.
	names := [3]string{"get", "put", "rm"}
	opLats := make([][3][]time.Duration, cfg.clients*cfg.depth)
	errs := make([]int, cfg.clients*cfg.depth)
	// Operations run to their end: one cut short through its context
	// would be abandoned mid-split or mid-join, for cleanup to finish.
	deadline := time.Now().Add(cfg.duration)
	total := cfg.mix[0] + cfg.mix[1] + cfg.mix[2]
	start = time.Now()
	for w := range cfg.clients * cfg.depth {
		s := stores[w%cfg.clients]
		rng := rand.New(rand.NewPCG(cfg.seed, uint64(w)+2))
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				pick := rng.IntN(total)
				op := 0
				for pick >= cfg.mix[op] {
					pick -= cfg.mix[op]
					op++
				}
				key := benchKey(rng.IntN(cfg.keys))
				t := time.Now()
				var err error
				switch op {
				case 0:
					_, err = s.Get(ctx, key)
					if errors.Is(err, kv.ErrNotFound) {
						err = nil
					}
				case 1:
					err = s.Put(ctx, key, value)
				case 2:
					err = s.Remove(ctx, key)
				}
				if err != nil {
					errs[w]++
					continue
				}
				opLats[w][op] = append(opLats[w][op], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	r.Seconds = elapsed.Seconds()
	count := 0
	for op, name := range names {
		var l []time.Duration
		for w := range opLats {
			l = append(l, opLats[w][op]...)
		}
		if len(l) == 0 {
			continue
		}
		st := bench.NewLatencyStats(l)
		r.Ops[name] = opReport{Ops: st.Count, OpsPerSec: float64(st.Count) / elapsed.Seconds(), P50Ms: ms(st.P50), P99Ms: ms(st.P99), MaxMs: ms(st.Max)}
		count += st.Count
	}
	for _, e := range errs {
		r.Errors += e
	}
	r.OpsPerSec = float64(count) / elapsed.Seconds()

	// List everything, then check.
	start = time.Now()
	from := ""
	for {
		page, more, err := stores[0].List(ctx, from, "", 1000)
		if err != nil {
			return r, fmt.Errorf("list: %w", err)
		}
		r.ListedKeys += len(page)
		if !more {
			break
		}
		from = page[len(page)-1].Key + "\x00"
	}
	r.ListSeconds = time.Since(start).Seconds()
	problems, n, err := stores[0].Check(ctx)
	if err != nil {
		return r, fmt.Errorf("check: %w", err)
	}
	r.ProblemsAtCheck = len(problems)
	for _, s := range stores {
		w := s.Waits()
		r.WaitsWoken += w.Woken
		r.WaitsBackedOff += w.BackedOff
		r.WaitedSeconds += w.Waited.Seconds()
	}
	r.EntriesAfter = n
	r.LeavesAfter = len(stores[0].Leaves())
	return r, nil
}

func benchCommand(e *env) *cobra.Command {
	var cfg benchConfig
	var mix string
	c := &cobra.Command{
		Use:   "bench POOL/NAME [--keys N] [--clients C] [--depth D] [--duration D] [--mix get=N,put=N,rm=N] [--k K]",
		Short: "Create a store, prefill it, run a mix of gets, puts and removes, then list and check it",
		Long: `Create store POOL/NAME (it must not exist), insert --keys keys from
--clients handles with --depth operations in flight each, run the --mix
for --duration, list every key and check the store. Reports inserts per
second while prefilling, each operation's rate and latency (p50, p99,
max), the time to list everything and the leaves after. Remove the store
afterwards by deleting the pool's kv.NAME.* objects.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pool, name, err := parseSpec(args[0])
			if err != nil {
				return err
			}
			if cfg.mix, err = parseMix(mix); err != nil {
				return err
			}
			if cfg.keys < 1 || cfg.clients < 1 || cfg.depth < 1 || cfg.duration <= 0 {
				return fmt.Errorf("--keys, --clients, --depth and --duration must be positive (EINVAL)")
			}
			if cfg.every < 0 || (cfg.plot != "" && cfg.every == 0) {
				return fmt.Errorf("--plot needs --report-every N, N > 0 (EINVAL)")
			}
			return e.withIO(cmd, pool, func(ctx context.Context, ioc *rados.IOContext) error {
				r, err := runBench(ctx, ioc, name, cfg)
				if err != nil {
					return err
				}
				if cfg.plot != "" {
					title := fmt.Sprintf("kv put latency while inserting: k %d, %d clients x %d in flight", r.K, r.Clients, cfg.depth)
					if err := plotSeries(cfg.plot, title, r.Series); err != nil {
						return err
					}
				}
				return e.out.Print(r, func(w io.Writer) error {
					fmt.Fprintf(w, "store %s/%s: k %d, %d keys, %d clients x %d in flight\n", pool, name, r.K, r.Keys, r.Clients, cfg.depth)
					fmt.Fprintf(w, "prefill: %.0f inserts/s, p99 %.2f ms\n", r.PrefillPerSec, r.PrefillP99Ms)
					if len(r.Series) > 0 {
						fmt.Fprintf(w, "  %10s %10s %9s %9s %9s\n", "keys", "inserts/s", "p50 ms", "p99 ms", "max ms")
						for _, p := range r.Series {
							fmt.Fprintf(w, "  %10d %10.0f %9.2f %9.2f %9.2f\n", p.Keys, p.PerSec, p.P50Ms, p.P99Ms, p.MaxMs)
						}
					}
					fmt.Fprintf(w, "mix over %.1f s: %.0f ops/s, %d errors\n", r.Seconds, r.OpsPerSec, r.Errors)
					for _, op := range []string{"get", "put", "rm"} {
						if o, ok := r.Ops[op]; ok {
							fmt.Fprintf(w, "  %-3s %8d ops %8.0f/s  p50 %6.2f ms  p99 %6.2f ms  max %7.2f ms\n", op, o.Ops, o.OpsPerSec, o.P50Ms, o.P99Ms, o.MaxMs)
						}
					}
					fmt.Fprintf(w, "waits for busy leaves: %d woken by a notify, %d backed off; %.2f s in all\n", r.WaitsWoken, r.WaitsBackedOff, r.WaitedSeconds)
					_, err := fmt.Fprintf(w, "list all: %d keys in %.2f s; %d leaves, %d entries, %d problems\n", r.ListedKeys, r.ListSeconds, r.LeavesAfter, r.EntriesAfter, r.ProblemsAtCheck)
					return err
				})
			})
		},
	}
	c.Flags().IntVar(&cfg.keys, "keys", 10000, "keys to insert before the mix")
	c.Flags().IntVar(&cfg.clients, "clients", 5, "store handles (clients), each with its own index cache")
	c.Flags().IntVar(&cfg.depth, "depth", 20, "operations in flight per client")
	c.Flags().DurationVar(&cfg.duration, "duration", 10*time.Second, "how long the mix runs")
	c.Flags().StringVar(&mix, "mix", "get=50,put=40,rm=10", "weights of the operations of the mix")
	c.Flags().Uint32Var(&cfg.k, "k", 400, "the store's k")
	c.Flags().IntVar(&cfg.valueSize, "value-size", 100, "bytes per value")
	c.Flags().Uint64Var(&cfg.seed, "seed", 1, "seed of the key choices")
	c.Flags().IntVar(&cfg.every, "report-every", 0, "report the prefill's put latency (p50, p99, max) and rate per this many inserts, as the store grows (0: not)")
	c.Flags().BoolVar(&cfg.noWatch, "no-watch", false, "wait for busy leaves by backoff alone, without watching the index for notifies (to compare)")
	c.Flags().StringVar(&cfg.plot, "plot", "", "draw the --report-every series (p50 and p99 put latency against keys stored) into this PNG file")
	return c
}
