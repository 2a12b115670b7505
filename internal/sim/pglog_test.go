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
		// A log over its limit is trimmed a sixteenth of the limit
		// below it, so it holds from limit-limit/16+1 to limit entries;
		// every member holds the same.
		checkAll := func(what string, limit int) int {
			t.Helper()
			primary := logLen(mp.Acting[0])
			if lo := limit - limit/16 + 1; primary < lo || primary > limit {
				t.Errorf("%s: osd.%d keeps %d log entries of pg %v, want %d to %d", what, mp.Acting[0], primary, pg, lo, limit)
			}
			for _, id := range mp.Acting[1:] {
				if n := logLen(id); n != primary {
					t.Errorf("%s: osd.%d keeps %d log entries of pg %v, its primary %d", what, id, n, pg, primary)
				}
			}
			return primary
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
		kept := checkAll("after 300 writes", share)

		replica := mp.Acting[1]
		c.StopOSD(replica)
		c.StartOSD(replica)
		c.settle(t, "replica restarted")
		if n := logLen(replica); n != kept {
			t.Errorf("osd.%d loaded %d log entries of pg %v from its store, want %d", replica, n, pg, kept)
		}

		// Eight more PGs halve the share to 130, below the floor of 250:
		// the logs shrink to at most 250 at their next write.
		c.Run("osd pool create", "pool", "two", "pg_num", "8", "size", "3", "min_size", "2")
		c.settle(t, "second pool")
		write(share + 40)
		synctest.Wait()
		checkAll("after a second pool", 250)
	})
}
