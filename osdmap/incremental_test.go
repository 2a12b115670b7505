package osdmap

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
)

func otherCrush(t testing.TB) *crush.Map {
	spec, err := crush.BuildLayout(crush.Layout{Racks: 2, Hosts: 2, OSDsPerHost: 4})
	if err != nil {
		t.Fatal(err)
	}
	c, err := crush.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDiffApplyRoundTrip walks random epochs and checks, for each,
// old.Apply(Diff(old, new)) == new, also after the incremental goes
// through its encoding.
func TestDiffApplyRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	c2 := otherCrush(t)
	m := smallMap(t)
	for range 300 {
		next := randomNext(t, r, m, c2)
		inc := Diff(m, next)
		got, err := m.Apply(inc)
		if err != nil {
			t.Fatalf("epoch %d: %v", next.Epoch(), err)
		}
		requireSameMap(t, got, next)

		data, err := inc.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		inc2, err := UnmarshalIncremental(data)
		if err != nil {
			t.Fatalf("epoch %d: decode: %v", next.Epoch(), err)
		}
		got2, err := m.Apply(inc2)
		if err != nil {
			t.Fatalf("epoch %d: apply decoded: %v", next.Epoch(), err)
		}
		requireSameMap(t, got2, next)
		m = next
	}
}

func TestDiffOfEqualMapsIsEmpty(t *testing.T) {
	m := smallMap(t)
	next := change(t, m, func(*Spec) {})
	inc := Diff(m, next)
	want := &Incremental{FSID: m.FSID(), Epoch: 2, Modified: m.Modified()}
	data, _ := inc.MarshalBinary()
	wantData, _ := want.MarshalBinary()
	if string(data) != string(wantData) {
		t.Fatalf("diff of equal maps: %+v", inc)
	}
}

func TestApplyChecksEpochAndCluster(t *testing.T) {
	m := smallMap(t)
	inc := m.NewIncremental()
	inc.Epoch = 3
	if _, err := m.Apply(inc); !errors.Is(err, ErrWrongEpoch) {
		t.Fatalf("future epoch: %v", err)
	}
	inc.Epoch = 1
	if _, err := m.Apply(inc); !errors.Is(err, ErrWrongEpoch) {
		t.Fatalf("stale epoch: %v", err)
	}
	inc = m.NewIncremental()
	inc.FSID[0] = 1
	if _, err := m.Apply(inc); !errors.Is(err, ErrWrongCluster) {
		t.Fatalf("other fsid: %v", err)
	}
}

func TestApplyRejectsInvalidResults(t *testing.T) {
	m := smallMap(t)
	for name, fn := range map[string]func(*Incremental){
		"pool without rule": func(inc *Incremental) {
			p := replicatedPool(5, 8)
			p.CrushRule = 9
			inc.NewPools = []Pool{p}
		},
		"duplicate pool name": func(inc *Incremental) {
			p := replicatedPool(5, 8)
			p.Name = m.Pool(1).Name
			inc.NewPools = []Pool{p}
		},
		"delete missing pool": func(inc *Incremental) { inc.OldPools = []int64{42} },
		"osd beyond max_osd":  func(inc *Incremental) { inc.NewOSDs = map[int32]OSD{12: {State: OSDExists}} },
		"weight above in": func(inc *Incremental) {
			inc.NewOSDs = map[int32]OSD{1: {State: OSDExists, Weight: WeightIn + 1}}
		},
		"ghost osd with state": func(inc *Incremental) { inc.NewOSDs = map[int32]OSD{1: {Weight: WeightIn}} },
		"crush without the pools' rules": func(inc *Incremental) {
			spec, _ := crush.BuildLayout(crush.Layout{Hosts: 1, OSDsPerHost: 1})
			spec.Rules = spec.Rules[:1]
			c, err := crush.New(spec)
			if err != nil {
				t.Fatal(err)
			}
			inc.NewCrush = c
		},
		"pg_temp beyond pg_num": func(inc *Incremental) {
			inc.NewPGTemp = map[PG][]int32{{Pool: 1, Seed: 40}: {1}}
		},
	} {
		inc := m.NewIncremental()
		fn(inc)
		if name == "pg_temp beyond pg_num" {
			// Apply prunes overrides of PGs that do not exist.
			m2, err := m.Apply(inc)
			if err != nil || len(m2.Spec().PGTemp) != 0 {
				t.Errorf("%s: %v, %v", name, err, m2.Spec().PGTemp)
			}
			continue
		}
		if _, err := m.Apply(inc); !errors.Is(err, ErrInvalidMap) {
			t.Errorf("%s: got %v, want ErrInvalidMap", name, err)
		}
	}
}

func TestApplyPrunesOverridesOfDeletedPools(t *testing.T) {
	m := change(t, smallMap(t), func(s *Spec) {
		s.PGTemp[PG{Pool: 2, Seed: 1}] = []int32{1, 2}
		s.PGUpmap[PG{Pool: 2, Seed: 1}] = []int32{1, 2}
		s.PGTemp[PG{Pool: 1, Seed: 20}] = []int32{3}
	})
	inc := m.NewIncremental()
	inc.OldPools = []int64{2}
	p := *m.Pool(1)
	p.PGNum, p.PGPNum = 16, 16
	inc.NewPools = []Pool{p}
	m2, err := m.Apply(inc)
	if err != nil {
		t.Fatal(err)
	}
	s := m2.Spec()
	if len(s.PGTemp) != 0 || len(s.PGUpmap) != 0 || m2.Pool(2) != nil || m2.PoolMax() != 2 {
		t.Fatalf("%+v", s)
	}
}

