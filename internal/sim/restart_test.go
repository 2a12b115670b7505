package sim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// A replica that crashes and comes back at the same address boots with a
// new nonce: the monitors give it a new up_from and its PGs start a new
// interval, in which the primary sends it again the write it lost; the
// write completes, and every replica holds it.
func TestReplicaRestartStartsNewInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.app")
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		oid, pg, mp := place(t, c, "survivor")
		replica := mp.Acting[1]
		before := c.Map().OSD(replica).UpFrom
		c.OSDs[replica].Gate.HoldVolatile() // the write applies there but never commits
		comp := io.WriteFullAsync(ctx, "survivor", []byte("data"))
		if err := comp.WaitApplied(ctx); err != nil {
			t.Fatal(err)
		}
		c.KillOSD(replica)
		c.OSDs[replica].Gate.Crash() // and is lost with the crash
		c.OSDs[replica].Gate.Open()
		c.StartOSD(replica)
		if after := c.Map().OSD(replica).UpFrom; after <= before {
			t.Fatalf("up_from %d after a restart, was %d", after, before)
		}
		wctx, cancel := context.WithTimeout(ctx, 5*time.Minute) // virtual time
		defer cancel()
		if err := comp.Wait(wctx); err != nil {
			t.Fatalf("the write waiting on the crashed replica: %v", err)
		}
		if b, err := io.Read(ctx, "survivor", 0, 0); err != nil || string(b) != "data" {
			t.Fatalf("read %q %v", b, err)
		}
		coll := objectstore.PGCollection(pg.Pool, pg.Seed)
		for _, id := range mp.Acting {
			b, err := c.OSDs[id].Store.Read(ctx, coll, oid, 0, 0)
			if err != nil || string(b) != "data" {
				t.Fatalf("osd.%d holds %q (%v), want the write", id, b, err)
			}
		}
	})
}
