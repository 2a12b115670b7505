package mapcmd

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
)

// crushTestFlags are the options of "cuttle crush test", named as
// crushtool's.
type crushTestFlags struct {
	in                 string
	rule               int32
	numRep             int
	minX, maxX         int32
	poolID             int64
	weights            []string
	showMappings       bool
	showBadMappings    bool
	showStatistics     bool
	showUtilization    bool
	showUtilizationAll bool
	workers            int
	checkClass         string // --check-primary-class
	checkDomain        string // --check-failure-domain
}

// crushTestResult is the JSON form of one rule x num_rep test.
type crushTestResult struct {
	Rule        int32          `json:"rule"`
	RuleName    string         `json:"rule_name"`
	NumRep      int            `json:"num_rep"`
	MinX        int32          `json:"min_x"`
	MaxX        int32          `json:"max_x"`
	Mappings    []crushMapping `json:"mappings,omitempty"`
	BadMappings []crushMapping `json:"bad_mappings,omitempty"`
	ResultSizes map[string]int `json:"result_sizes"`
	Utilization []deviceUsage  `json:"utilization,omitempty"`
	// Check is what --check-primary-class found.
	Check *crush.HybridStats `json:"check,omitempty"`
}

type crushMapping struct {
	X    int32   `json:"x"`
	OSDs []int32 `json:"osds"`
}

type deviceUsage struct {
	Device   int32   `json:"device"`
	Stored   int     `json:"stored"`
	Expected float64 `json:"expected"`
}

func crushTestCommand(out *cmdutil.Output) *cobra.Command {
	var f crushTestFlags
	cmd := &cobra.Command{
		Use:   "test -i MAP [--rule R] [--num-rep N] [--min-x A --max-x B] [--show-mappings]",
		Short: "Map a range of inputs through rules and report the results (as crushtool --test)",
		Long: `Map inputs A..B through rule R asking for N replicas and print what crushtool
--test prints for the same options: --show-mappings lines
"CRUSH rule R x X [a,b,c]", --show-bad-mappings for short or incomplete
results, --show-statistics for result sizes and --show-utilization for the
placements per device against what the weights predict.

--check-primary-class CLASS reports in how many results the first device
(a PG's primary) has that class, in how many another copy shares the
primary's --check-failure-domain bucket (default host), and in how many two
other copies share one: what a hybrid rule (cuttle crush rule create-hybrid)
promises and what it does not.

Without --rule every rule is tested; without --num-rep, each rule's
min_size..max_size. --weight ID W reweights device ID (0..1, as the OSD map's
in/out weight) and may repeat. --pool-id P hashes every x with P first, as
pools do. Mapping runs on every core; output stays in input order.`,
		// crushtool spells it "--weight ID W": the flag takes ID and W
		// arrives as a positional argument, paired up in order.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > len(f.weights) {
				return fmt.Errorf("unexpected argument %q", args[len(f.weights)])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadCrushMap(f.in)
			if err != nil {
				return err
			}
			weights, err := pairWeightArgs(f.weights, args)
			if err != nil {
				return err
			}
			run := crush.TestRun{MinX: f.minX, MaxX: f.maxX, Workers: f.workers, ChooseArgs: m.ChooseArgsFor(0)}
			if run.Weights, err = crushtoolWeights(m, weights); err != nil {
				return err
			}
			if cmd.Flags().Changed("pool-id") {
				run.PoolID = &f.poolID
			}
			return runCrushTests(cmd, out, m, run, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.in, "in", "i", "", "map to test (text or binary)")
	fl.Int32Var(&f.rule, "rule", -1, "rule id to test (default: every rule)")
	fl.IntVar(&f.numRep, "num-rep", 0, "replicas to ask for (default: the rule's min_size..max_size)")
	fl.Int32Var(&f.minX, "min-x", 0, "first input")
	fl.Int32Var(&f.maxX, "max-x", 1023, "last input")
	fl.Int64Var(&f.poolID, "pool-id", 0, "hash each input with this pool id first")
	fl.StringArrayVar(&f.weights, "weight", nil, "reweight a device: --weight ID W (or ID=W), W in 0..1; repeatable")
	fl.BoolVar(&f.showMappings, "show-mappings", false, "print every mapping")
	fl.BoolVar(&f.showBadMappings, "show-bad-mappings", false, "print mappings with fewer items than asked for")
	fl.BoolVar(&f.showStatistics, "show-statistics", false, "print how many inputs got each result size")
	fl.BoolVar(&f.showUtilization, "show-utilization", false, "print placements per device (devices with any)")
	fl.BoolVar(&f.showUtilizationAll, "show-utilization-all", false, "print placements for every device")
	fl.IntVar(&f.workers, "workers", 0, "goroutines mapping in parallel (default: GOMAXPROCS)")
	fl.StringVar(&f.checkClass, "check-primary-class", "", "report whether each result's first device (the primary) has this class, and where the other copies are")
	fl.StringVar(&f.checkDomain, "check-failure-domain", "host", "with --check-primary-class: the bucket type copies should not share")
	return cmd
}

// pairWeightArgs joins each --weight value lacking "=" with the next
// positional argument: "--weight 3 0.5" becomes "3=0.5".
func pairWeightArgs(flags, args []string) ([]string, error) {
	out := make([]string, len(flags))
	for i, f := range flags {
		if strings.Contains(f, "=") {
			out[i] = f
			continue
		}
		if len(args) == 0 {
			return nil, fmt.Errorf("--weight %s: missing weight (want --weight ID W)", f)
		}
		out[i], args = f+"="+args[0], args[1:]
	}
	if len(args) > 0 {
		return nil, fmt.Errorf("unexpected argument %q", args[0])
	}
	return out, nil
}

// crushtoolWeights builds crushtool's reweight vector: 1.0 for devices in
// some bucket, 0 for the rest, then each --weight "ID W" (or "ID=W").
func crushtoolWeights(m *crush.Map, specs []string) ([]uint32, error) {
	w := make([]uint32, m.MaxDevices())
	for _, b := range m.Buckets() {
		for _, item := range b.Items {
			if item >= 0 {
				w[item] = crush.WeightOne
			}
		}
	}
	for _, s := range specs {
		idText, valText, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("--weight %q: want ID W", s)
		}
		id, err := strconv.Atoi(strings.TrimSpace(idText))
		if err != nil || id < 0 || id >= len(w) {
			return nil, fmt.Errorf("--weight %q: no device %s", s, idText)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(valText), 32)
		if err != nil {
			return nil, fmt.Errorf("--weight %q: %w", s, err)
		}
		// crushtool computes (int)((float)w * 0x10000) and clamps it.
		fixed := int64(float32(v) * float32(crush.WeightOne))
		w[id] = uint32(min(max(fixed, 0), crush.WeightOne))
	}
	return w, nil
}

