package sim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// An OSD that dies without telling anyone (a crash, a pulled cable) is
// reported by the peers it shares PGs with once it has been quiet for the
// heartbeat grace; the monitors mark it down, its PGs go on without it,
// and a write that waited for it completes.
func TestDeadOSDIsReportedAndMarkedDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.app")
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		_, _, mp := place(t, c, "obj")
		victim := mp.Acting[1] // a replica of the object's PG
		c.KillOSD(victim)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // virtual time
		defer cancel()
		if err := io.WriteFull(ctx, "obj", []byte("after the crash")); err != nil {
			t.Fatalf("write to a PG that lost an OSD: %v", err)
		}
		took := time.Since(start)
		if c.Map().IsUp(victim) {
			t.Fatalf("osd.%d is still up in the map", victim)
		}
		// Default grace 20 s, checked every 3 s, pinged after 6 s quiet.
		if took < 20*time.Second || took > 40*time.Second {
			t.Fatalf("the write took %v; want the heartbeat grace (20 s) and a little more", took)
		}
		if b, err := io.Read(ctx, "obj", 0, 0); err != nil || string(b) != "after the crash" {
			t.Fatalf("read %q, %v", b, err)
		}
	})
}

// Idle OSDs ping each other: without any client traffic for many grace
// periods nobody is reported, and every OSD stays up.
func TestIdleOSDsStayUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, epoch := threeOSDs(t)
		time.Sleep(10 * time.Minute) // virtual time: the OSDs only ping
		m := c.Map()
		for id := range m.MaxOSD() {
			if !m.IsUp(id) {
				t.Fatalf("osd.%d went down while idle", id)
			}
		}
		if uint64(m.Epoch()) != epoch {
			t.Fatalf("the map moved from epoch %d to %d while the cluster idled", epoch, m.Epoch())
		}
	})
}
