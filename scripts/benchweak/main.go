// Command benchweak summarises and plots the weak-consistency experiment
// of issue 42 that scripts/bench-weak.sh runs (docs/BENCHMARKS.md,
// "Weak consistency, SSD primaries and replica reads"): it reads the
// `cuttle bench --format json` results and per-OSD read counts the
// script left in a directory and writes one JSON summary, the figures
// of the source document as PNG (gonum/plot, as `cuttle kv bench --plot`
// draws), and a Markdown table on stdout.
//
// It owns nothing else: no cluster, no measuring; it is run by the
// script (go run ./scripts/benchweak -dir RESULTS -out docs/benchmarks).
//
// Files read from -dir: osds.txt ("ID CLASS HOST" per line), and for
// each configuration CFG, object size SIZE and phase (write, seq, rand)
// CFG-SIZE-PHASE.json, plus CFG-SIZE-PHASE.reads ("ID COUNT" per line:
// the reads each OSD answered during the phase, from its
// cuttle_osd_ops_total{kind="read",result="0"}) for the read phases.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// configs are the experiment's three configurations, in plot order.
var configs = []struct{ name, label string }{
	{"all3", "size 3, ack all, default rule, primary reads"},
	{"one", "size 1"},
	{"weak", "size 3, ack primary, SSD primaries, score reads"},
}

var phases = []string{"write", "seq", "rand"}

// benchResult is the part of cuttle bench's JSON summary used here.
type benchResult struct {
	OpSize    uint64  `json:"op_size"`
	Ops       uint64  `json:"ops"`
	TotalTime float64 `json:"total_time_s"`
	MBps      float64 `json:"bandwidth_mb_s"`
	IOPS      float64 `json:"iops"`
	Latency   struct {
		Avg float64 `json:"avg"`
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
	} `json:"latency_s"`
}

// phaseSummary is one phase of one point, as the summary JSON gives it.
type phaseSummary struct {
	Ops      uint64  `json:"ops"`
	Seconds  float64 `json:"seconds"`
	MBps     float64 `json:"mb_s"`
	IOPS     float64 `json:"iops"`
	LatAvgMs float64 `json:"latency_avg_ms"`
	LatP50Ms float64 `json:"latency_p50_ms"`
	LatP99Ms float64 `json:"latency_p99_ms"`
	// ReadsSSD and ReadsHDD are the reads OSDs of each class answered
	// (read phases only).
	ReadsSSD float64 `json:"reads_ssd,omitempty"`
	ReadsHDD float64 `json:"reads_hdd,omitempty"`
}

type point struct {
	Size   string                  `json:"size"`
	Bytes  uint64                  `json:"bytes"`
	Phases map[string]phaseSummary `json:"phases"`
}

type configSummary struct {
	Name   string  `json:"name"`
	Label  string  `json:"label"`
	Points []point `json:"points"`
}

type summary struct {
	Note    string          `json:"note,omitempty"`
	OSDs    []osdInfo       `json:"osds"`
	Configs []configSummary `json:"configs"`
}

type osdInfo struct {
	ID    int    `json:"id"`
	Class string `json:"class"`
	Host  string `json:"host"`
}

func main() {
	dir := flag.String("dir", "", "the directory scripts/bench-weak.sh wrote its results to (required)")
	out := flag.String("out", "", "where to write PREFIX.json and the PNGs (default: -dir)")
	prefix := flag.String("prefix", "weak", "the output files' name prefix")
	note := flag.String("note", "", "a note for the summary (the machine, its load)")
	flag.Parse()
	if err := run(*dir, *out, *prefix, *note, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchweak:", err)
		os.Exit(1)
	}
}

func run(dir, out, prefix, note string, stdout io.Writer) error {
	if dir == "" {
		return errors.New("-dir is required: the directory scripts/bench-weak.sh wrote (EINVAL)")
	}
	if out == "" {
		out = dir
	}
	s, err := load(dir)
	if err != nil {
		return err
	}
	s.Note = note
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, prefix+".json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	for _, f := range figures {
		if err := draw1(s, f, filepath.Join(out, prefix+"-"+f.file+".png")); err != nil {
			return err
		}
	}
	return table(s, stdout)
}

// load reads the results in dir.
func load(dir string) (*summary, error) {
	s := &summary{}
	classes := map[int]string{}
	lines, err := readLines(filepath.Join(dir, "osds.txt"))
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		var o osdInfo
		if _, err := fmt.Sscan(l, &o.ID, &o.Class, &o.Host); err != nil {
			return nil, fmt.Errorf("osds.txt: %q: %w", l, err)
		}
		s.OSDs = append(s.OSDs, o)
		classes[o.ID] = o.Class
	}
	for _, c := range configs {
		cs := configSummary{Name: c.name, Label: c.label}
		files, err := filepath.Glob(filepath.Join(dir, c.name+"-*-write.json"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			size := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), c.name+"-"), "-write.json")
			p := point{Size: size, Phases: map[string]phaseSummary{}}
			for _, ph := range phases {
				base := filepath.Join(dir, fmt.Sprintf("%s-%s-%s", c.name, size, ph))
				var r benchResult
				b, err := os.ReadFile(base + ".json")
				if errors.Is(err, os.ErrNotExist) {
					continue
				} else if err != nil {
					return nil, err
				}
				if err := json.Unmarshal(b, &r); err != nil {
					return nil, fmt.Errorf("%s.json: %w", base, err)
				}
				if ph == "write" {
					p.Bytes = r.OpSize
				}
				ps := phaseSummary{Ops: r.Ops, Seconds: r.TotalTime, MBps: r.MBps, IOPS: r.IOPS,
					LatAvgMs: r.Latency.Avg * 1e3, LatP50Ms: r.Latency.P50 * 1e3, LatP99Ms: r.Latency.P99 * 1e3}
				if ph != "write" {
					reads, err := readLines(base + ".reads")
					if err != nil {
						return nil, err
					}
					for _, l := range reads {
						var id int
						var n float64
						if _, err := fmt.Sscan(l, &id, &n); err != nil {
							return nil, fmt.Errorf("%s.reads: %q: %w", base, l, err)
						}
						switch classes[id] {
						case "ssd":
							ps.ReadsSSD += n
						case "hdd":
							ps.ReadsHDD += n
						}
					}
				}
				p.Phases[ph] = ps
			}
			cs.Points = append(cs.Points, p)
		}
		sort.Slice(cs.Points, func(i, j int) bool { return cs.Points[i].Bytes < cs.Points[j].Bytes })
		s.Configs = append(s.Configs, cs)
	}
	return s, nil
}

