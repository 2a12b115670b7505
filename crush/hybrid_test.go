package crush_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/crush/crushtext"
	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

// classesMap is Ceph's "classes" vector map: four hosts, three with SSDs
// and HDDs, one with HDDs only; its rule 5 is the SSD-primary rule.
func classesMap(t *testing.T) *crush.Map {
	t.Helper()
	m, err := crushtext.Compile(crushvectors.ReadFile(t, "maps/classes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// parseMapping reads "CRUSH rule R x X [a,b,c]".
func parseMapping(t *testing.T, line string) []int32 {
	t.Helper()
	i := strings.LastIndexByte(line, '[')
	body := strings.TrimSuffix(line[i+1:], "]")
	var out []int32
	for f := range strings.SplitSeq(body, ",") {
		if f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		out = append(out, int32(v))
	}
	return out
}

// HybridRule builds, step for step, the SSD-primary rule that Ceph's own
// map carries, and a map with it places every input as crushtool does.
func TestHybridRuleIsCephs(t *testing.T) {
	m := classesMap(t)
	root, _ := m.ItemID("default")
	host, _ := m.TypeID("host")
	spec := m.Spec()
	got := crush.HybridRule(5, "ssd_primary_hdd_rest", root, "ssd", "hdd", host)
	var idx int
	for i, r := range spec.Rules {
		if r.ID == 5 {
			idx = i
		}
	}
	if want := spec.Rules[idx]; !reflect.DeepEqual(got, want) {
		t.Fatalf("HybridRule:\n%+v\nCeph's rule:\n%+v", got, want)
	}
	spec.Rules[idx] = got
	mine, err := crush.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	weights := make([]uint32, mine.MaxDevices())
	for i := range weights {
		weights[i] = crush.WeightOne
	}
	ran := 0
	for _, c := range crushvectors.Cases(t) {
		if c.Map != "classes" || c.Rule != 5 || len(c.Reweights) > 0 || c.PoolID != nil {
			continue
		}
		ran++
		ws, out := mine.NewWorkspace(), make([]int32, c.NumRep)
		crushvectors.CheckMappings(t, c, func(x int32) []int32 {
			return out[:mine.DoRule(ws, c.Rule, x, out, weights, nil)]
		})
	}
	if ran == 0 {
		t.Fatal("no vector of the classes map's rule 5")
	}
}

// The check, on crushtool's own results for the SSD-primary rule: every
// primary is an SSD, the HDD replicas are on distinct hosts, but — the
// caveat of two independent takes — some replicas land on the primary's
// host.
func TestHybridCheckOnCephsMappings(t *testing.T) {
	m := classesMap(t)
	host, _ := m.TypeID("host")
	for _, c := range crushvectors.Cases(t) {
		if c.Map != "classes" || c.Rule != 5 || c.NumRep != 3 || len(c.Reweights) > 0 || c.PoolID != nil {
			continue
		}
		chk := m.NewHybridCheck("ssd", host)
		for _, l := range crushvectors.MappingLines(t, c) {
			chk.Add(parseMapping(t, l))
		}
		s := chk.Stats
		t.Logf("%+v", s)
		if s.Mappings != 10000 || s.Empty != 0 || s.PrimaryInClass != s.Mappings || s.ReplicasShareDomain != 0 {
			t.Fatalf("stats %+v: want every primary an SSD and the replicas on distinct hosts", s)
		}
		if s.ReplicaWithPrimary == 0 {
			t.Fatalf("stats %+v: want some replica on the primary's host (the takes are independent)", s)
		}
		return
	}
	t.Fatal("no vector of rule 5 at num_rep 3")
}

// The check's counts on hand-made results.
func TestHybridCheckCounts(t *testing.T) {
	m := classesMap(t)
	host, _ := m.TypeID("host")
	chk := m.NewHybridCheck("ssd", host)
	// osd.0, osd.1: host0 SSDs; osd.2-4 host0 HDDs; osd.6 host1 HDD;
	// osd.12 host2 HDD; osd.14, osd.15 host3 HDDs.
	for _, r := range [][]int32{
		{0, 6, 12},              // SSD primary, replicas elsewhere
		{0, 2, 12},              // a replica on the primary's host
		{1, 14, 15},             // two replicas share host3
		{2, 6, 12},              // an HDD primary
		{},                      // nothing
		{crush.ItemNone, 6, 12}, // no primary
	} {
		chk.Add(r)
	}
	want := crush.HybridStats{Mappings: 6, Empty: 2, PrimaryInClass: 3, ReplicaWithPrimary: 1, ReplicasShareDomain: 1}
	if chk.Stats != want {
		t.Fatalf("stats %+v, want %+v", chk.Stats, want)
	}
}
