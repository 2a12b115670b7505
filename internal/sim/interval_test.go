package sim

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// noReply checks that nothing has arrived on ch once every goroutine of
// the bubble is blocked.
func noReply(t *testing.T, ch <-chan wire.OSDOpReply, what string) {
	t.Helper()
	synctest.Wait()
	select {
	case r := <-ch:
		t.Fatalf("%s: got %+v, want no reply yet", what, r)
	default:
	}
}

// A replica slow to commit holds back the committed reply, not the
// applied one.
func TestSlowReplicaCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, epoch := threeOSDs(t)
		rc := c.NewRawClient("client.1")
		id, pg, mp := place(t, c, "slow")
		slow := c.OSDs[mp.Acting[2]]
		slow.Gate.Hold()
		_, ch := rc.Send(c.OSDs[mp.ActingPrimary], Op{Epoch: epoch, Object: id, PG: pg, Flags: wire.FlagWantApplied,
			Ops: []wire.ObjectOp{{Code: wire.OpWrite, Data: []byte("x")}}})
		if r := rc.Wait(ch); r.Result != 0 || r.Flags != wire.ReplyApplied {
			t.Fatalf("first reply %+v, want applied", r)
		}
		noReply(t, ch, "commit while a replica holds it")
		slow.Gate.Open()
		if r := rc.Wait(ch); r.Result != 0 || r.Flags&wire.ReplyCommitted == 0 {
			t.Fatalf("second reply %+v, want committed", r)
		}
	})
}

// A write in flight when its PG's interval changes is answered ESTALE;
// resent against the new map, it is applied once.
func TestIntervalChangeMidWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.AddOSD("h4")
		epoch := c.Epoch()
		c.WaitForEpoch(epoch)
		rc := c.NewRawClient("client.1")
		id, pg, mp := place(t, c, "moving")
		slow := c.OSDs[mp.Acting[len(mp.Acting)-1]]
		slow.Gate.Hold()
		op := Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpAppend, Data: []byte("once")}}}
		tid, ch := rc.Send(c.OSDs[mp.ActingPrimary], op)
		noReply(t, ch, "write with a replica holding its commit")
		// Taking the slow replica out changes the PG's acting set.
		c.Run("osd out", "ids", fmt.Sprint(slow.ID))
		r := rc.Wait(ch)
		if r.Result != -wire.ESTALE || r.Epoch <= epoch {
			t.Fatalf("in-flight write answered %+v, want ESTALE with a newer epoch", r)
		}
		slow.Gate.Open()
		c.WaitForEpoch(r.Epoch)
		id, pg, mp = place(t, c, "moving")
		op.Epoch, op.Tid, op.PG = r.Epoch, tid, pg
		_, ch = rc.Send(c.OSDs[mp.ActingPrimary], op)
		if r := rc.WaitCommitted(ch); r.Result != 0 {
			t.Fatalf("resend answered %+v", r)
		}
		_, ch = rc.Send(c.OSDs[mp.ActingPrimary], Op{Epoch: r.Epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpRead}}})
		if r := rc.Wait(ch); r.Result != 0 || string(r.Ops[0].Data) != "once" {
			t.Fatalf("read after the resend: %+v", r)
		}
	})
}

// An op from a client whose map is newer than the OSD's waits for that
// map.
func TestOpWaitsForItsEpoch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, epoch := threeOSDs(t)
		rc := c.NewRawClient("client.1")
		id, pg, mp := place(t, c, "future")
		_, ch := rc.Send(c.OSDs[mp.ActingPrimary], Op{Epoch: epoch + 1, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpWrite, Data: []byte("x")}}})
		noReply(t, ch, "op from the future")
		c.Run("osd set", "key", "noout") // one more epoch
		if r := rc.WaitCommitted(ch); r.Result != 0 || r.Epoch < epoch+1 {
			t.Fatalf("op after its epoch arrived: %+v", r)
		}
	})
}

// A PG with fewer than min_size OSDs acting holds writes until it has
// them again.
func TestMinSizeHoldsWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.Run("osd set", "key", "noout")
		rc := c.NewRawClient("client.1")
		_, _, mp := place(t, c, "guarded")
		primary := mp.ActingPrimary
		var others []int32
		for _, o := range mp.Acting {
			if o != primary {
				others = append(others, o)
			}
		}
		for _, o := range others {
			c.StopOSD(o)
		}
		epoch := c.Epoch()
		c.WaitForEpoch(epoch)
		id, pg, mp := place(t, c, "guarded")
		if len(mp.Acting) != 1 || mp.ActingPrimary != primary {
			t.Fatalf("acting %v primary %d after stopping two", mp.Acting, mp.ActingPrimary)
		}
		_, ch := rc.Send(c.OSDs[primary], Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpWrite, Data: []byte("x")}}})
		noReply(t, ch, "write below min_size")
		c.StartOSD(others[0])
		if r := rc.WaitCommitted(ch); r.Result != 0 && r.Result != -wire.ESTALE {
			t.Fatalf("write once min_size is back: %+v", r)
		}
	})
}
