package mapcmd

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/osdmap"
)

// osdmapView is what "osdmap print" shows, shaped for JSON.
type osdmapView struct {
	Epoch        uint32         `json:"epoch"`
	FSID         string         `json:"fsid"`
	Created      time.Time      `json:"created"`
	Modified     time.Time      `json:"modified"`
	Flags        string         `json:"flags"`
	MaxOSD       int32          `json:"max_osd"`
	Pools        []poolView     `json:"pools"`
	OSDs         []osdView      `json:"osds"`
	PGTemp       []pgOSDsView   `json:"pg_temp"`
	PrimaryTemp  []pgOSDView    `json:"primary_temp"`
	PGUpmap      []pgOSDsView   `json:"pg_upmap"`
	PGUpmapItems []pgUpmapsView `json:"pg_upmap_items"`
	Crush        crushInfoView  `json:"crush"`
	pools        []osdmap.Pool  // for the plain form
}

type poolView struct {
	ID         int64  `json:"pool"`
	Name       string `json:"pool_name"`
	Type       string `json:"type"`
	Size       int    `json:"size"`
	MinSize    int    `json:"min_size"`
	CrushRule  int32  `json:"crush_rule"`
	PGNum      uint32 `json:"pg_num"`
	PGPNum     uint32 `json:"pgp_num"`
	Flags      uint64 `json:"flags"`
	FlagNames  string `json:"flags_names"`
	LastChange uint32 `json:"last_change"`
}

type osdView struct {
	OSD             int32   `json:"osd"`
	Up              bool    `json:"up"`
	In              bool    `json:"in"`
	Weight          float64 `json:"weight"`
	PrimaryAffinity float64 `json:"primary_affinity"`
	Addr            string  `json:"addr"`
	UpFrom          uint32  `json:"up_from"`
	UpThru          uint32  `json:"up_thru"`
	DownAt          uint32  `json:"down_at"`
	LostAt          uint32  `json:"lost_at"`
	State           string  `json:"state"`
}

type pgOSDsView struct {
	PG   osdmap.PG `json:"pgid"`
	OSDs []int32   `json:"osds"`
}

type pgOSDView struct {
	PG  osdmap.PG `json:"pgid"`
	OSD int32     `json:"osd"`
}

type pgUpmapsView struct {
	PG       osdmap.PG          `json:"pgid"`
	Mappings []osdmap.UpmapItem `json:"mappings"`
}

type crushInfoView struct {
	Devices  int    `json:"devices"`
	Buckets  int    `json:"buckets"`
	Rules    int    `json:"rules"`
	Tunables string `json:"tunables_profile"`
}

func osdmapPrintCommand(out *cmdutil.Output) *cobra.Command {
	return &cobra.Command{
		Use:   "print FILE",
		Short: "Print an OSD map (like osdmaptool --print)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadOSDMap(args[0])
			if err != nil {
				return err
			}
			v := viewOSDMap(m)
			return out.Print(v, v.plain)
		},
	}
}

// fixedWeight formats a 16.16 weight as Ceph prints the float.
func fixedWeight(w uint32) float64 { return float64(float32(w) / float32(0x10000)) }

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }

