package sim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A replica that crashes and comes back at the same address boots with a
// new nonce: the monitors give it a new up_from, its PGs start a new
// interval, and a write that waited for the crashed replica is resent by
// the client and completes.
func TestReplicaRestartStartsNewInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.app")
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		_, _, mp := place(t, c, "survivor")
		replica := mp.Acting[1]
		before := c.Map().OSD(replica).UpFrom
		c.OSDs[replica].Gate.Hold() // the write applies there but never commits
		comp := io.WriteFullAsync(ctx, "survivor", []byte("data"))
		if err := comp.WaitApplied(ctx); err != nil {
			t.Fatal(err)
		}
		c.KillOSD(replica)
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
	})
}
