package rados

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// targetTestMap returns a map of four OSDs on four hosts, all up, and
// pool 1 of size 3 with 16 PGs.
func targetTestMap(tb testing.TB) *osdmap.Map {
	layout, err := crush.BuildLayout(crush.Layout{Hosts: 4, OSDsPerHost: 1})
	if err != nil {
		tb.Fatal(err)
	}
	cm, err := crush.New(layout)
	if err != nil {
		tb.Fatal(err)
	}
	spec := osdmap.Spec{Epoch: 1, FSID: osdmap.FSID{1}, Crush: cm, Created: time.Unix(1e9, 0), Modified: time.Unix(1e9, 0)}
	for i := range 4 {
		spec.OSDs = append(spec.OSDs, osdmap.OSD{State: osdmap.OSDExists | osdmap.OSDUp, Weight: osdmap.WeightIn,
			PrimaryAffinity: osdmap.DefaultPrimaryAffinity, Addr: fmt.Sprintf("osd-%d:6800", i), UpFrom: 1})
	}
	spec.Pools = []osdmap.Pool{{ID: 1, Name: "p", Type: osdmap.PoolReplicated, Size: 3, MinSize: 1,
		PGNum: 16, PGPNum: 16, Flags: osdmap.PoolHashPSPool}}
	m, err := osdmap.New(spec)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// The target cache answers as CRUSH does for the map it is given, and a
// new map's answers replace the old one's.
func TestTargetCacheFollowsTheMap(t *testing.T) {
	m1 := targetTestMap(t)
	// Epoch 2 moves every PG's primary to osd.3 and takes osd.0 down.
	inc := m1.NewIncremental()
	inc.NewPrimaryTemp = map[osdmap.PG]int32{}
	for seed := range uint32(16) {
		inc.NewPrimaryTemp[osdmap.PG{Pool: 1, Seed: seed}] = 3
	}
	down := m1.OSD(0)
	down.State &^= osdmap.OSDUp
	inc.NewOSDs = map[int32]osdmap.OSD{0: down}
	m2, err := m1.Apply(inc)
	if err != nil {
		t.Fatal(err)
	}
	want := func(m *osdmap.Map, object objid.ID, pg osdmap.PG, fixed bool) target {
		var s osdmap.Scratch
		p, ok := opPG(m, object, pg, fixed)
		if !ok {
			return target{osd: -1, checked: true, noPool: true}
		}
		return pgTarget(m, &s, p)
	}
	var c targetCache
	var s osdmap.Scratch
	for _, m := range []*osdmap.Map{m1, m2, m1} {
		for i := range 200 {
			o := objid.Object(1, "", fmt.Sprint("obj", i))
			if got, w := c.get(m, &s, o, osdmap.PG{}, false), want(m, o, osdmap.PG{}, false); !reflect.DeepEqual(got, w) {
				t.Fatalf("epoch %d, %s: cached %+v, want %+v", m.Epoch(), o.Name, got, w)
			}
		}
		// A listing's PG, given raw, and a pool the map lacks.
		raw := osdmap.PG{Pool: 1, Seed: 16 + 5}
		if got, w := c.get(m, &s, objid.ID{}, raw, true), want(m, objid.ID{}, raw, true); !reflect.DeepEqual(got, w) || got.pg.Seed != 5 {
			t.Fatalf("epoch %d, listing PG: cached %+v, want %+v", m.Epoch(), got, w)
		}
		if got := c.get(m, &s, objid.Object(9, "", "x"), osdmap.PG{}, false); !got.noPool {
			t.Fatalf("epoch %d: an object of a missing pool got %+v", m.Epoch(), got)
		}
		if m == m2 {
			if got := c.get(m, &s, objid.Object(1, "", "obj0"), osdmap.PG{}, false); got.osd != 3 {
				t.Fatalf("epoch 2: primary %d, want the primary_temp osd.3", got.osd)
			}
		}
	}
}

// BenchmarkTarget compares an op's targeting with CRUSH run every time
// against the cache.
func BenchmarkTarget(b *testing.B) {
	m := targetTestMap(b)
	objects := make([]objid.ID, 1024)
	for i := range objects {
		objects[i] = objid.Object(1, "", fmt.Sprint("benchmark_data_", i))
	}
	var s osdmap.Scratch
	b.Run("crush", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			p, _ := opPG(m, objects[i%len(objects)], osdmap.PG{}, false)
			pgTarget(m, &s, p)
		}
	})
	b.Run("cached", func(b *testing.B) {
		var c targetCache
		for i := 0; b.Loop(); i++ {
			c.get(m, &s, objects[i%len(objects)], osdmap.PG{}, false)
		}
	})
}