func viewOSDMap(m *osdmap.Map) osdmapView {
	c := m.Crush()
	v := osdmapView{
		Epoch: uint32(m.Epoch()), FSID: m.FSID().String(), Created: m.Created(), Modified: m.Modified(),
		Flags: m.Flags().String(), MaxOSD: m.MaxOSD(), pools: m.Pools(),
		Crush: crushInfoView{Devices: len(c.Devices()), Buckets: len(c.Buckets()), Rules: len(c.Rules()),
			Tunables: c.Tunables().ProfileName()},
		Pools: []poolView{}, OSDs: []osdView{}, PGTemp: []pgOSDsView{}, PrimaryTemp: []pgOSDView{},
		PGUpmap: []pgOSDsView{}, PGUpmapItems: []pgUpmapsView{},
	}
	for _, p := range m.Pools() {
		v.Pools = append(v.Pools, poolView{ID: p.ID, Name: p.Name, Type: p.Type.String(), Size: p.Size, MinSize: p.MinSize,
			CrushRule: p.CrushRule, PGNum: p.PGNum, PGPNum: p.PGPNum, Flags: uint64(p.Flags), FlagNames: p.Flags.String(),
			LastChange: uint32(p.LastChange)})
	}
	for id := range m.MaxOSD() {
		o := m.OSD(id)
		if !o.Exists() {
			continue
		}
		v.OSDs = append(v.OSDs, osdView{OSD: id, Up: o.IsUp(), In: o.IsIn(), Weight: fixedWeight(o.Weight),
			PrimaryAffinity: fixedWeight(o.PrimaryAffinity), Addr: o.Addr, UpFrom: uint32(o.UpFrom),
			UpThru: uint32(o.UpThru), DownAt: uint32(o.DownAt), LostAt: uint32(o.LostAt), State: o.State.String()})
	}
	s := m.Spec()
	for _, pg := range slices.SortedFunc(maps.Keys(s.PGTemp), osdmap.ComparePG) {
		v.PGTemp = append(v.PGTemp, pgOSDsView{PG: pg, OSDs: s.PGTemp[pg]})
	}
	for _, pg := range slices.SortedFunc(maps.Keys(s.PrimaryTemp), osdmap.ComparePG) {
		v.PrimaryTemp = append(v.PrimaryTemp, pgOSDView{PG: pg, OSD: s.PrimaryTemp[pg]})
	}
	for _, pg := range slices.SortedFunc(maps.Keys(s.PGUpmap), osdmap.ComparePG) {
		v.PGUpmap = append(v.PGUpmap, pgOSDsView{PG: pg, OSDs: s.PGUpmap[pg]})
	}
	for _, pg := range slices.SortedFunc(maps.Keys(s.PGUpmapItems), osdmap.ComparePG) {
		v.PGUpmapItems = append(v.PGUpmapItems, pgUpmapsView{PG: pg, Mappings: s.PGUpmapItems[pg]})
	}
	return v
}

// cephTime formats t as Ceph prints a utime_t; the zero time prints as
// "0.000000".
func cephTime(t time.Time) string {
	if t.IsZero() {
		return "0.000000"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000-0700")
}

// plain prints the map in the layout of osdmaptool --print.
func (v osdmapView) plain(w io.Writer) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "epoch %d\nfsid %s\ncreated %s\nmodified %s\nflags %s\n", v.Epoch, v.FSID,
		cephTime(v.Created), cephTime(v.Modified), v.Flags)
	fmt.Fprintf(&sb, "crush %d devices %d buckets %d rules tunables %s\n\n", v.Crush.Devices, v.Crush.Buckets,
		v.Crush.Rules, v.Crush.Tunables)
	for i := range v.pools {
		fmt.Fprintf(&sb, "%s\n", &v.pools[i])
	}
	fmt.Fprintf(&sb, "\nmax_osd %d\n", v.MaxOSD)
	for _, o := range v.OSDs {
		up, in := " down", " out"
		if o.Up {
			up = " up  "
		}
		if o.In {
			in = " in "
		}
		fmt.Fprintf(&sb, "osd.%d%s%s weight %s", o.OSD, up, in, formatFloat(o.Weight))
		if o.PrimaryAffinity != 1 {
			fmt.Fprintf(&sb, " primary_affinity %s", formatFloat(o.PrimaryAffinity))
		}
		addr := o.Addr
		if addr == "" {
			addr = "-"
		}
		fmt.Fprintf(&sb, " up_from %d up_thru %d down_at %d", o.UpFrom, o.UpThru, o.DownAt)
		if o.LostAt != 0 {
			fmt.Fprintf(&sb, " lost_at %d", o.LostAt)
		}
		fmt.Fprintf(&sb, " %s %s\n", addr, o.State)
	}
	sb.WriteByte('\n')
	for _, e := range v.PGUpmap {
		fmt.Fprintf(&sb, "pg_upmap %s %s\n", e.PG, osdmap.FormatOSDs(e.OSDs))
	}
	for _, e := range v.PGUpmapItems {
		var pairs []int32
		for _, it := range e.Mappings {
			pairs = append(pairs, it.From, it.To)
		}
		fmt.Fprintf(&sb, "pg_upmap_items %s %s\n", e.PG, osdmap.FormatOSDs(pairs))
	}
	for _, e := range v.PGTemp {
		fmt.Fprintf(&sb, "pg_temp %s %s\n", e.PG, osdmap.FormatOSDs(e.OSDs))
	}
	for _, e := range v.PrimaryTemp {
		fmt.Fprintf(&sb, "primary_temp %s %d\n", e.PG, e.OSD)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// osdList formats an up or acting set as "ceph osd map" does: holes print
// as NONE.
func osdList(osds []int32) string {
	parts := make([]string, len(osds))
	for i, o := range osds {
		if o == crush.ItemNone {
			parts[i] = "NONE"
		} else {
			parts[i] = strconv.Itoa(int(o))
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}
