package osdmap

import (
	"errors"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
)

const none = crush.ItemNone

func mapPG(t *testing.T, m *Map, pg PG) Mapping {
	t.Helper()
	var s Scratch
	r, err := m.PGToUpActing(pg, &s)
	if err != nil {
		t.Fatal(err)
	}
	// Copy out of the scratch so results can be compared later.
	r.Raw, r.Up, r.Acting = slices.Clone(r.Raw), slices.Clone(r.Up), slices.Clone(r.Acting)
	return r
}

func TestHealthyMapping(t *testing.T) {
	m := smallMap(t)
	for _, pool := range []int64{1, 2} {
		for ps := range m.Pool(pool).PGNum {
			r := mapPG(t, m, PG{Pool: pool, Seed: ps})
			if len(r.Raw) != m.Pool(pool).Size {
				t.Fatalf("%s: raw %v, want %d osds", r.PG, r.Raw, m.Pool(pool).Size)
			}
			if !slices.Equal(r.Raw, r.Up) || !slices.Equal(r.Up, r.Acting) {
				t.Fatalf("%s: healthy map changed the sets: %+v", r.PG, r)
			}
			if r.UpPrimary != r.Raw[0] || r.ActingPrimary != r.Raw[0] {
				t.Fatalf("%s: primary %d/%d, want %d", r.PG, r.UpPrimary, r.ActingPrimary, r.Raw[0])
			}
		}
	}
}

// TestDownOSD checks _raw_to_up_osds: a down OSD stays in raw, leaves the
// up set of a replicated pool (the rest shift left) and leaves a hole in
// an erasure pool's.
func TestDownOSD(t *testing.T) {
	m := smallMap(t)
	rep := mapPG(t, m, PG{Pool: 1, Seed: 0})
	ec := mapPG(t, m, PG{Pool: 2, Seed: 0})
	down := rep.Raw[0]
	inc := m.NewIncremental()
	if err := inc.MarkDown(m, down); err != nil {
		t.Fatal(err)
	}
	m2, err := m.Apply(inc)
	if err != nil {
		t.Fatal(err)
	}
	r := mapPG(t, m2, PG{Pool: 1, Seed: 0})
	if !slices.Equal(r.Raw, rep.Raw) {
		t.Fatalf("raw changed: %v -> %v", rep.Raw, r.Raw)
	}
	if want := rep.Raw[1:]; !slices.Equal(r.Up, want) || r.UpPrimary != want[0] || r.ActingPrimary != want[0] {
		t.Fatalf("up %v p%d acting p%d, want %v p%d", r.Up, r.UpPrimary, r.ActingPrimary, want, want[0])
	}

	i := slices.Index(ec.Raw, down)
	e := mapPG(t, m2, PG{Pool: 2, Seed: 0})
	if i < 0 {
		return // this PG of the erasure pool does not use the OSD
	}
	want := slices.Clone(ec.Raw)
	want[i] = none
	if !slices.Equal(e.Up, want) || !slices.Equal(e.Acting, want) {
		t.Fatalf("erasure up %v acting %v, want %v", e.Up, e.Acting, want)
	}
}

// TestNonexistentOSD checks that a removed OSD leaves every set, and
// _remove_nonexistent_osds itself.
func TestNonexistentOSD(t *testing.T) {
	m := smallMap(t)
	pg := PG{Pool: 2, Seed: 3}
	before := mapPG(t, m, pg)
	gone := before.Raw[1]
	// A removed OSD has the zero entry, so its reweight is 0 as well.
	m2 := change(t, m, func(s *Spec) { s.OSDs[gone] = OSD{} })
	after := mapPG(t, m2, pg)
	if slices.Contains(after.Raw, gone) || slices.Contains(after.Up, gone) {
		t.Fatalf("removed osd.%d still mapped: %+v", gone, after)
	}
	// CRUSH chooses again for that position only (indep) and the set is
	// full again.
	if len(after.Raw) != 4 || slices.Contains(after.Raw, none) {
		t.Fatalf("erasure raw %v, want 4 osds", after.Raw)
	}
	for i, o := range before.Raw {
		if i != 1 && after.Raw[i] != o {
			t.Fatalf("indep position %d moved: %v -> %v", i, before.Raw, after.Raw)
		}
	}
	// removeNonexistent itself: holes for erasure pools, shifts otherwise.
	osds := []int32{0, 99, 2}
	if got := m.removeNonexistent(m.Pool(2), slices.Clone(osds)); !slices.Equal(got, []int32{0, none, 2}) {
		t.Fatalf("erasure: %v", got)
	}
	if got := m.removeNonexistent(m.Pool(1), slices.Clone(osds)); !slices.Equal(got, []int32{0, 2}) {
		t.Fatalf("replicated: %v", got)
	}
}

