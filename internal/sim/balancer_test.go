package sim

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/balancer"
	"github.com/cuttlestore/cuttle/osdmap"
)

// With the balancer on, the monitors place pg_upmap_items round by round
// until every OSD holds its share of the pool's PG copies within one; the
// OSDs backfill the moved copies, every OSD ends up holding exactly the
// PGs the map gives it, and every acknowledged write reads back.
func TestBalancerConverges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(t, Options{})
		for i := range 6 {
			c.AddOSD(fmt.Sprint("h", i))
		}
		c.Run("osd pool create", "pool", "rbd", "pg_num", "32", "size", "3", "min_size", "2")
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for i := range 60 {
			if err := io.WriteFull(ctx, fmt.Sprint("obj-", i), []byte(fmt.Sprint("content ", i))); err != nil {
				t.Fatal(err)
			}
		}
		worst := func(m *osdmap.Map) float64 {
			return balancer.Eval(m, nil).Pools[0].MaxDeviation
		}
		if d := worst(c.Map()); d <= 1 {
			t.Fatalf("CRUSH alone is within one copy (%v): nothing to test", d)
		}
		c.Run("config set", "who", "mon", "name", "balancer_sleep_interval", "value", "5s")
		c.Run("balancer on")
		balanced := false
		for range 60 {
			time.Sleep(10 * time.Second)
			synctest.Wait()
			if worst(c.Map()) <= 1 {
				balanced = true
				break
			}
		}
		if !balanced {
			t.Fatalf("not balanced after 10 minutes: %s", balancer.Eval(c.Map(), nil).Text())
		}
		c.settle(t, "after balancing")
		m := c.Map()
		if len(m.Spec().PGUpmapItems) == 0 {
			t.Fatal("balanced without a single upmap")
		}
		var s osdmap.Scratch
		want := map[int32][]osdmap.PG{}
		for seed := range m.Pool(1).PGNum {
			mp, err := m.PGToUpActing(osdmap.PG{Pool: 1, Seed: seed}, &s)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range mp.Up {
				want[o] = append(want[o], mp.PG)
			}
		}
		for id := range int32(6) {
			got := c.pgsHeldBy(t, id)
			slices.SortFunc(got, osdmap.ComparePG)
			if !slices.Equal(got, want[id]) {
				t.Errorf("osd.%d holds %v, the balanced map gives it %v", id, got, want[id])
			}
		}
		for i := range 60 {
			got, err := io.Read(ctx, fmt.Sprint("obj-", i), 0, 0)
			if err != nil || string(got) != fmt.Sprint("content ", i) {
				t.Fatalf("obj-%d reads %q, %v after balancing", i, got, err)
			}
		}
	})
}
