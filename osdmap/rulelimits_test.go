package osdmap

import (
	"errors"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
)

// rackMap returns a map of 2 racks with 3 hosts of 2 OSDs each (osd.0-11:
// host h holds osd.2h and osd.2h+1; hosts 0-2 are in the first rack),
// pool 1 with rule 0 (one copy per host) and pool 2 with rule 2, which
// takes two racks and two hosts in each (size 4).
func rackMap(t *testing.T) *Map {
	t.Helper()
	spec, err := crush.BuildLayout(crush.Layout{Racks: 2, Hosts: 3, OSDsPerHost: 2})
	if err != nil {
		t.Fatal(err)
	}
	rack, _ := crushTypeID(spec, "rack")
	host, _ := crushTypeID(spec, "host")
	spec.Rules = append(spec.Rules, crush.Rule{ID: 2, Name: "two_racks", Type: crush.RuleReplicated, MinSize: 1, MaxSize: 10,
		Steps: []crush.Step{{Op: crush.OpTake, Arg1: -1}, {Op: crush.OpChooseFirstN, Arg1: 2, Arg2: rack},
			{Op: crush.OpChooseLeafFirstN, Arg1: 2, Arg2: host}, {Op: crush.OpEmit}}})
	cm, err := crush.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	p2 := replicatedPool(2, 16)
	p2.Size, p2.CrushRule = 4, 2
	m, err := NewSimple(cm, 12, replicatedPool(1, 32), p2)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func crushTypeID(spec crush.Spec, name string) (int32, bool) {
	for _, ty := range spec.Types {
		if ty.Name == name {
			return ty.ID, true
		}
	}
	return 0, false
}

// TestRuleLimitsCheck checks the failure-domain rule of Ceph's
// CrushWrapper::verify_upmap on one- and two-level rules.
func TestRuleLimitsCheck(t *testing.T) {
	m := rackMap(t)
	byHost, err := m.PoolRuleLimits(m.Pool(1))
	if err != nil {
		t.Fatal(err)
	}
	twoRacks, err := m.PoolRuleLimits(m.Pool(2))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		limits *RuleLimits
		osds   []int32
		ok     bool
	}{
		{"three hosts", byHost, []int32{0, 2, 4}, true},
		{"two on one host", byHost, []int32{0, 1, 4}, false},
		{"duplicate osd", byHost, []int32{0, 2, 0}, false},
		{"not in the tree", byHost, []int32{0, 2, 40}, false},
		{"erasure hole skipped", byHost, []int32{0, crush.ItemNone, 4}, true},
		{"two per rack, distinct hosts", twoRacks, []int32{0, 2, 6, 8}, true},
		{"three in one rack", twoRacks, []int32{0, 2, 4, 6}, false},
		{"two in one host of a rack", twoRacks, []int32{0, 1, 6, 8}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.limits.Check(tc.osds)
			if (err == nil) != tc.ok {
				t.Fatalf("Check(%v) = %v, want ok %v", tc.osds, err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrRuleViolation) {
				t.Fatalf("error %v is not ErrRuleViolation", err)
			}
		})
	}
	if got := byHost.OSDs(); len(got) != 12 || byHost.CrushWeight(3) != crush.WeightOne {
		t.Fatalf("OSDs %v, weight of osd.3 %#x", got, byHost.CrushWeight(3))
	}
}

// Every CRUSH result satisfies its own rule's limits: the check is never
// stricter than CRUSH.
func TestRuleLimitsAcceptCrush(t *testing.T) {
	m := rackMap(t)
	var s Scratch
	for _, p := range m.Pools() {
		l, err := m.PoolRuleLimits(&p)
		if err != nil {
			t.Fatal(err)
		}
		for seed := range p.PGNum {
			raw, _, _, err := m.PGToRawOSDs(PG{Pool: p.ID, Seed: seed}, &s)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Check(raw); err != nil {
				t.Fatalf("pool %d seed %d: CRUSH's %v: %v", p.ID, seed, raw, err)
			}
		}
	}
}

func TestStaleUpmaps(t *testing.T) {
	m := rackMap(t)
	var s Scratch
	pg := PG{Pool: 1, Seed: 3}
	raw, _, _, err := m.PGToRawOSDs(pg, &s)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := m.PoolRuleLimits(m.Pool(1))
	// A target on a host the PG does not use, and one that is.
	var free, clash int32 = -1, -1
	for o := range int32(12) {
		set := slices.Clone(raw)
		set[0] = o
		if slices.Contains(raw, o) {
			continue
		}
		if l.Check(set) == nil && free < 0 {
			free = o
		} else if l.Check(set) != nil && clash < 0 {
			clash = o
		}
	}
	if free < 0 || clash < 0 {
		t.Fatalf("raw %v: no free (%d) or clashing (%d) target", raw, free, clash)
	}
	notIn := int32(0)
	for slices.Contains(raw, notIn) || notIn == free {
		notIn++
	}

	t.Run("valid entry kept", func(t *testing.T) {
		m2 := change(t, m, func(s *Spec) { s.PGUpmapItems[pg] = []UpmapItem{{From: raw[0], To: free}} })
		if c := m2.StaleUpmaps(); !c.Empty() {
			t.Fatalf("%+v", c)
		}
	})
	t.Run("failure domain broken", func(t *testing.T) {
		m2 := change(t, m, func(s *Spec) { s.PGUpmapItems[pg] = []UpmapItem{{From: raw[0], To: clash}} })
		if c := m2.StaleUpmaps(); !slices.Equal(c.RmItems, []PG{pg}) {
			t.Fatalf("%+v", c)
		}
	})
	t.Run("target destroyed", func(t *testing.T) {
		m2 := change(t, m, func(s *Spec) {
			s.PGUpmapItems[pg] = []UpmapItem{{From: raw[0], To: free}}
			s.OSDs[free] = OSD{}
		})
		c := m2.StaleUpmaps()
		if !slices.Equal(c.RmItems, []PG{pg}) {
			t.Fatalf("%+v", c)
		}
		inc := m2.NewIncremental()
		c.AddTo(inc)
		m3, err := m2.Apply(inc)
		if err != nil {
			t.Fatal(err)
		}
		if m3.PGUpmapItems(pg) != nil || !m3.StaleUpmaps().Empty() {
			t.Fatalf("not removed: %v", m3.PGUpmapItems(pg))
		}
	})
	t.Run("no-op pair dropped, the rest kept", func(t *testing.T) {
		m2 := change(t, m, func(s *Spec) {
			s.PGUpmapItems[pg] = []UpmapItem{{From: notIn, To: 11}, {From: raw[0], To: free}}
		})
		c := m2.StaleUpmaps()
		if want := []UpmapItem{{From: raw[0], To: free}}; !slices.Equal(c.Items[pg], want) || len(c.RmItems) != 0 {
			t.Fatalf("%+v, want items %v", c, want)
		}
	})
	t.Run("pg_upmap breaking the rule", func(t *testing.T) {
		m2 := change(t, m, func(s *Spec) { s.PGUpmap[pg] = []int32{0, 1, 4} })
		if c := m2.StaleUpmaps(); !slices.Equal(c.RmUpmap, []PG{pg}) {
			t.Fatalf("%+v", c)
		}
	})
}
