package sim

import (
	"context"
	"errors"
	"syscall"
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

// An OSD whose disk fails under writes asks to be marked down and stops;
// the write it could not take goes on without it, acknowledged by the
// others, and nothing acknowledged is lost.
func TestFailingDiskStopsItsOSD(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // virtual time
		defer cancel()
		_, _, mp := place(t, c, "obj")
		if err := io.WriteFull(ctx, "obj", []byte("before")); err != nil {
			t.Fatal(err)
		}
		sick := c.OSDs[mp.Acting[1]]
		sick.Gate.FailWrites()
		if err := io.WriteFull(ctx, "obj", []byte("after")); err != nil {
			t.Fatalf("write while a replica's disk fails: %v", err)
		}
		// The write can be answered (by the others, once the sick OSD
		// asked to be marked down) before the sick OSD has finished
		// stopping: give it a virtual minute, no more.
		select {
		case <-sick.D.Failed():
		case <-time.After(time.Minute):
			t.Fatalf("osd.%d still runs on a failed disk", sick.ID)
		}
		if !errors.Is(sick.D.FailedErr(), syscall.EIO) || c.Map().IsUp(sick.ID) {
			t.Fatalf("osd.%d: failed with %v; up in the map: %v", sick.ID, sick.D.FailedErr(), c.Map().IsUp(sick.ID))
		}
		got, err := io.Read(ctx, "obj", 0, 0)
		if err != nil || string(got) != "after" {
			t.Fatalf("read: %q, %v", got, err)
		}
	})
}
