package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// reservations is an OSD's answer to dump_recovery_reservations.
type reservations struct {
	Local            reservationSide `json:"local_reservations"`
	Remote           reservationSide `json:"remote_reservations"`
	UnreservedPushes uint64          `json:"unreserved_pushes"`
}

type reservationSide struct {
	Limit   int `json:"max_allowed"`
	MaxHeld int `json:"max_held"`
	Held    []struct {
		PG      string `json:"pgid"`
		Primary int32  `json:"primary"`
	} `json:"in_progress"`
	Waiting []struct {
		PG      string `json:"pgid"`
		Primary int32  `json:"primary"`
	} `json:"queue"`
}

func (c *Cluster) reservations(t *testing.T, id int32) reservations {
	t.Helper()
	r := c.OSDs[id].D.Command(wire.NewCommand("dump_recovery_reservations"))
	var d reservations
	if err := json.Unmarshal(r.Data, &d); err != nil {
		t.Fatalf("osd.%d dump_recovery_reservations: %v: %s", id, err, r.Data)
	}
	return d
}

// reservationCluster starts an OSD on each of hosts hosts with a pool of
// 32 PGs of size size (min_size 1), recovery slow enough to watch (one
// push at a time per PG, resting a second after each), osd_max_backfills
// 8 on every OSD but target, which has targetSlots. It stops target,
// writes objects, and returns the cluster, with the copies target lacks
// (one per object of a PG it serves as a replica once back).
func reservationCluster(t *testing.T, hosts, size int, target int32, targetSlots, objects int) (*Cluster, int) {
	c := New(t, Options{RecoveryMaxPushes: 1, RecoverySleep: time.Second})
	for i := range hosts {
		c.AddOSD(fmt.Sprint("h", i+1))
	}
	c.Run("osd pool create", "pool", "rbd", "pg_num", "32", "size", fmt.Sprint(size), "min_size", "1", "yes_i_really_mean_it", "true")
	c.Run("config set", "who", "osd", "name", "osd_max_backfills", "value", "8")
	c.Run("config set", "who", fmt.Sprint("osd.", target), "name", "osd_max_backfills", "value", fmt.Sprint(targetSlots))
	c.WaitForEpoch(c.Epoch())
	time.Sleep(daemon.OSDConfigInterval + time.Second) // every OSD polls the central config
	synctest.Wait()
	io, err := c.connect(t, "client.app").OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c.StopOSD(target)
	c.WaitForEpoch(c.Epoch())
	copies := 0
	for i := range objects {
		name := fmt.Sprint("obj-", i)
		if err := io.WriteFull(ctx, name, []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	c.StartOSD(target)
	c.WaitForEpoch(c.Epoch())
	for i := range objects {
		_, _, mp := place(t, c, fmt.Sprint("obj-", i))
		for _, x := range mp.Acting[1:] {
			if x == target {
				copies++
			}
		}
	}
	return c, copies
}

// Many PGs recover to one returning OSD at once, their primaries each
// allowed eight recovering PGs: the returning OSD grants its slots
// (osd_max_backfills 2) two PGs at a time, so it never receives more
// than two PGs' pushes at once, every push arrives under a reservation,
// and recovery takes at least as long as two pushes a second allow. Then
// a raised osd_max_backfills on the member is in effect at once.
func TestRecoveryReservesMembersSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const target, slots = 3, 2
		c, copies := reservationCluster(t, 4, 3, target, slots, 160)
		start := time.Now()
		for time.Since(start) < 10*time.Minute && len(c.uncleanPGs()) > 0 {
			time.Sleep(time.Second)
			synctest.Wait()
		}
		took := time.Since(start)
		if bad := c.uncleanPGs(); len(bad) > 0 {
			t.Fatalf("PGs not clean after %v: %v", took, bad)
		}
		d := c.reservations(t, target)
		if d.Remote.MaxHeld != slots || d.Remote.Limit != slots {
			t.Errorf("osd.%d held at most %d remote reservations of %d, want exactly %d (the limit, reached)", target, d.Remote.MaxHeld, d.Remote.Limit, slots)
		}
		if d.UnreservedPushes != 0 {
			t.Errorf("osd.%d applied %d pushes without a reservation", target, d.UnreservedPushes)
		}
		if len(d.Remote.Held)+len(d.Remote.Waiting) != 0 {
			t.Errorf("osd.%d still holds or queues reservations after recovery: %+v", target, d.Remote)
		}
		// The primaries would have pushed to it more PGs at once: each
		// held as many local slots as it had PGs waiting.
		local := 0
		for id := range int32(4) {
			if id != target {
				local += c.reservations(t, id).Local.MaxHeld
			}
		}
		if local <= slots {
			t.Errorf("the primaries recovered at most %d PGs at once between them: no contention for osd.%d's %d slots", local, target, slots)
		}
		// Each PG pushes one object at a time and rests a second after
		// it: two PGs at a time make at most two copies a second.
		if minimum := time.Duration(copies/slots-1) * time.Second; took < minimum {
			t.Errorf("%d copies recovered to osd.%d in %v; two PGs at a time take at least %v", copies, target, took, minimum)
		}
		t.Logf("%d copies to osd.%d in %v; the primaries held up to %d local slots between them", copies, target, took, local)
	})
}

