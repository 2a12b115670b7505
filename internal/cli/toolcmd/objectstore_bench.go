package toolcmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/bench"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
)

// benchResult is one line of "objectstore bench".
type benchResult struct {
	Workload    string  `json:"workload"`
	BlockSize   uint64  `json:"block_size"`
	Concurrency int     `json:"concurrency"`
	Ops         int64   `json:"ops"`
	Bytes       uint64  `json:"bytes"`
	Seconds     float64 `json:"seconds"`
	MiBps       float64 `json:"mib_per_sec"`
	IOPS        float64 `json:"iops"`
	P50us       int64   `json:"p50_us"`
	P99us       int64   `json:"p99_us"`
	MaxUs       int64   `json:"max_us"`
}

func osBenchCommand(out *cmdutil.Output, f *osFlags) *cobra.Command {
	var (
		workloads          string
		objSize, bs, total string
		w                  bench.Workload
	)
	cmd := &cobra.Command{
		Use:   "bench --path DIR [--workload seq-write,seq-read,rand-write,rand-read] [...]",
		Short: "Measure the store's throughput and latency (internal/bench)",
		Long: `Run workloads against the store and print, for each, throughput, operations
per second and latency percentiles. Writes wait until durable unless
--applied-only. Read and overwrite workloads first prefill their objects
(not measured); objects are written to collection 1.0_head, which is
created if missing, and are left in the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			var kinds []bench.Kind
			for _, name := range strings.Split(workloads, ",") {
				k, err := bench.ParseKind(strings.TrimSpace(name))
				if err != nil {
					return err
				}
				kinds = append(kinds, k)
			}
			if w.ObjectSize, err = cmdutil.ParseSize(objSize); err != nil {
				return fmt.Errorf("--object-size: %w", err)
			}
			if bs != "" {
				if w.BlockSize, err = cmdutil.ParseSize(bs); err != nil {
					return fmt.Errorf("--block-size: %w", err)
				}
			}
			if total != "" {
				if w.TotalBytes, err = cmdutil.ParseSize(total); err != nil {
					return fmt.Errorf("--total: %w", err)
				}
			}
			s, err := f.open()
			if err != nil {
				return err
			}
			defer closeStore(s, &err)
			var results []benchResult
			for _, k := range kinds {
				w.Kind = k
				r, err := bench.RunObjectStore(cmd.Context(), s, w)
				if err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
				results = append(results, benchResult{Workload: string(r.Workload), BlockSize: r.BlockSize, Concurrency: r.Concurrency,
					Ops: r.Ops, Bytes: r.Bytes, Seconds: r.Elapsed.Seconds(), MiBps: r.MiBps, IOPS: r.IOPS,
					P50us: r.P50.Microseconds(), P99us: r.P99.Microseconds(), MaxUs: r.Max.Microseconds()})
				if out.Format != cmdutil.FormatJSON {
					if _, err := fmt.Fprintln(out.W, r); err != nil {
						return err
					}
				}
			}
			if out.Format == cmdutil.FormatJSON {
				return out.Print(results, nil)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&workloads, "workload", "seq-write,seq-read,rand-write,rand-read", "comma-separated workloads to run in order")
	fl.StringVar(&objSize, "object-size", "4M", "size of each object")
	fl.StringVar(&bs, "block-size", "", "bytes per operation (default: the object size for seq-*, 4K for rand-*)")
	fl.IntVar(&w.Objects, "objects", 0, "objects the read and overwrite workloads spread over (default: 1 GiB's worth, at most 4096)")
	fl.IntVar(&w.Concurrency, "jobs", 1, "concurrent operations")
	fl.DurationVar(&w.Duration, "duration", 10*time.Second, "time limit of each workload")
	fl.StringVar(&total, "total", "", "byte limit of each workload (whichever of --duration and --total comes first)")
	fl.BoolVar(&w.AppliedOnly, "applied-only", false, "writes wait until visible, not until durable")
	return cmd
}
