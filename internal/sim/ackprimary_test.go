package sim

import (
	"bytes"
	"context"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/osd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// setAck sets pool rbd's ack mode and waits until every OSD has the map.
func setAck(t *testing.T, c *Cluster, mode string) {
	t.Helper()
	c.Run("osd pool set", "pool", "rbd", "var", "ack", "val", mode, "yes_i_really_mean_it", "true")
	c.WaitForEpoch(c.Epoch())
}

// pgStatus returns PG pg as OSD id reports it.
func pgStatus(t *testing.T, c *Cluster, id int32, pg osdmap.PG) osd.PGStatus {
	t.Helper()
	for _, s := range c.OSDs[id].D.PGs() {
		if s.PG == pg.String() {
			return s
		}
	}
	t.Fatalf("osd.%d does not hold pg %s", id, pg)
	return osd.PGStatus{}
}

// In ack primary a write completes once the primary committed it, while
// the replicas still hold their commits; the primary shows them behind
// by that write until they commit, and reads see it at once. In ack all
// the same write waits for them.
func TestAckPrimaryAnswersOnThePrimarysCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		_, pg, mp := place(t, c, "lagging")
		replicas := mp.Acting[1:]

		hold := func() {
			for _, r := range replicas {
				c.OSDs[r].Gate.Hold()
			}
		}
		release := func() {
			for _, r := range replicas {
				c.OSDs[r].Gate.Open()
			}
		}
		// ack all: the write waits for the replicas' commits.
		hold()
		comp := io.WriteFullAsync(ctx, "lagging", []byte("first"))
		synctest.Wait()
		select {
		case <-comp.Committed():
			t.Fatal("ack all: committed while the replicas hold their commits")
		default:
		}
		if lag := pgStatus(t, c, mp.ActingPrimary, pg).ReplicaLag; lag != nil {
			t.Fatalf("ack all shows a replication lag: %+v", lag)
		}
		release()
		if err := comp.Wait(ctx); err != nil {
			t.Fatal(err)
		}

		setAck(t, c, "primary")
		synctest.Wait()
		hold()
		data := bytes.Repeat([]byte("x"), 4096)
		if err := io.WriteFull(ctx, "lagging", data); err != nil {
			t.Fatal(err)
		}
		st := pgStatus(t, c, mp.ActingPrimary, pg)
		if st.Ack != "primary" || len(st.ReplicaLag) != 2 {
			t.Fatalf("pg %s: ack %q, lag %+v; want primary and two replicas", pg, st.Ack, st.ReplicaLag)
		}
		for _, l := range st.ReplicaLag {
			if l.Writes != 1 || l.Bytes != 4096 {
				t.Fatalf("replica lag %+v, want 1 write of 4096 bytes", l)
			}
		}
		if got := c.Gauge(mp.ActingPrimary, "cuttle_osd_pg_replication_lag_writes"); got != 2 {
			t.Fatalf("cuttle_osd_pg_replication_lag_writes sums to %v, want 2 (one write behind on each replica)", got)
		}
		got, err := io.Read(ctx, "lagging", 0, 0)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %q (%v) on the primary before the replicas committed", got, err)
		}
		release()
		synctest.Wait()
		st = pgStatus(t, c, mp.ActingPrimary, pg)
		for _, l := range st.ReplicaLag {
			if l.Writes != 0 || l.Bytes != 0 || l.Acked != st.LastUpdate {
				t.Fatalf("after the replicas committed: lag %+v, want none and acked %s", l, st.LastUpdate)
			}
		}
	})
}
