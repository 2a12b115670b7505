package sim

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// Each OSD shares its budget of PG log entries among its PGs, and a
// replica's log follows the tail its primary chose, in memory as on disk.
func TestPGLogsShareTheOSDBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const share = 260 // pool rbd's 8 PGs are on each of the 3 OSDs
		c, io := newPoolCluster(t, Options{LogEntriesPerOSD: 8 * share}, 2, "h1", "h2", "h3")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // virtual time
		defer cancel()
		_, pg, mp := place(t, c, "hot")
		logLen := func(id int32) int {
			t.Helper()
			for _, s := range c.OSDs[id].D.PGs() {
				if s.PG == pg.String() {
					return s.LogEntries
				}
			}
			t.Fatalf("osd.%d does not hold pg %v", id, pg)
			return 0
		}
		checkAll := func(what string, want int) {
			t.Helper()
			for _, id := range mp.Acting {
				if n := logLen(id); n != want {
					t.Errorf("%s: osd.%d keeps %d log entries of pg %v, want %d", what, id, n, pg, want)
				}
			}
		}
		write := func(i int) {
			t.Helper()
			if err := io.WriteFull(ctx, "hot", fmt.Appendf(nil, "version %d", i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range share + 40 {
			write(i)
		}
		synctest.Wait()
		checkAll("after 300 writes", share)

		replica := mp.Acting[1]
		c.StopOSD(replica)
		c.StartOSD(replica)
		c.settle(t, "replica restarted")
		if n := logLen(replica); n != share {
			t.Errorf("osd.%d loaded %d log entries of pg %v from its store, want %d", replica, n, pg, share)
		}

		// Eight more PGs halve the share to 130, below the floor of 250:
		// the logs shrink to 250 at their next write.
		c.Run("osd pool create", "pool", "two", "pg_num", "8", "size", "3", "min_size", "2")
		c.settle(t, "second pool")
		write(share + 40)
		synctest.Wait()
		checkAll("after a second pool", 250)
	})
}
