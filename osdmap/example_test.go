package osdmap_test

import (
	"fmt"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/osdmap"
)

func Example() {
	spec, _ := crush.BuildLayout(crush.Layout{Hosts: 3, OSDsPerHost: 2})
	crushMap, _ := crush.New(spec)
	pool := osdmap.Pool{ID: 1, Name: "rbd", Type: osdmap.PoolReplicated, Size: 3, MinSize: 2,
		CrushRule: 0, PGNum: 64, PGPNum: 64, Flags: osdmap.PoolHashPSPool}
	m, err := osdmap.NewSimple(crushMap, 6, pool)
	if err != nil {
		fmt.Println(err)
		return
	}

	var s osdmap.Scratch // one per goroutine; reuse it
	pg, _ := m.ObjectToPG(1, "foo", "", "")
	r, _ := m.PGToUpActing(pg, &s)
	fmt.Printf("e%d %s -> up %v acting %v primary osd.%d\n", m.Epoch(), pg, r.Up, r.Acting, r.ActingPrimary)

	// The next epoch: the primary goes down.
	inc := m.NewIncremental()
	_ = inc.MarkDown(m, r.ActingPrimary)
	m2, err := m.Apply(inc)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, _ = m2.PGToUpActing(pg, &s)
	fmt.Printf("e%d %s -> up %v acting %v primary osd.%d\n", m2.Epoch(), pg, r.Up, r.Acting, r.ActingPrimary)
	// Output:
	// e1 1.6 -> up [4 3 1] acting [4 3 1] primary osd.4
	// e2 1.6 -> up [3 1] acting [3 1] primary osd.3
}
