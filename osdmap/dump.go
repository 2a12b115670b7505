package osdmap

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/crush"
)

// PGDump is the placement of every PG of some pools and how it spreads
// over the OSDs: what Ceph's "osdmaptool --test-map-pgs-dump-all" reports.
type PGDump struct {
	Pools []PoolPGs `json:"pools"`
	// OSDs lists the OSDs that are in and have a positive CRUSH weight.
	OSDs []OSDPGCount `json:"osds"`
	// Avg is the mean of the OSDs' Count (integer division, as Ceph).
	Avg uint64 `json:"avg"`
	// StdDev is the standard deviation of Count around Avg; Expected is
	// what a uniform random placement would give. Both are 0 when no OSD
	// is counted.
	StdDev   float64 `json:"stddev"`
	Expected float64 `json:"expected_stddev"`
	// MinOSD and MaxOSD hold the fewest and most PGs among counted OSDs
	// with at least one; -1 if none.
	MinOSD int32 `json:"min_osd"`
	MaxOSD int32 `json:"max_osd"`
	// Sizes counts PGs by acting set size.
	Sizes []SizeCount `json:"sizes"`
}

// PoolPGs holds the placements of one pool's PGs.
type PoolPGs struct {
	Pool  int64         `json:"pool"`
	PGNum uint32        `json:"pg_num"`
	PGs   []PGPlacement `json:"pgs"`
}

// PGPlacement is a Mapping that owns its slices.
type PGPlacement struct {
	PG            PG      `json:"pgid"`
	Raw           []int32 `json:"raw"`
	RawPrimary    int32   `json:"raw_primary"`
	Up            []int32 `json:"up"`
	UpPrimary     int32   `json:"up_primary"`
	Acting        []int32 `json:"acting"`
	ActingPrimary int32   `json:"acting_primary"`
}

// OSDPGCount is one OSD's share of the PGs: in how many acting sets it is,
// how many it is first of, and how many it is acting primary of.
type OSDPGCount struct {
	OSD         int32   `json:"osd"`
	Count       int     `json:"count"`
	First       int     `json:"first"`
	Primary     int     `json:"primary"`
	CrushWeight float64 `json:"crush_weight"`
	Weight      float64 `json:"weight"`
}

// SizeCount counts the PGs whose acting set has Size entries.
type SizeCount struct {
	Size  int `json:"size"`
	Count int `json:"count"`
}

// DumpPGs maps every PG of the given pools (all pools if none are given)
// and tallies them per OSD as osdmaptool does.
func (m *Map) DumpPGs(pools ...int64) (*PGDump, error) {
	if len(pools) == 0 {
		for i := range m.pools {
			pools = append(pools, m.pools[i].ID)
		}
	}
	n := len(m.osds)
	count, first, primary := make([]int, n), make([]int, n), make([]int, n)
	sizes := map[int]int{}
	d := &PGDump{MinOSD: -1, MaxOSD: -1}
	var s Scratch
	for _, id := range pools {
		p := m.Pool(id)
		if p == nil {
			return nil, fmt.Errorf("%w: %d", ErrNoSuchPool, id)
		}
		pp := PoolPGs{Pool: id, PGNum: p.PGNum, PGs: make([]PGPlacement, 0, p.PGNum)}
		for ps := range p.PGNum {
			r, err := m.PGToUpActing(PG{Pool: id, Seed: ps}, &s)
			if err != nil {
				return nil, err
			}
			pp.PGs = append(pp.PGs, PGPlacement{PG: r.PG, Raw: clone(r.Raw), RawPrimary: r.RawPrimary,
				Up: clone(r.Up), UpPrimary: r.UpPrimary, Acting: clone(r.Acting), ActingPrimary: r.ActingPrimary})
			sizes[len(r.Acting)]++
			for _, o := range r.Acting {
				if o != crush.ItemNone && int(o) < n {
					count[o]++
				}
			}
			if len(r.Acting) > 0 && r.Acting[0] != crush.ItemNone && int(r.Acting[0]) < n {
				first[r.Acting[0]]++
			}
			if r.ActingPrimary >= 0 && int(r.ActingPrimary) < n {
				primary[r.ActingPrimary]++
			}
		}
		d.Pools = append(d.Pools, pp)
	}
	d.tally(m, count, first, primary)
	for size := 0; len(d.Sizes) < len(sizes); size++ {
		if c, ok := sizes[size]; ok {
			d.Sizes = append(d.Sizes, SizeCount{Size: size, Count: c})
		}
	}
	return d, nil
}

func clone(s []int32) []int32 { return append([]int32{}, s...) }

