package sim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/beacon"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// mdsDaemon is the beacon side of an MDS in the simulation: a real
// monitor client sending real beacons over memnet, finishing each phase
// of a rank's recovery as soon as the map gives it (the MDS proper comes
// later; the monitors cannot tell).
type mdsDaemon struct {
	s      *beacon.Sender
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned
}

func (c *Cluster) startMDS(t *testing.T, name string, nonce uint64) *mdsDaemon {
	t.Helper()
	var addrs []monc.Addr
	for _, mi := range c.monmap.Mons {
		addrs = append(addrs, monc.Addr{Name: mi.Name, Addr: mi.Addr})
	}
	// One attempt per monitor lasts at most a beacon interval, so a
	// dead monitor does not cost the daemon its grace.
	mc, err := monc.New(monc.Config{Mons: addrs, Network: c.Net.Host("mds-" + name), Attempt: time.Second, Logger: Logger("mds." + name)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := beacon.New(beacon.Config{Mon: mc, Name: name, Addr: "mds-" + name + ":6800", Nonce: nonce, Logger: Logger("mds." + name)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &mdsDaemon{s: s, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		if err := s.Run(ctx); err != nil {
			t.Errorf("mds.%s: %v", name, err)
		}
	}()
	go func() {
		var seq uint64
		for {
			r, err := s.Next(ctx, seq)
			if err != nil {
				return
			}
			seq = r.Seq
			switch s.State() {
			case mdsmap.StateCreating, mdsmap.StateRejoin:
				s.SetState(mdsmap.StateActive)
			case mdsmap.StateReplay:
				s.SetState(mdsmap.StateReconnect)
			case mdsmap.StateReconnect:
				s.SetState(mdsmap.StateRejoin)
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-d.done
		mc.Close()
	})
	return d
}

// waitState waits for a beacon reply in which d holds state.
func (d *mdsDaemon) waitState(ctx context.Context, t *testing.T, state mdsmap.State) {
	t.Helper()
	var seq uint64
	for {
		r, err := d.s.Next(ctx, seq)
		if err != nil {
			t.Fatalf("waiting for %s: %v (last %s)", state, err, d.s.State())
		}
		if r.State == state {
			return
		}
		seq = r.Seq
	}
}

// An MDS whose beacons stop is replaced by the standby: three monitors
// (so beacons sent to a follower must find the leader), two daemons
// beaconing through real monitor clients; rank 0's holder dies, and the
// standby has the rank once mds_beacon_grace (4 s) has passed and the
// leader's tick (every second) has noticed, and is active a few beacons
// later — all in virtual time.
func TestMDSStandbyReplacesSilentRank(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(t, Options{Mons: 3})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // virtual time
		defer cancel()
		c.Run("osd pool create", "pool", "cephfs_metadata", "pg_num", "8")
		c.Run("osd pool create", "pool", "cephfs_data", "pg_num", "8")
		c.Run("fs new", "fs_name", "cephfs", "metadata", "cephfs_metadata", "data", "cephfs_data")
		a := c.startMDS(t, "a", 1)
		a.waitState(ctx, t, mdsmap.StateActive)
		b := c.startMDS(t, "b", 2)
		b.waitState(ctx, t, mdsmap.StateStandby)
		if got := c.Run("mds stat").Text; got != "cephfs:1 {0=a=up:active} 1 up:standby\n" {
			t.Fatalf("mds stat: %q", got)
		}

		a.cancel() // a's beacons stop, as if it were killed
		<-a.done
		died := time.Now()
		b.waitState(ctx, t, mdsmap.StateReplay)
		took := time.Since(died)
		b.waitState(ctx, t, mdsmap.StateActive)
		active := time.Since(died)
		t.Logf("rank 0 given to the standby %v after the holder's last beacon, active after %v", took, active)
		// Silent for more than the 4 s grace, then noticed at the next
		// tick of the leader (every second); b learns it at its next
		// beacon (every second).
		if took < 4*time.Second || took > 7*time.Second {
			t.Errorf("standby took the rank %v after the holder's last beacon; want within the grace plus two seconds", took)
		}
		if active > 10*time.Second {
			t.Errorf("standby active %v after the failure; want under 10 s", active)
		}
		if got := c.Run("mds stat").Text; got != "cephfs:1 {0=b=up:active}\n" {
			t.Fatalf("mds stat after failover: %q", got)
		}
		// The leader fences a's incarnation in the OSD map at its next
		// tick: within a couple of b's beacons.
		var seq uint64
		for i := 0; i < 3 && !c.Map().IsBlocklisted("mds-a:6800/1", time.Now()); i++ {
			r, err := b.s.Next(ctx, seq)
			if err != nil {
				t.Fatal(err)
			}
			seq = r.Seq
		}
		if bl := c.Map().BlocklistAddrs(); len(bl) != 1 || !c.Map().IsBlocklisted("mds-a:6800/1", time.Now()) {
			t.Fatalf("blocklist after failover: %v", bl)
		}
		if h := c.Run("health").Text; !contains(h, "MDS_INSUFFICIENT_STANDBY") && !contains(h, "insufficient standby") {
			t.Fatalf("health after failover: %s", h)
		}
	})
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