func TestOSDHelpers(t *testing.T) {
	m := smallMap(t)
	inc := m.NewIncremental()
	if err := inc.MarkDown(m, 3); err != nil {
		t.Fatal(err)
	}
	if err := inc.Reweight(m, 3, 0x8000); err != nil {
		t.Fatal(err)
	}
	if err := inc.SetPrimaryAffinity(m, 4, 0); err != nil {
		t.Fatal(err)
	}
	if err := inc.MarkUp(m, 14, "10.0.0.14:6800"); err != nil { // a new OSD beyond max_osd
		t.Fatal(err)
	}
	if err := inc.MarkIn(m, 14); err != nil {
		t.Fatal(err)
	}
	if err := inc.RemoveOSD(m, 11); err != nil {
		t.Fatal(err)
	}
	if err := inc.MarkDown(m, 13); !errors.Is(err, ErrNoSuchOSD) {
		t.Fatalf("marking a missing osd down: %v", err)
	}
	if err := inc.Reweight(m, 1, WeightIn+1); err == nil {
		t.Fatal("weight above 1 accepted")
	}
	m2, err := m.Apply(inc)
	if err != nil {
		t.Fatal(err)
	}
	if o := m2.OSD(3); o.IsUp() || o.DownAt != 2 || o.Weight != 0x8000 || !o.IsIn() {
		t.Fatalf("osd.3 %+v", o)
	}
	if o := m2.OSD(4); o.PrimaryAffinity != 0 {
		t.Fatalf("osd.4 %+v", o)
	}
	if m2.MaxOSD() != 15 || m2.Exists(13) || !m2.IsUp(14) || !m2.IsIn(14) || m2.OSD(14).UpFrom != 2 || m2.OSD(14).Addr != "10.0.0.14:6800" {
		t.Fatalf("osd.14 %+v, max_osd %d", m2.OSD(14), m2.MaxOSD())
	}
	if o := m2.OSD(14); o.State&OSDNew != 0 || o.PrimaryAffinity != DefaultPrimaryAffinity {
		t.Fatalf("new osd.14 %+v", o)
	}
	if m2.Exists(11) {
		t.Fatal("osd.11 still exists")
	}
	if exist, up, in := m2.NumOSDs(); exist != 12 || up != 11 || in != 12 {
		t.Fatalf("exist %d up %d in %d", exist, up, in)
	}
}

// SetUpThru records an OSD's up_thru; it never moves back, and the
// incremental carries it through its encoding.
func TestSetUpThru(t *testing.T) {
	m := smallMap(t)
	inc := m.NewIncremental()
	if err := inc.SetUpThru(m, 3, 1); err != nil {
		t.Fatal(err)
	}
	if err := inc.SetUpThru(m, 3, 0); err != nil { // lower: no change
		t.Fatal(err)
	}
	if err := inc.SetUpThru(m, 13, 1); !errors.Is(err, ErrNoSuchOSD) {
		t.Fatalf("up_thru of a missing osd: %v", err)
	}
	b, err := inc.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	dec, err := UnmarshalIncremental(b)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := m.Apply(dec)
	if err != nil {
		t.Fatal(err)
	}
	if o := m2.OSD(3); o.UpThru != 1 || !o.IsUp() {
		t.Fatalf("osd.3 %+v, want up_thru 1", o)
	}
}

// osd lost: only a down OSD; the mark survives encoding (full map and
// incremental) and goes when the OSD boots again.
func TestMarkLost(t *testing.T) {
	m := smallMap(t)
	inc := m.NewIncremental()
	if err := inc.MarkLost(m, 3, inc.Epoch); err == nil {
		t.Fatal("an up OSD declared lost")
	}
	if err := inc.MarkLost(m, 13, inc.Epoch); !errors.Is(err, ErrNoSuchOSD) {
		t.Fatalf("a missing OSD declared lost: %v", err)
	}
	if err := inc.MarkDown(m, 3); err != nil {
		t.Fatal(err)
	}
	if err := inc.MarkLost(m, 3, inc.Epoch); err != nil {
		t.Fatal(err)
	}
	b, err := inc.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	inc2, err := UnmarshalIncremental(b)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := m.Apply(inc2)
	if err != nil {
		t.Fatal(err)
	}
	if o := m2.OSD(3); o.LostAt != 2 || !o.LostSince(1) || o.LostSince(2) {
		t.Fatalf("osd.3 %+v, want lost at 2", o)
	}
	full, err := m2.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	m3, err := UnmarshalMap(full)
	if err != nil {
		t.Fatal(err)
	}
	if m3.OSD(3).LostAt != 2 {
		t.Fatalf("full map round trip lost lost_at: %+v", m3.OSD(3))
	}
	inc = m3.NewIncremental()
	if err := inc.MarkUp(m3, 3, "10.0.0.3:6801"); err != nil {
		t.Fatal(err)
	}
	m4, err := m3.Apply(inc)
	if err != nil {
		t.Fatal(err)
	}
	if o := m4.OSD(3); o.LostAt != 0 || !o.IsUp() {
		t.Fatalf("osd.3 back up %+v, want lost_at cleared", o)
	}
}
