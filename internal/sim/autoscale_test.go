package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/autoscalemon"
)

// Writing data into a pool in pg_autoscale_mode on raises its pg_num, as
// Ceph's pg_autoscaler does. On three OSDs of 64 MiB at 200 PG copies per
// OSD (600 in the root), pool rbd of 16 PGs is within the threshold of
// its ideal while empty (32, the floor), and nothing changes. 20 MiB in
// three copies take 60 of the 192 MiB: 0.3125 x 600 / 3 = 62.5 PGs, to
// 64, more than 3 x 16, so the leader sets pg_num 64, then pgp_num 64;
// the OSDs split the PGs and backfill moves them, and every object reads
// back.
func TestAutoscalerRaisesPGNumAsDataGrows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(t, Options{StoreSize: 64 << 20})
		for _, h := range []string{"h1", "h2", "h3"} {
			c.AddOSD(h)
		}
		c.Run("config set", "who", "mon", "name", "pg_autoscaler_sleep_interval", "value", "5s")
		c.Run("config set", "who", "mon", "name", "mon_target_pg_per_osd", "value", "200")
		if r := c.Run("osd pool create", "pool", "rbd", "pg_num", "16", "size", "3", "autoscale_mode", "on"); r.Code != 0 {
			t.Fatalf("osd pool create: %d %s", r.Code, r.Status)
		}
		c.settle(t, "the empty pool")
		time.Sleep(time.Minute) // a dozen rounds
		synctest.Wait()
		if p := c.Map().PoolByName("rbd"); p.PGNum != 16 {
			t.Fatalf("the empty pool went to pg_num %d", p.PGNum)
		}
		st := autoscaleStatus(t, c)
		if st.Ideal != 32 || st.Adjust || st.Capacity != 3*64<<20 || st.OSDs != 3 {
			t.Fatalf("empty pool: %+v", st)
		}

		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		data := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 1<<20) }
		for i := range 20 {
			if err := io.WriteFull(ctx, fmt.Sprint("obj-", i), data(i)); err != nil {
				t.Fatal(err)
			}
		}
		var steps []string
		for range 240 {
			time.Sleep(5 * time.Second)
			synctest.Wait()
			p := c.Map().PoolByName("rbd")
			_, pgpTarget := p.Targets()
			step := fmt.Sprintf("pg_num %d pgp_num %d->%d", p.PGNum, p.PGPNum, pgpTarget)
			if len(steps) == 0 || steps[len(steps)-1] != step {
				steps = append(steps, step)
			}
			if p.PGNum == 64 && p.PGPNum == 64 && len(c.uncleanPGs()) == 0 {
				break
			}
		}
		t.Logf("pool rbd went %v", steps)
		if p := c.Map().PoolByName("rbd"); p.PGNum != 64 || p.PGPNum != 64 {
			t.Fatalf("pool rbd at pg_num %d pgp_num %d after 20 minutes, want 64 (went %v)", p.PGNum, p.PGPNum, steps)
		}
		c.settle(t, "after the autoscaler's split")
		if st := autoscaleStatus(t, c); st.Ideal != 64 || st.Adjust || st.PGNum != 64 {
			t.Fatalf("after: %+v", st)
		}
		for i := range 20 {
			got, err := io.Read(ctx, fmt.Sprint("obj-", i), 0, 1<<20)
			if err != nil || !bytes.Equal(got, data(i)) {
				t.Fatalf("obj-%d after the split: %d bytes, %v", i, len(got), err)
			}
		}
	})
}

// autoscaleStatus returns pool rbd's line of "osd pool autoscale-status".
func autoscaleStatus(t *testing.T, c *Cluster) autoscalemon.PoolView {
	t.Helper()
	r := c.Run("osd pool autoscale-status", "format", "json")
	var views []autoscalemon.PoolView
	if err := json.Unmarshal(r.Data, &views); err != nil || len(views) != 1 {
		t.Fatalf("autoscale-status: %v (%s)", err, r.Data)
	}
	return views[0]
}
