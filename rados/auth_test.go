package rados_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/osdmap"
)

// With cephx the client logs in to the monitors, presents its osd ticket
// to the OSDs, and renews the ticket before it expires: a connection
// opened long after login still authenticates.
func TestCephxTicketsRenewed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{cephx: true, ticketTTL: 10 * time.Minute})
		_, io := c.connect(t)
		if err := io.WriteFull(t.Context(), "obj", []byte("v")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour) // six ticket lifetimes
		for i := range c.osds {
			c.net.Break("client", osdAddr(int32(i)))
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if got, err := io.Read(ctx, "obj", 0, 0); err != nil || string(got) != "v" {
			t.Fatalf("read after an hour: %q, %v", got, err)
		}
	})
}

// A wrong key is refused by the monitors: Connect fails.
func TestCephxWrongKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{cephx: true})
		cfg := c.config()
		cfg.Key = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if conn, err := connectOnly(ctx, cfg); err == nil {
			conn.Close()
			t.Fatal("connected with a wrong key")
		}
	})
}

// When the session to the monitor holding the subscription fails, the
// client subscribes at another monitor from its next epoch, and keeps
// receiving maps.
func TestSubscriptionMovesToAnotherMonitor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{mons: 2})
		conn, _ := c.connect(t)
		first := c.subscriptions()[0].mon
		var firstAddr string
		for _, m := range c.mons {
			if m.name == first {
				firstAddr = m.addr
			}
		}
		c.net.Partition("client", firstAddr)
		time.Sleep(time.Second)
		subs := c.subscriptions()
		last := subs[len(subs)-1]
		if last.mon == first || last.Start != 2 {
			t.Fatalf("subscriptions after mon.%s failed: %+v", first, subs)
		}
		c.newEpoch(func(*osdmap.Map, *osdmap.Incremental) {})
		synctest.Wait()
		if conn.Epoch() != 2 {
			t.Fatalf("epoch %d after the cluster moved to 2", conn.Epoch())
		}
	})
}