func runCrushTests(cmd *cobra.Command, out *cmdutil.Output, m *crush.Map, run crush.TestRun, f crushTestFlags) error {
	rules := m.Rules()
	if f.rule >= 0 {
		r := m.Rule(f.rule)
		if r == nil {
			return fmt.Errorf("no rule %d in the map", f.rule)
		}
		rules = []*crush.Rule{r}
	}
	bw := bufio.NewWriterSize(out.W, 1<<16)
	var results []crushTestResult
	for _, r := range rules {
		lo, hi := int(r.MinSize), int(r.MaxSize)
		if f.numRep > 0 {
			lo, hi = f.numRep, f.numRep
		}
		for n := lo; n <= hi; n++ {
			res, err := runCrushTest(cmd, out, bw, m, r, n, run, f)
			if err != nil {
				return err
			}
			results = append(results, res)
		}
	}
	if out.Format == cmdutil.FormatJSON {
		return out.Print(results, nil)
	}
	return bw.Flush()
}

// runCrushTest runs one rule at one replica count, printing crushtool's
// lines to bw in plain mode.
func runCrushTest(cmd *cobra.Command, out *cmdutil.Output, bw *bufio.Writer, m *crush.Map, r *crush.Rule, numRep int,
	run crush.TestRun, f crushTestFlags) (crushTestResult, error) {
	run.Rule, run.NumRep = r.ID, numRep
	plain := out.Format != cmdutil.FormatJSON
	res := crushTestResult{Rule: r.ID, RuleName: r.Name, NumRep: numRep, MinX: run.MinX, MaxX: run.MaxX,
		ResultSizes: map[string]int{}}
	summary := f.showStatistics || f.showUtilization || f.showUtilizationAll
	if plain && summary {
		fmt.Fprintf(bw, "rule %d (%s), x = %d..%d, numrep = %d..%d\n", r.ID, r.Name, run.MinX, run.MaxX, numRep, numRep)
	}
	switch {
	case plain:
		run.Format = func(dst []byte, x int32, result []int32) []byte {
			if f.showMappings {
				dst = appendMapping(dst, r.ID, x, result)
			}
			if f.showBadMappings && isBadMapping(result, numRep) {
				dst = fmt.Appendf(dst, "bad mapping rule %d x %d num_rep %d result ", r.ID, x, numRep)
				dst = appendList(dst, result)
				dst = append(dst, '\n')
			}
			return dst
		}
	case f.showMappings || f.showBadMappings:
		run.Format = func(dst []byte, x int32, result []int32) []byte {
			if f.showMappings {
				res.Mappings = append(res.Mappings, crushMapping{X: x, OSDs: slices.Clone(result)})
			}
			if f.showBadMappings && isBadMapping(result, numRep) {
				res.BadMappings = append(res.BadMappings, crushMapping{X: x, OSDs: slices.Clone(result)})
			}
			return dst
		}
		run.Workers = 1 // Format appends to res; keep it single-threaded
	}
	var chk *crush.HybridCheck
	if f.checkClass != "" {
		typ, ok := m.TypeID(f.checkDomain)
		if !ok {
			return res, fmt.Errorf("--check-failure-domain %s: no such bucket type in the map", f.checkDomain)
		}
		chk = m.NewHybridCheck(f.checkClass, typ)
		inner := run.Format
		run.Format = func(dst []byte, x int32, result []int32) []byte {
			chk.Add(result)
			if inner != nil {
				return inner(dst, x, result)
			}
			return dst
		}
		run.Workers = 1 // the check counts in order, unlocked
	}
	stats, err := m.RunTest(cmd.Context(), run, bw)
	if err != nil {
		return res, err
	}
	if chk != nil {
		s := chk.Stats
		res.Check = &s
		if plain {
			fmt.Fprintf(bw, "rule %d (%s) num_rep %d primary of class %s: %d/%d\n", r.ID, r.Name, numRep, f.checkClass,
				s.PrimaryInClass, s.Mappings)
			fmt.Fprintf(bw, "rule %d (%s) num_rep %d a copy in the primary's %s: %d/%d\n", r.ID, r.Name, numRep, f.checkDomain,
				s.ReplicaWithPrimary, s.Mappings)
			fmt.Fprintf(bw, "rule %d (%s) num_rep %d two other copies in one %s: %d/%d\n", r.ID, r.Name, numRep, f.checkDomain,
				s.ReplicasShareDomain, s.Mappings)
		}
	}
	sizes := make([]int, 0, len(stats.ResultSizes))
	for size, n := range stats.ResultSizes {
		sizes = append(sizes, size)
		res.ResultSizes[strconv.Itoa(size)] = n
	}
	slices.Sort(sizes)
	if plain && summary {
		for _, size := range sizes {
			fmt.Fprintf(bw, "rule %d (%s) num_rep %d result size == %d:\t%d/%d\n",
				r.ID, r.Name, numRep, size, stats.ResultSizes[size], stats.Inputs)
		}
	}
	if f.showUtilization || f.showUtilizationAll {
		for id, stored := range stats.Placements {
			if stored == 0 && !f.showUtilizationAll {
				continue
			}
			u := deviceUsage{Device: int32(id), Stored: stored, Expected: stats.Expected[id]}
			res.Utilization = append(res.Utilization, u)
			if plain {
				fmt.Fprintf(bw, "  device %d:\t\t stored : %d\t expected : %s\n", id, stored,
					strconv.FormatFloat(u.Expected, 'g', 6, 64))
			}
		}
	}
	return res, nil
}

// appendMapping appends crushtool's "CRUSH rule R x X [a,b,c]\n".
func appendMapping(dst []byte, rule, x int32, result []int32) []byte {
	dst = append(dst, "CRUSH rule "...)
	dst = strconv.AppendInt(dst, int64(rule), 10)
	dst = append(dst, " x "...)
	dst = strconv.AppendInt(dst, int64(x), 10)
	dst = append(dst, ' ')
	dst = appendList(dst, result)
	return append(dst, '\n')
}

func appendList(dst []byte, items []int32) []byte {
	dst = append(dst, '[')
	for i, v := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(v), 10)
	}
	return append(dst, ']')
}

// isBadMapping reports a result with fewer devices than asked for.
func isBadMapping(result []int32, numRep int) bool {
	return len(result) != numRep || slices.Contains(result, crush.ItemNone)
}