// tally fills the per-OSD table and the statistics, with osdmaptool's
// arithmetic.
func (d *PGDump) tally(m *Map, count, first, primary []int) {
	crushWeights := deviceCrushWeights(m.crush)
	var total uint64
	for i := range m.osds {
		cw, ok := crushWeights[int32(i)]
		if !m.IsIn(int32(i)) || !ok || int32(cw) <= 0 {
			continue
		}
		d.OSDs = append(d.OSDs, OSDPGCount{OSD: int32(i), Count: count[i], First: first[i], Primary: primary[i],
			CrushWeight: float64(float32(cw) / float32(crush.WeightOne)),
			Weight:      float64(float32(m.osds[i].Weight) / float32(WeightIn))})
		total += uint64(count[i])
		if count[i] > 0 && (d.MinOSD < 0 || count[i] < count[d.MinOSD]) {
			d.MinOSD = int32(i)
		}
		if count[i] > 0 && (d.MaxOSD < 0 || count[i] > count[d.MaxOSD]) {
			d.MaxOSD = int32(i)
		}
	}
	in := len(d.OSDs)
	if in == 0 {
		return
	}
	d.Avg = total / uint64(in)
	var dev float64
	for _, o := range d.OSDs {
		diff := d.Avg - uint64(o.Count) // unsigned, as Ceph: the square is right mod 2^64
		dev += float64(diff * diff)
	}
	d.StdDev = math.Sqrt(dev / float64(in))
	d.Expected = math.Sqrt(float64(total) / float64(in) * (1.0 - 1.0/float64(in)))
}

// deviceCrushWeights returns each device's CRUSH weight as Ceph's
// CrushWrapper::get_item_weight finds it: its weight in the first bucket,
// in bucket id order -1, -2, ..., that holds it.
func deviceCrushWeights(c *crush.Map) map[int32]uint32 {
	w := map[int32]uint32{}
	for _, b := range c.Buckets() {
		for i, it := range b.Items {
			if _, seen := w[it]; !seen && it >= 0 {
				w[it] = b.Weights[i]
			}
		}
	}
	return w
}

// WriteText writes the dump as osdmaptool --test-map-pgs-dump-all prints
// it, line for line.
func (d *PGDump) WriteText(w io.Writer) error {
	var sb strings.Builder
	for _, pp := range d.Pools {
		fmt.Fprintf(&sb, "pool %d pg_num %d\n", pp.Pool, pp.PGNum)
		for _, pg := range pp.PGs {
			fmt.Fprintf(&sb, "%s raw (%s, p%d) up (%s, p%d) acting (%s, p%d)\n", pg.PG,
				FormatOSDs(pg.Raw), pg.RawPrimary, FormatOSDs(pg.Up), pg.UpPrimary, FormatOSDs(pg.Acting), pg.ActingPrimary)
		}
		if _, err := io.WriteString(w, sb.String()); err != nil {
			return err
		}
		sb.Reset()
	}
	sb.WriteString("#osd\tcount\tfirst\tprimary\tc wt\twt\n")
	for _, o := range d.OSDs {
		fmt.Fprintf(&sb, "osd.%d\t%d\t%d\t%d\t%s\t%s\n", o.OSD, o.Count, o.First, o.Primary, cppFloat(o.CrushWeight), cppFloat(o.Weight))
	}
	in := len(d.OSDs)
	fmt.Fprintf(&sb, " in %d\n", in)
	dev, edev := cppFloat(d.StdDev), cppFloat(d.Expected)
	if in == 0 {
		dev, edev = "-nan", "-nan" // Ceph divides 0 by 0
	}
	fmt.Fprintf(&sb, " avg %d stddev %s (%sx) (expected %s %sx))\n", d.Avg, dev, ratio(d.StdDev, d.Avg, in), edev, ratio(d.Expected, d.Avg, in))
	if d.MinOSD >= 0 {
		fmt.Fprintf(&sb, " min osd.%d %d\n", d.MinOSD, d.countOf(d.MinOSD))
	}
	if d.MaxOSD >= 0 {
		fmt.Fprintf(&sb, " max osd.%d %d\n", d.MaxOSD, d.countOf(d.MaxOSD))
	}
	for _, s := range d.Sizes {
		fmt.Fprintf(&sb, "size %d\t%d\n", s.Size, s.Count)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func (d *PGDump) countOf(osd int32) int {
	for _, o := range d.OSDs {
		if o.OSD == osd {
			return o.Count
		}
	}
	return 0
}

// ratio formats x/avg as C++ prints the double division.
func ratio(x float64, avg uint64, in int) string {
	switch {
	case in == 0 || (avg == 0 && x == 0):
		return "-nan"
	case avg == 0:
		return "inf"
	}
	return cppFloat(x / float64(avg))
}

// cppFloat formats x as a C++ ostream does by default (%g, 6 digits).
func cppFloat(x float64) string {
	switch {
	case math.IsNaN(x):
		return "-nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

// FormatOSDs formats an OSD list as Ceph prints a vector: "[1,2,3]", with
// holes as 2147483647.
func FormatOSDs(osds []int32) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, o := range osds {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(int(o)))
	}
	sb.WriteByte(']')
	return sb.String()
}
