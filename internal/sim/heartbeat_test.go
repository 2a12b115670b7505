package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// An OSD whose process dies without telling anyone (a crash, SIGKILL)
// is found gone by the peers it shares PGs with as soon as their
// connections to it break: the redial is refused, each reports it
// immediately, and two hosts' reports mark it down without waiting out
// the heartbeat grace. Its PGs go on without it, and a write that waited
// for it completes, all well within the first heartbeat interval.
func TestKilledOSDIsMarkedDownAtOnce(t *testing.T) {
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
		// The first redial comes within the messenger's first backoff
		// (200 ms); then a report, a map and a peering. The heartbeat
		// interval (6 s) would be the earliest a ping could find it.
		t.Logf("osd.%d killed: a write waiting for it completed %v later", victim, took)
		if took > 2*time.Second {
			t.Fatalf("the write took %v; want the dead OSD found at its first refused redial, well before the heartbeat interval", took)
		}
		if b, err := io.Read(ctx, "obj", 0, 0); err != nil || string(b) != "after the crash" {
			t.Fatalf("read %q, %v", b, err)
		}
	})
}

// An OSD that hangs with its connections open (SIGSTOP) refuses nothing:
// its peers see only silence, and it gets the whole heartbeat grace
// before the monitors mark it down. Resumed, it finds itself marked down
// and boots again.
func TestStoppedOSDGetsTheGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		_, _, mp := place(t, c, "obj")
		victim := c.OSDs[mp.Acting[1]]
		upFrom := c.Map().OSD(victim.ID).UpFrom
		c.Net.Freeze(victim.Addr)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // virtual time
		defer cancel()
		if err := io.WriteFull(ctx, "obj", []byte("after the hang")); err != nil {
			t.Fatalf("write to a PG with a hung OSD: %v", err)
		}
		took := time.Since(start)
		down := c.Map()
		if down.IsUp(victim.ID) {
			t.Fatalf("osd.%d is still up in the map", victim.ID)
		}
		// Default grace 20 s, checked every 3 s, pinged after 6 s quiet.
		if took < 20*time.Second || took > 40*time.Second {
			t.Fatalf("the write took %v; want the heartbeat grace (20 s) and a little more", took)
		}
		c.Net.Thaw(victim.Addr)
		// It learns it was marked down, then boots again: an epoch
		// after down's, applied by the OSD itself, has it up.
		for e := uint64(down.Epoch()) + 1; ; e++ {
			if err := victim.D.WaitForEpoch(ctx, e); err != nil {
				t.Fatalf("osd.%d did not boot again after it resumed: %v", victim.ID, err)
			}
			if m := c.Map(); m.IsUp(victim.ID) {
				if m.OSD(victim.ID).UpFrom <= upFrom {
					t.Fatalf("osd.%d up from %d, want a new incarnation after %d", victim.ID, m.OSD(victim.ID).UpFrom, upFrom)
				}
				break
			}
		}
		if b, err := io.Read(ctx, "obj", 0, 0); err != nil || string(b) != "after the hang" {
			t.Fatalf("read %q, %v", b, err)
		}
	})
}

// One link that refuses (a firewall rule that rejects) looks, to the two
// OSDs at its ends, like a dead peer: each reports the other immediately.
// But one reporter is one failure domain of the two needed, so nobody is
// marked down, however long it lasts; and once it heals the reports are
// withdrawn.
func TestOneRefusingLinkTakesNobodyDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, epoch := threeOSDs(t)
		a, b := c.OSDs[0], c.OSDs[1]
		c.Net.Refuse(a.Addr, b.Addr)
		time.Sleep(time.Second) // virtual: the redials are refused and reported
		for _, target := range []*OSD{a, b} {
			r := c.Run("osd failure", "target", fmt.Sprint(target.ID))
			if !strings.Contains(r.Status, "failure reports pending (1 of 2 reporters' failure domains (1 refused by it)") {
				t.Fatalf("osd.%d after its link to the other refused: %q, want one immediate report pending", target.ID, r.Status)
			}
		}
		time.Sleep(5 * time.Minute) // virtual: many graces
		m := c.Map()
		for id := range m.MaxOSD() {
			if !m.IsUp(id) {
				t.Fatalf("osd.%d marked down over one refusing link", id)
			}
		}
		if uint64(m.Epoch()) != epoch {
			t.Fatalf("the map moved from epoch %d to %d", epoch, m.Epoch())
		}
		c.Net.Heal()
		time.Sleep(time.Minute) // virtual: reconnects, pings, cancelled reports
		for _, target := range []*OSD{a, b} {
			if r := c.Run("osd failure", "target", fmt.Sprint(target.ID)); !strings.Contains(r.Status, "0 of 2") {
				t.Errorf("osd.%d after the link healed: %q, want no report pending", target.ID, r.Status)
			}
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
