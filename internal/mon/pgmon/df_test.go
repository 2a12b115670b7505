package pgmon

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

const gib = 1 << 30

func (tm *testMon) df() (DFView, string) {
	tm.t.Helper()
	r := must(tm.t, tm.run("df"))
	var v DFView
	if err := json.Unmarshal(r.Data, &v); err != nil {
		tm.t.Fatal(err)
	}
	return v, r.Text
}

func (tm *testMon) osdDF() (OSDDFView, string) {
	tm.t.Helper()
	r := must(tm.t, tm.run("osd df"))
	var v OSDDFView
	if err := json.Unmarshal(r.Data, &v); err != nil {
		tm.t.Fatal(err)
	}
	return v, r.Text
}

// usage sends osd id's store usage (total and used, in GiB) with the PGs
// it is the primary of, made by stat.
func (tm *testMon) usage(id int32, total, used uint64, stat func(osdmap.Mapping) wire.PGStat) {
	tm.t.Helper()
	for _, r := range tm.reports(stat) {
		if r.OSD == id {
			r.Total, r.Used, r.Available = total*gib, used*gib, (total-used)*gib
			must(tm.t, tm.report(r))
			return
		}
	}
	tm.t.Fatalf("osd.%d is not up", id)
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*max(1, math.Abs(b)) }

// Before any report, "df" and "osd df" show the pools and OSDs with no
// space: nothing counts, MAX AVAIL is 0, every OSD is "not reported".
func TestDFEmptyCluster(t *testing.T) {
	tm := newTestMon(t)
	v, text := tm.df()
	if v.Stats != (DFStats{}) || len(v.StatsByClass) != 0 || len(v.Pools) != 1 {
		t.Fatalf("df of a cluster with no reports: %+v", v)
	}
	if p := v.Pools[0]; p.Name != "pool1" || p.ID != 1 || p.PGNum != 4 || p.Stats != (DFPoolStats{}) {
		t.Errorf("pool: %+v", p)
	}
	want := `--- RAW STORAGE ---
CLASS  SIZE  AVAIL  USED  RAW USED  %RAW USED
TOTAL   0 B    0 B   0 B       0 B       0.00

--- POOLS ---
POOL   ID  PGS  STORED  OBJECTS  USED  %USED  MAX AVAIL
pool1   1    4     0 B        0   0 B   0.00        0 B
`
	if text != want {
		t.Errorf("df text:\n%s\nwant\n%s", text, want)
	}
	o, text := tm.osdDF()
	if len(o.Nodes) != 3 || len(o.Stray) != 0 || o.Summary != (OSDDFSummary{}) {
		t.Fatalf("osd df: %+v", o)
	}
	for _, n := range o.Nodes {
		// 4 PGs of size 3 on 3 OSDs: every OSD holds every PG.
		if n.Reported || n.Status != "up" || n.PGs != 4 || n.KB != 0 || n.Var != 0 || n.CrushWeight != 1 || n.Reweight != 1 ||
			n.Type != "osd" || n.Name != osdName(n.ID) {
			t.Errorf("osd df node: %+v", n)
		}
	}
	if !strings.Contains(text, "\n 0         1.00000   1.00000     -        -      -     -    -    4      up\n") ||
		!strings.HasSuffix(text, "MIN/MAX VAR: 0.00/0.00  STDDEV: 0.00\n") {
		t.Errorf("osd df text:\n%s", text)
	}
	// With no pools and no OSDs reporting, the tables are empty.
	tm.change(func(s *osdmap.Spec) { s.Pools = nil })
	if v, _ := tm.df(); len(v.Pools) != 0 || v.Pools == nil {
		t.Errorf("df with no pools: %+v", v)
	}
}