func TestMarkedOutOSDIsRemappedByCrush(t *testing.T) {
	m := smallMap(t)
	inc := m.NewIncremental()
	if err := inc.MarkOut(m, 4); err != nil {
		t.Fatal(err)
	}
	m2, err := m.Apply(inc)
	if err != nil {
		t.Fatal(err)
	}
	for ps := range uint32(32) {
		r := mapPG(t, m2, PG{Pool: 1, Seed: ps})
		if slices.Contains(r.Raw, 4) || len(r.Up) != 3 {
			t.Fatalf("%s: %+v", r.PG, r)
		}
	}
}

func TestUpmap(t *testing.T) {
	m := smallMap(t)
	pg := PG{Pool: 1, Seed: 5}
	base := mapPG(t, m, pg)
	other := int32(0)
	for slices.Contains(base.Raw, other) {
		other++
	}

	t.Run("pg_upmap replaces the set", func(t *testing.T) {
		want := []int32{other, base.Raw[0]}
		m2 := change(t, m, func(s *Spec) { s.PGUpmap[pg] = want })
		r := mapPG(t, m2, pg)
		if !slices.Equal(r.Raw, base.Raw) || !slices.Equal(r.Up, want) || r.UpPrimary != other {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("pg_upmap ignored if a target is out", func(t *testing.T) {
		m2 := change(t, m, func(s *Spec) {
			s.PGUpmap[pg] = []int32{other, base.Raw[0]}
			s.OSDs[other].Weight = 0
		})
		if r := mapPG(t, m2, pg); !slices.Equal(r.Up, base.Raw) {
			t.Fatalf("up %v, want %v", r.Up, base.Raw)
		}
	})
	t.Run("pg_upmap_items swap one osd", func(t *testing.T) {
		m2 := change(t, m, func(s *Spec) { s.PGUpmapItems[pg] = []UpmapItem{{From: base.Raw[1], To: other}} })
		want := slices.Clone(base.Raw)
		want[1] = other
		if r := mapPG(t, m2, pg); !slices.Equal(r.Up, want) {
			t.Fatalf("up %v, want %v", r.Up, want)
		}
	})
	t.Run("pg_upmap_items skip a target already present or out", func(t *testing.T) {
		m2 := change(t, m, func(s *Spec) {
			s.PGUpmapItems[pg] = []UpmapItem{{From: base.Raw[1], To: base.Raw[2]}, {From: base.Raw[0], To: other}}
			s.OSDs[other].Weight = 0
		})
		if r := mapPG(t, m2, pg); !slices.Equal(r.Up, base.Raw) {
			t.Fatalf("up %v, want %v", r.Up, base.Raw)
		}
	})
	t.Run("no bidirectional swap", func(t *testing.T) {
		a, b := base.Raw[0], base.Raw[1]
		m2 := change(t, m, func(s *Spec) { s.PGUpmapItems[pg] = []UpmapItem{{From: a, To: b}, {From: b, To: a}} })
		if r := mapPG(t, m2, pg); !slices.Equal(r.Up, base.Raw) {
			t.Fatalf("up %v, want unchanged %v (Ceph's documented limitation)", r.Up, base.Raw)
		}
	})
	t.Run("upmap applies to raw PGs too", func(t *testing.T) {
		m2 := change(t, m, func(s *Spec) { s.PGUpmap[pg] = []int32{other} })
		raw := PG{Pool: 1, Seed: pg.Seed + 32*7} // same PG before reduction
		if r := mapPG(t, m2, raw); r.PG != pg || !slices.Equal(r.Up, []int32{other}) {
			t.Fatalf("%+v", r)
		}
	})
}

func TestTemps(t *testing.T) {
	m := smallMap(t)
	pg := PG{Pool: 1, Seed: 7}
	base := mapPG(t, m, pg)
	temp := []int32{base.Raw[2], base.Raw[0]}

	m2 := change(t, m, func(s *Spec) { s.PGTemp[pg] = temp })
	r := mapPG(t, m2, pg)
	if !slices.Equal(r.Up, base.Up) || r.UpPrimary != base.UpPrimary {
		t.Fatalf("pg_temp changed up: %+v", r)
	}
	if !slices.Equal(r.Acting, temp) || r.ActingPrimary != temp[0] {
		t.Fatalf("acting %v p%d, want %v p%d", r.Acting, r.ActingPrimary, temp, temp[0])
	}

	m3 := change(t, m2, func(s *Spec) { s.PrimaryTemp[pg] = temp[1] })
	if r := mapPG(t, m3, pg); r.ActingPrimary != temp[1] || !slices.Equal(r.Acting, temp) {
		t.Fatalf("primary_temp: %+v", r)
	}

	// primary_temp alone keeps acting = up but overrides the primary.
	m4 := change(t, m, func(s *Spec) { s.PrimaryTemp[pg] = base.Raw[1] })
	if r := mapPG(t, m4, pg); r.ActingPrimary != base.Raw[1] || !slices.Equal(r.Acting, base.Up) {
		t.Fatalf("primary_temp only: %+v", r)
	}

	// A down OSD leaves pg_temp (replicated) or becomes a hole (erasure).
	m5 := change(t, m2, func(s *Spec) { s.OSDs[temp[0]].State &^= OSDUp })
	if r := mapPG(t, m5, pg); !slices.Equal(r.Acting, temp[1:]) || r.ActingPrimary != temp[1] {
		t.Fatalf("down osd in pg_temp: %+v", r)
	}
	epg := PG{Pool: 2, Seed: 1}
	ebase := mapPG(t, m, epg)
	m6 := change(t, m, func(s *Spec) {
		s.PGTemp[epg] = ebase.Raw
		s.OSDs[ebase.Raw[0]].State &^= OSDUp
	})
	want := slices.Clone(ebase.Raw)
	want[0] = none
	if r := mapPG(t, m6, epg); !slices.Equal(r.Acting, want) || r.ActingPrimary != want[1] {
		t.Fatalf("erasure pg_temp with a down osd: %+v", r)
	}
}

// TestPrimaryAffinity checks _apply_primary_affinity against its
// definition: OSD o in position i stays primary unless
// Hash2(pps, o) >> 16 >= affinity(o); the first accepted OSD (else the
// first rejected) is primary and, in replicated pools, moves to the front.
func TestPrimaryAffinity(t *testing.T) {
	m := smallMap(t)
	aff := map[int32]uint32{0: 0, 3: 0x8000, 6: 0x4000, 9: 0x10000, 1: 0}
	m2 := change(t, m, func(s *Spec) {
		for o, a := range aff {
			s.OSDs[o].PrimaryAffinity = a
		}
	})
	moved := 0
	for _, pool := range []int64{1, 2} {
		p := m2.Pool(pool)
		for ps := range p.PGNum {
			base := mapPG(t, m, PG{Pool: pool, Seed: ps})
			r := mapPG(t, m2, PG{Pool: pool, Seed: ps})
			pos := -1
			for i, o := range base.Up {
				a, ok := aff[o]
				if !ok {
					a = DefaultPrimaryAffinity
				}
				if a < DefaultPrimaryAffinity && crush.Hash2(r.PPS, uint32(o))>>16 >= a {
					if pos < 0 {
						pos = i
					}
					continue
				}
				pos = i
				break
			}
			want := slices.Clone(base.Up)
			wantPrimary := want[pos]
			if p.CanShiftOSDs() && pos > 0 {
				want = append([]int32{wantPrimary}, slices.Delete(want, pos, pos+1)...)
			}
			if r.UpPrimary != wantPrimary || !slices.Equal(r.Up, want) || r.ActingPrimary != wantPrimary {
				t.Fatalf("%s: up %v p%d, want %v p%d", r.PG, r.Up, r.UpPrimary, want, wantPrimary)
			}
			if pos > 0 {
				moved++
			}
			if a, ok := aff[r.UpPrimary]; ok && a == 0 && slices.ContainsFunc(r.Up, func(o int32) bool { a, ok := aff[o]; return !ok || a > 0 }) {
				t.Fatalf("%s: osd.%d with affinity 0 is primary of %v", r.PG, r.UpPrimary, r.Up)
			}
		}
	}
	if moved == 0 {
		t.Fatal("no primary moved; the test exercises nothing")
	}
}

func TestLegacyPPS(t *testing.T) {
	p := Pool{ID: 3, PGNum: 12, PGPNum: 6}
	// Without hashpspool Ceph adds the pool id to the reduced seed.
	if got, want := p.RawPGToPPS(PG{Pool: 3, Seed: 14}), StableMod(14, 6, 7)+3; got != want {
		t.Fatalf("legacy pps %d, want %d", got, want)
	}
	p.Flags = PoolHashPSPool
	if got, want := p.RawPGToPPS(PG{Pool: 3, Seed: 14}), crush.Hash2(2, 3); got != want {
		t.Fatalf("hashpspool pps %d, want %d", got, want)
	}
}

func TestObjectToPG(t *testing.T) {
	m := smallMap(t)
	pg, err := m.ObjectToPG(1, "foo", "", "")
	if err != nil {
		t.Fatal(err)
	}
	// "foo" hashes to 0x7fc1f406; pg_num 32 keeps the low 5 bits.
	if pg != (PG{Pool: 1, Seed: 0x7fc1f406 & 31}) {
		t.Fatalf("foo -> %s", pg)
	}
	keyed, _ := m.ObjectToPG(1, "other", "", "foo")
	if keyed != pg {
		t.Fatalf("a key places the object: %s != %s", keyed, pg)
	}
	if _, err := m.ObjectToPG(9, "foo", "", ""); !errors.Is(err, ErrNoSuchPool) {
		t.Fatalf("missing pool: %v", err)
	}
	var s Scratch
	if _, err := m.PGToUpActing(PG{Pool: 9}, &s); !errors.Is(err, ErrNoSuchPool) {
		t.Fatalf("missing pool: %v", err)
	}
}

func TestParsePG(t *testing.T) {
	for _, s := range []string{"1.0", "1.1f", "12.7fc1f406"} {
		pg, err := ParsePG(s)
		if err != nil || pg.String() != s {
			t.Errorf("ParsePG(%q) = %v, %v", s, pg, err)
		}
	}
	for _, s := range []string{"", "1", "x.1", "1.g", "-1.0", "1.100000000"} {
		if _, err := ParsePG(s); err == nil {
			t.Errorf("ParsePG(%q) succeeded", s)
		}
	}
}

func TestMappingAllocatesNothing(t *testing.T) {
	m := smallMap(t)
	m = change(t, m, func(s *Spec) {
		s.OSDs[2].PrimaryAffinity = 0x8000
		s.PGTemp[PG{Pool: 1, Seed: 3}] = []int32{1, 2}
		s.PGUpmapItems[PG{Pool: 1, Seed: 4}] = []UpmapItem{{From: 0, To: 1}}
	})
	var s Scratch
	ps := uint32(0)
	mapOne := func() {
		if _, err := m.PGToUpActing(PG{Pool: 1 + int64(ps%2), Seed: ps}, &s); err != nil {
			t.Fatal(err)
		}
		ps = (ps + 1) % 16
	}
	mapOne()
	if n := testing.AllocsPerRun(200, mapOne); n != 0 {
		t.Fatalf("PGToUpActing allocates %v times per call", n)
	}
	pgOf := func() { _, _ = m.ObjectToPG(1, "rbd_data.1234", "ns", "") }
	if n := testing.AllocsPerRun(200, pgOf); n != 0 {
		t.Fatalf("ObjectToPG allocates %v times per call", n)
	}
}

func BenchmarkPGToUpActing(b *testing.B) {
	m := racksMap(b, 2304)
	var s Scratch
	ps := uint32(0)
	for b.Loop() {
		if _, err := m.PGToUpActing(PG{Pool: 1, Seed: ps}, &s); err != nil {
			b.Fatal(err)
		}
		ps = (ps + 1) % 2304
	}
}
