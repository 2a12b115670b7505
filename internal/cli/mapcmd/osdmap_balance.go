package mapcmd

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/balancer"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/osdmap"
)

// balanceResult is what "osdmap balance" reports.
type balanceResult struct {
	Before balancer.Evaluation `json:"before"`
	After  balancer.Evaluation `json:"after"`
	Rounds int                 `json:"rounds"`
	Moves  int                 `json:"moves"`
	// Upmaps counts the pg_upmap_items entries of the result.
	Upmaps int    `json:"pg_upmap_items"`
	Output string `json:"output,omitempty"`
}

func osdmapBalanceCommand(out *cmdutil.Output) *cobra.Command {
	var (
		pools              []string
		maxDev, maxMoves   int
		rounds             int
		output, upmapsFile string
	)
	cmd := &cobra.Command{
		Use:   "balance FILE [--pool P...] [--max-deviation N] [--max-moves N] [--rounds R] [-o OUT] [--upmap-cmds CMDS]",
		Short: "Run the upmap balancer on a map, with no daemons, and show the spread before and after (like osdmaptool --upmap)",
		Long: `Run the monitors' upmap balancer on a map file: rounds of at most
--max-moves PG copies each, as the monitors run them, until every OSD is
within --max-deviation copies of its target or --rounds rounds ran (0: until
balanced). Prints the spread of PG copies per OSD before and after (as
"cuttle balancer eval"). -o writes the balanced map (one epoch per round);
--upmap-cmds writes the "cuttle osd pg-upmap-items" commands that bring the
input map to the same placement.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadOSDMap(args[0])
			if err != nil {
				return err
			}
			var ids []int64
			for _, p := range pools {
				pl := m.PoolByName(p)
				if pl == nil {
					if id, err := strconv.ParseInt(p, 10, 64); err == nil {
						pl = m.Pool(id)
					}
				}
				if pl == nil {
					return fmt.Errorf("osdmap balance: no pool %q in %s (ENOENT)", p, args[0])
				}
				ids = append(ids, pl.ID)
			}
			opts := balancer.Options{MaxDeviation: maxDev, MaxMoves: maxMoves, Pools: ids}
			res := balanceResult{Before: balancer.Eval(m, ids), Output: output}
			start := m
			for rounds == 0 || res.Rounds < rounds {
				plan := balancer.Optimize(m, opts)
				if plan.Empty() {
					break
				}
				inc, err := plan.Incremental(m)
				if err != nil {
					return err
				}
				if m, err = m.Apply(inc); err != nil {
					return fmt.Errorf("osdmap balance: round %d: %w", res.Rounds+1, err)
				}
				res.Rounds++
				res.Moves += len(plan.Moves)
			}
			res.After = balancer.Eval(m, ids)
			res.Upmaps = len(m.Spec().PGUpmapItems)
			if output != "" {
				if err := saveOSDMap(output, m); err != nil {
					return err
				}
			}
			if upmapsFile != "" {
				if err := os.WriteFile(upmapsFile, []byte(upmapCommands(start, m)), 0o644); err != nil {
					return err
				}
			}
			return out.Print(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "before:\n%s\nafter %d rounds, %d moves, %d pg_upmap_items entries:\n%s",
					res.Before.Text(), res.Rounds, res.Moves, res.Upmaps, res.After.Text())
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&pools, "pool", nil, "balance only this pool (name or id; repeatable)")
	f.IntVar(&maxDev, "max-deviation", balancer.DefaultMaxDeviation, "PG copies an OSD may be off its target")
	f.IntVar(&maxMoves, "max-moves", balancer.DefaultMaxMoves, "PG copies one round moves at most")
	f.IntVar(&rounds, "rounds", 0, "stop after this many rounds (0: until balanced)")
	f.StringVarP(&output, "out", "o", "", "write the balanced map here")
	f.StringVar(&upmapsFile, "upmap-cmds", "", "write the upmap commands from FILE's placement to the result's here")
	return cmd
}

// upmapCommands lists the commands that turn from's pg_upmap_items into
// to's.
func upmapCommands(from, to *osdmap.Map) string {
	var b strings.Builder
	fs, ts := from.Spec(), to.Spec()
	var pgs []osdmap.PG
	for pg := range fs.PGUpmapItems {
		pgs = append(pgs, pg)
	}
	for pg := range ts.PGUpmapItems {
		if _, ok := fs.PGUpmapItems[pg]; !ok {
			pgs = append(pgs, pg)
		}
	}
	slices.SortFunc(pgs, osdmap.ComparePG)
	for _, pg := range pgs {
		items, ok := ts.PGUpmapItems[pg]
		switch {
		case !ok:
			fmt.Fprintf(&b, "cuttle osd rm-pg-upmap-items %s\n", pg)
		case !slices.Equal(items, fs.PGUpmapItems[pg]):
			fmt.Fprintf(&b, "cuttle osd pg-upmap-items %s", pg)
			for _, it := range items {
				fmt.Fprintf(&b, " %d %d", it.From, it.To)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}