// The numbers of "df" and "osd df" from fabricated reports: raw space
// of the OSDs up that reported, each pool's data times its size, MAX
// AVAIL from the OSD of the rule that fills first, per-OSD use and its
// spread; osd.2 has not reported yet.
func TestDFNumbers(t *testing.T) {
	tm := newTestMon(t)
	tm.usage(0, 10, 1, tm.clean)
	tm.usage(1, 10, 2, tm.clean)
	v, text := tm.df()
	wantStats := DFStats{TotalBytes: 20 * gib, TotalAvailBytes: 17 * gib, TotalUsedBytes: 3 * gib, TotalUsedRawBytes: 3 * gib,
		TotalUsedRawRatio: 0.15, NumOSDs: 2}
	if !near(v.Stats.TotalUsedRawRatio, 0.15) {
		t.Errorf("raw ratio %v", v.Stats.TotalUsedRawRatio)
	}
	v.Stats.TotalUsedRawRatio = 0.15
	if v.Stats != wantStats {
		t.Errorf("stats %+v, want %+v", v.Stats, wantStats)
	}
	// The PGs osd.0 and osd.1 are primary of: 2 objects of 8 KiB each.
	pgs := int64(0)
	for _, r := range tm.reports(tm.clean) {
		if r.OSD != 2 {
			pgs += int64(len(r.PGs))
		}
	}
	// Each OSD may take a third of the data; above 95% of 10 GiB none
	// may be used: osd.1 has 7.5 GiB left, so the rule can place 22.5
	// GiB before it is full, 7.5 GiB of data at size 3.
	st := v.Pools[0].Stats
	maxAvail := uint64(15 * gib / 2)
	wantPool := DFPoolStats{Stored: pgs * 8 << 10, Objects: pgs * 2, KBUsed: pgs * 24, BytesUsed: pgs * 24 << 10, MaxAvail: maxAvail}
	if pct := float64(wantPool.BytesUsed) / (float64(wantPool.BytesUsed) + 3*float64(maxAvail)); !near(st.PercentUsed, pct) {
		t.Errorf("percent_used %v, want %v", st.PercentUsed, pct)
	}
	st.PercentUsed = 0
	if st != wantPool || pgs == 0 {
		t.Errorf("pool stats %+v, want %+v", st, wantPool)
	}
	if !strings.Contains(text, "TOTAL  20 GiB  17 GiB  3.0 GiB   3.0 GiB      15.00\n") || !strings.Contains(text, "7.5 GiB\n") {
		t.Errorf("df text:\n%s", text)
	}

	o, text := tm.osdDF()
	s := o.Summary
	if s.TotalKB != 20<<20 || s.TotalKBUsed != 3<<20 || s.TotalKBAvail != 17<<20 || !near(s.AverageUtilization, 15) ||
		!near(s.MinVar, 10.0/15) || !near(s.MaxVar, 20.0/15) || !near(s.Dev, 5) {
		t.Errorf("osd df summary: %+v", s)
	}
	n0, n1, n2 := o.Nodes[0], o.Nodes[1], o.Nodes[2]
	if !n0.Reported || n0.KB != 10<<20 || n0.KBUsed != 1<<20 || n0.KBAvail != 9<<20 || !near(n0.Utilization, 10) || !near(n0.Var, 10.0/15) ||
		!n1.Reported || !near(n1.Utilization, 20) || n2.Reported || n2.Var != 0 || n2.PGs != 4 {
		t.Errorf("osd df nodes:\n%+v\n%+v\n%+v", n0, n1, n2)
	}
	for _, want := range []string{
		"ID  CLASS   WEIGHT  REWEIGHT    SIZE  RAW USE    AVAIL   %USE   VAR  PGS  STATUS\n",
		" 0         1.00000   1.00000  10 GiB  1.0 GiB  9.0 GiB  10.00  0.67    4      up\n",
		" 1         1.00000   1.00000  10 GiB  2.0 GiB  8.0 GiB  20.00  1.33    4      up\n",
		"                       TOTAL  20 GiB  3.0 GiB   17 GiB  15.00\n",
		"MIN/MAX VAR: 0.67/1.33  STDDEV: 5.00\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("osd df text lacks %q:\n%s", want, text)
		}
	}
}

