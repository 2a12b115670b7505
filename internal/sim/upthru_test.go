package sim

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// An interval whose primary never went active took no writes, and
// peering must not wait for its OSDs (Ceph's up_thru and maybe_went_rw).
// osd.C dies unseen (the map keeps it up); then the two others stop,
// one after the other. In between, the interval [B C] has osd.B as
// primary, but B waits in vain for C's answer and never asks the
// monitors for its up_thru; the interval [C] that follows has a dead
// primary. Once A returns alone, both intervals had enough OSDs acting
// (min_size 1) to have taken writes but neither went read-write: A
// skips them and serves everything written before, instead of staying
// down until B or C returns.
func TestIntervalThatNeverWentRWIsSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, io := newPoolCluster(t, Options{}, 1, "h1", "h2", "h3")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // virtual time
		defer cancel()
		_, pg, mp := place(t, c, "obj")
		a, b, cc := mp.Acting[0], mp.Acting[1], mp.Acting[2]
		if err := io.WriteFull(ctx, "obj", []byte("version 1")); err != nil {
			t.Fatal(err)
		}
		thruA := c.Map().OSD(a).UpThru
		c.KillOSD(cc)
		c.StopOSD(a)
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		stuck := c.pgStatus(t, b, pg)
		if stuck.State == "" || stuck.State[:7] == "active+" {
			t.Fatalf("osd.%d, primary of [%d %d] with osd.%d dead: pg %v is %q, want it peering", b, b, cc, cc, pg, stuck.State)
		}
		if thru := c.Map().OSD(b).UpThru; uint64(thru) >= stuck.SameIntervalSince {
			t.Fatalf("osd.%d got up_thru %d for an interval (since %d) it never activated", b, thru, stuck.SameIntervalSince)
		}
		c.StopOSD(b)
		c.Run("osd down", "ids", fmt.Sprint(cc))
		c.StartOSD(a)
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		got, err := io.Read(ctx, "obj", 0, 0)
		if err != nil || string(got) != "version 1" {
			t.Fatalf("osd.%d alone: read %q, %v; want version 1", a, got, err)
		}
		st := c.pgStatus(t, a, pg)
		if st.State[:6] != "active" {
			t.Fatalf("osd.%d alone: pg %v is %q (%s)", a, pg, st.State, st.DownReason)
		}
		if thru := c.Map().OSD(a).UpThru; thru <= thruA || uint64(thru) < st.SameIntervalSince {
			t.Fatalf("osd.%d serves pg %v since %d with up_thru %d (was %d)", a, pg, st.SameIntervalSince, thru, thruA)
		}
		if err := io.WriteFull(ctx, "obj", []byte("version 2")); err != nil {
			t.Fatal(err)
		}
	})
}