func readLines(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// figure is one of the document's figures: a value of each point, per
// configuration, against the object size.
type figure struct {
	file, title, y string
	log            bool
	value          func(point) float64
}

var figures = []figure{
	{"fig6-write-latency", "Write latency (mean)", "ms", true,
		func(p point) float64 { return p.Phases["write"].LatAvgMs }},
	{"fig7-ssd-hits", "Reads answered by SSD OSDs (seq + rand)", "% of reads", false,
		func(p point) float64 {
			s, h := p.Phases["seq"].ReadsSSD+p.Phases["rand"].ReadsSSD, p.Phases["seq"].ReadsHDD+p.Phases["rand"].ReadsHDD
			if s+h == 0 {
				return -1
			}
			return 100 * s / (s + h)
		}},
	{"fig8-write-throughput", "Write throughput", "MiB/s", true,
		func(p point) float64 { return p.Phases["write"].MBps }},
	{"fig9-seq-read", "Sequential read throughput", "MiB/s", true,
		func(p point) float64 { return p.Phases["seq"].MBps }},
	{"fig10-rand-read", "Random read throughput", "MiB/s", true,
		func(p point) float64 { return p.Phases["rand"].MBps }},
}

var palette = []color.Color{
	color.RGBA{R: 200, A: 255},
	color.RGBA{G: 140, A: 255},
	color.RGBA{B: 200, A: 255},
}

// draw1 draws figure f of s into file. Points without a value (a phase
// that did not run) are left out.
func draw1(s *summary, f figure, file string) error {
	p := plot.New()
	p.Title.Text = f.title
	p.X.Label.Text = "object size"
	p.Y.Label.Text = f.y
	var names []string
	for _, c := range s.Configs {
		if len(c.Points) > len(names) {
			names = names[:0]
			for _, pt := range c.Points {
				names = append(names, pt.Size)
			}
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("%s: no results to draw (EINVAL)", file)
	}
	p.Add(plotter.NewGrid())
	if f.log {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	} else {
		p.Y.Min, p.Y.Max = 0, 100
	}
	for i, c := range s.Configs {
		var xys plotter.XYs
		for _, pt := range c.Points {
			x := float64(slices.Index(names, pt.Size))
			if v := f.value(pt); v > 0 || !f.log && v >= 0 {
				xys = append(xys, plotter.XY{X: x, Y: v})
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		line.Color, points.Color = palette[i%len(palette)], palette[i%len(palette)]
		line.Width = vg.Points(1.5)
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(c.Label, line, points)
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.3, float64(len(names))-0.7
	p.Legend.Top = true
	p.Legend.Left = f.file != "fig7-ssd-hits"
	if err := p.Save(8*vg.Inch, 5*vg.Inch, file); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// table prints, per object size, each configuration's figures and the
// ratios of the weak configuration to the size-3 ack all baseline.
func table(s *summary, w io.Writer) error {
	by := map[string]map[string]point{}
	var sizes []point
	for _, c := range s.Configs {
		by[c.Name] = map[string]point{}
		for _, p := range c.Points {
			by[c.Name][p.Size] = p
			if c.Name == configs[0].name {
				sizes = append(sizes, p)
			}
		}
	}
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	mb := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return strconv.FormatFloat(a/b, 'f', 2, 64) + "x"
	}
	fmt.Fprintln(w, "| size | config | write lat ms (p50 / p99) | write MiB/s | seq MiB/s | rand MiB/s | reads at SSDs |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, sz := range sizes {
		for _, c := range s.Configs {
			p, ok := by[c.Name][sz.Size]
			if !ok {
				continue
			}
			wr, sq, rn := p.Phases["write"], p.Phases["seq"], p.Phases["rand"]
			hits := "-"
			if t := sq.ReadsSSD + sq.ReadsHDD + rn.ReadsSSD + rn.ReadsHDD; t > 0 {
				hits = fmt.Sprintf("%.0f%%", 100*(sq.ReadsSSD+rn.ReadsSSD)/t)
			}
			fmt.Fprintf(w, "| %s | %s | %s (%s / %s) | %s | %s | %s | %s |\n", sz.Size, c.Name, ms(wr.LatAvgMs), ms(wr.LatP50Ms),
				ms(wr.LatP99Ms), mb(wr.MBps), mb(sq.MBps), mb(rn.MBps), hits)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| size | weak / all3: write latency | write MiB/s | seq MiB/s | rand MiB/s |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, sz := range sizes {
		a, k := by["all3"][sz.Size], by["weak"][sz.Size]
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", sz.Size,
			ratio(k.Phases["write"].LatAvgMs, a.Phases["write"].LatAvgMs), ratio(k.Phases["write"].MBps, a.Phases["write"].MBps),
			ratio(k.Phases["seq"].MBps, a.Phases["seq"].MBps), ratio(k.Phases["rand"].MBps, a.Phases["rand"].MBps))
	}
	return nil
}