// A down OSD keeps its row (its last report, marked down) but leaves the
// totals, the spread and the OSDs MAX AVAIL counts on; an out OSD
// (reweight 0) leaves MAX AVAIL too.
func TestDFDownOSD(t *testing.T) {
	tm := newTestMon(t)
	for id := range int32(3) {
		tm.usage(id, 10, uint64(id)+1, tm.clean)
	}
	tm.markDown(1)
	v, _ := tm.df()
	if v.Stats.TotalBytes != 20*gib || v.Stats.TotalUsedBytes != 4*gib || v.Stats.NumOSDs != 2 {
		t.Errorf("df stats with osd.1 down: %+v", v.Stats)
	}
	// osd.0 and osd.2 take half each: osd.2 (3 GiB used) has 6.5 GiB
	// left below the full ratio, so the rule takes 13 GiB, 13/3 GiB of
	// data.
	if got, want := v.Pools[0].Stats.MaxAvail, uint64(13*gib/3); got != want {
		t.Errorf("max avail with osd.1 down: %d, want %d", got, want)
	}
	o, text := tm.osdDF()
	n1 := o.Nodes[1]
	// A down OSD is in no acting set: it holds no PG copy the map uses.
	if n1.Status != "down" || !n1.Reported || n1.KBUsed != 2<<20 || !near(n1.Var, 20.0/20) || n1.PGs != 0 {
		t.Errorf("down osd.1: %+v", n1)
	}
	if s := o.Summary; s.TotalKB != 20<<20 || !near(s.AverageUtilization, 20) || !near(s.MinVar, 0.5) || !near(s.MaxVar, 1.5) || !near(s.Dev, 10) {
		t.Errorf("summary with osd.1 down: %+v", s)
	}
	if !strings.Contains(text, " 1         1.00000   1.00000  10 GiB  2.0 GiB  8.0 GiB  20.00  1.00    0    down\n") {
		t.Errorf("osd df text:\n%s", text)
	}
	// osd.2 out: only osd.0 is left to the rule.
	tm.change(func(s *osdmap.Spec) { s.OSDs[2].Weight = osdmap.WeightOut })
	v, _ = tm.df()
	if got, want := v.Pools[0].Stats.MaxAvail, uint64(17*gib/6); got != want {
		t.Errorf("max avail with osd.2 out: %d, want %d", got, want)
	}
	if o, _ := tm.osdDF(); o.Nodes[2].Reweight != 0 || o.Nodes[2].Status != "up" {
		t.Errorf("out osd.2: %+v", o.Nodes[2])
	}
	// Every OSD of the rule down: nothing bounds the pool.
	tm.markDown(0)
	tm.markDown(2)
	if v, _ := tm.df(); v.Pools[0].Stats.MaxAvail != 0 || v.Stats.TotalBytes != 0 {
		t.Errorf("df with every OSD down: %+v", v)
	}
}

// OSDs with a device class give a RAW STORAGE line per class.
func TestDFByClass(t *testing.T) {
	tm := newTestMon(t)
	spec, err := crush.BuildLayout(crush.Layout{Hosts: 3, OSDsPerHost: 1, DeviceClass: "ssd"})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := crush.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	tm.change(func(s *osdmap.Spec) { s.Crush = cm })
	tm.usage(0, 10, 1, tm.clean)
	v, text := tm.df()
	if c := v.StatsByClass["ssd"]; len(v.StatsByClass) != 1 || c.TotalBytes != 10*gib || c.NumOSDs != 1 {
		t.Errorf("stats by class: %+v", v.StatsByClass)
	}
	if !strings.Contains(text, "CLASS    SIZE    AVAIL     USED  RAW USED  %RAW USED\nssd    10 GiB  9.0 GiB  1.0 GiB   1.0 GiB      10.00\nTOTAL  10 GiB  9.0 GiB") {
		t.Errorf("df text:\n%s", text)
	}
	if o, text := tm.osdDF(); o.Nodes[0].DeviceClass != "ssd" || !strings.Contains(text, " 0    ssd  1.00000") {
		t.Errorf("osd df class: %+v\n%s", o.Nodes[0], text)
	}
}

// Before the cluster is created, both commands say so.
func TestDFNoMap(t *testing.T) {
	svc := New(Config{})
	for _, p := range []string{"df", "osd df"} {
		if r := svc.Query(moncmd.New(p)); r.Code != moncmd.ENOENT {
			t.Errorf("%s without a map: %+v", p, r)
		}
	}
}
