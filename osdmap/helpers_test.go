package osdmap

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/crush"
)

// smallCrush returns a map of 4 hosts with 3 OSDs each (osd.0-11) and
// rules 0 (replicated, by host) and 1 (erasure, by host).
func smallCrush(t testing.TB) *crush.Map {
	t.Helper()
	spec, err := crush.BuildLayout(crush.Layout{Hosts: 4, OSDsPerHost: 3})
	if err != nil {
		t.Fatal(err)
	}
	c, err := crush.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func replicatedPool(id int64, pgNum uint32) Pool {
	return Pool{ID: id, Name: "rep" + string(rune('a'+id)), Type: PoolReplicated, Size: 3, MinSize: 2,
		CrushRule: 0, PGNum: pgNum, PGPNum: pgNum, Flags: PoolHashPSPool}
}

func erasurePool(id int64, pgNum uint32) Pool {
	return Pool{ID: id, Name: "ec" + string(rune('a'+id)), Type: PoolErasure, Size: 4, MinSize: 3,
		CrushRule: 1, PGNum: pgNum, PGPNum: pgNum, Flags: PoolHashPSPool}
}

// smallMap returns epoch 1 of a 12-OSD map with a replicated pool 1 and an
// erasure pool 2.
func smallMap(t testing.TB) *Map {
	t.Helper()
	m, err := NewSimple(smallCrush(t), 12, replicatedPool(1, 32), erasurePool(2, 16))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// change builds the next epoch of m from a modified Spec.
func change(t testing.TB, m *Map, fn func(*Spec)) *Map {
	t.Helper()
	s := m.Spec()
	s.Epoch++
	fn(&s)
	m2, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return m2
}

// randomNext returns a random valid successor of m (epoch + 1), changing
// a few things of every kind.
func randomNext(t testing.TB, r *rand.Rand, m *Map, c2 *crush.Map) *Map {
	t.Helper()
	s := m.Spec()
	s.Epoch++
	s.Modified = time.Unix(int64(1700000000+r.IntN(1e6)), int64(r.IntN(1e9))).UTC()
	if r.IntN(4) == 0 {
		s.Flags ^= FlagNoOut
	}
	if r.IntN(8) == 0 && c2 != nil {
		s.Crush = c2
	}
	if r.IntN(5) == 0 {
		ratios := []*float32{&s.Ratios.NearFull, &s.Ratios.BackfillFull, &s.Ratios.Full}
		*ratios[r.IntN(3)] = float32(1+r.IntN(100)) / 100
	}
	if r.IntN(6) == 0 {
		n := 12 + r.IntN(4)
		for len(s.OSDs) < n {
			s.OSDs = append(s.OSDs, OSD{})
		}
		s.OSDs = s.OSDs[:n]
	}
	for range r.IntN(4) {
		id := r.IntN(len(s.OSDs))
		o := &s.OSDs[id]
		switch r.IntN(6) {
		case 0:
			*o = OSD{}
		case 1:
			*o = OSD{State: OSDExists | OSDUp, Weight: WeightIn, PrimaryAffinity: DefaultPrimaryAffinity, Addr: "10.0.0.1:6800"}
		case 2:
			if o.Exists() {
				o.State ^= OSDUp
				o.DownAt = s.Epoch
			}
		case 3:
			if o.Exists() {
				o.Weight = uint32(r.IntN(int(WeightIn) + 1))
			}
		case 4:
			if o.Exists() {
				o.PrimaryAffinity = uint32(r.IntN(int(DefaultPrimaryAffinity) + 1))
			}
		case 5:
			if o.Exists() {
				o.UpThru = s.Epoch
				o.State ^= []OSDState{OSDNearFull, OSDBackfillFull, OSDFull}[r.IntN(3)]
			}
		}
	}
	switch r.IntN(5) {
	case 0:
		if len(s.Pools) > 0 {
			i := r.IntN(len(s.Pools))
			s.Pools = append(s.Pools[:i], s.Pools[i+1:]...)
		}
	case 1:
		id := s.PoolMax + 1
		if r.IntN(2) == 0 {
			s.Pools = append(s.Pools, replicatedPool(id, uint32(1+r.IntN(64))))
		} else {
			s.Pools = append(s.Pools, erasurePool(id, uint32(1+r.IntN(64))))
		}
	case 2:
		if len(s.Pools) > 0 {
			p := &s.Pools[r.IntN(len(s.Pools))]
			p.PGNum = uint32(1 + r.IntN(64))
			p.PGPNum = uint32(1 + r.IntN(int(p.PGNum)))
			p.SetTargets(p.PGNum, uint32(1+r.IntN(int(p.PGNum)))) // pgp_num headed anywhere within pg_num
			p.LastChange = s.Epoch
		}
	}
	randomPG := func() (PG, bool) {
		if len(s.Pools) == 0 {
			return PG{}, false
		}
		p := s.Pools[r.IntN(len(s.Pools))]
		return PG{Pool: p.ID, Seed: uint32(r.IntN(int(p.PGNum)))}, true
	}
	randomOSDs := func() []int32 {
		osds := make([]int32, 1+r.IntN(4))
		for i := range osds {
			osds[i] = int32(r.IntN(16))
		}
		return osds
	}
	for range r.IntN(4) {
		pg, ok := randomPG()
		if !ok {
			break
		}
		switch r.IntN(8) {
		case 0:
			s.PGTemp[pg] = randomOSDs()
		case 1:
			delete(s.PGTemp, pg)
		case 2:
			s.PrimaryTemp[pg] = int32(r.IntN(12))
		case 3:
			delete(s.PrimaryTemp, pg)
		case 4:
			s.PGUpmap[pg] = randomOSDs()
		case 5:
			delete(s.PGUpmap, pg)
		case 6:
			s.PGUpmapItems[pg] = []UpmapItem{{From: int32(r.IntN(12)), To: int32(r.IntN(12))}}
		case 7:
			delete(s.PGUpmapItems, pg)
		}
	}
	pruneOverrides(&s)
	m2, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return m2
}

// specOf returns m's Spec with the CRUSH map replaced by its encoding, so
// that reflect.DeepEqual compares content.
func specOf(t testing.TB, m *Map) (Spec, []byte) {
	t.Helper()
	s := m.Spec()
	b, err := s.Crush.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	s.Crush = nil
	return s, b
}

func requireSameMap(t testing.TB, got, want *Map) {
	t.Helper()
	gs, gc := specOf(t, got)
	ws, wc := specOf(t, want)
	if !reflect.DeepEqual(gs, ws) || string(gc) != string(wc) {
		t.Fatalf("maps differ:\n got  %+v\n want %+v", gs, ws)
	}
	if !got.Equal(want) {
		t.Fatal("Equal disagrees with the specs")
	}
}