// A member drops the reservation of a primary that died: the map that
// marks the primary down ends the PG's interval, and the member grants
// the slot to the next primary waiting, rather than holding it for a
// process that will never release it. The pool has two copies, so the
// PG's only other member, the target, becomes its primary: no new request
// replaces the old one, only the map can end it. The recovery finishes
// once the dead primary returns.
func TestReservationOfADeadPrimaryIsReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const target = 2
		c, _ := reservationCluster(t, 3, 2, target, 1, 160)
		// Wait until one primary holds the slot while the other waits.
		var d reservations
		waiting := func(primary int32) bool {
			for _, e := range d.Remote.Waiting {
				if e.Primary != primary {
					return true
				}
			}
			return false
		}
		found := false
		for range 60 {
			synctest.Wait()
			d = c.reservations(t, target)
			if found = len(d.Remote.Held) == 1 && waiting(d.Remote.Held[0].Primary); found {
				break
			}
			time.Sleep(time.Second)
		}
		if !found {
			t.Fatalf("osd.%d never had its slot held by one primary with another waiting: %+v", target, d.Remote)
		}
		// It dies as a crash would: nothing it sends on its way out (its
		// recoverer's release) reaches the target.
		dead := d.Remote.Held[0].Primary
		c.Net.Partition(c.OSDs[dead].Addr, c.OSDs[target].Addr)
		c.KillOSD(dead)
		c.Run("osd down", "ids", fmt.Sprint(dead))
		c.Net.Heal()
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		d = c.reservations(t, target)
		for _, e := range append(d.Remote.Held, d.Remote.Waiting...) {
			if e.Primary == dead {
				t.Fatalf("osd.%d keeps a reservation of pg %s for osd.%d, which is down: %+v", target, e.PG, dead, d.Remote)
			}
		}
		if len(d.Remote.Held) != 1 {
			t.Fatalf("osd.%d did not hand the dead primary's slot on: %+v", target, d.Remote)
		}
		if d.Remote.MaxHeld != 1 {
			t.Fatalf("osd.%d held %d reservations at once, limit 1", target, d.Remote.MaxHeld)
		}
		c.StartOSD(dead)
		c.settle(t, "after the dead primary returned")
		d = c.reservations(t, target)
		if d.Remote.MaxHeld != 1 || d.UnreservedPushes != 0 || len(d.Remote.Held)+len(d.Remote.Waiting) != 0 {
			t.Fatalf("osd.%d after recovery: %+v", target, d)
		}
	})
}
