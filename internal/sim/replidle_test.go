package sim

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/osd/replread"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// TestReplicaReadsIdleWatermark: a PG's last write is readable at its
// replicas once the PG has been idle replread.IdleDelay, without another
// write: the primary sends them the watermark above it (wire.RepIdle).
// Before that, at the same virtual instant as the write's answer, each
// replica refuses the read (its watermark came with the write itself,
// so the object is not below it); after it each serves the value, and
// again for a second write. In both ack modes.
func TestReplicaReadsIdleWatermark(t *testing.T) {
	for _, ack := range []string{"all", "primary"} {
		t.Run(ack, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, _ := threeOSDs(t)
				if ack != "all" {
					setAck(t, c, ack)
				}
				synctest.Wait()
				epoch := c.Epoch()
				id, pg, mp := place(t, c, "idle")
				primary := c.OSDs[mp.ActingPrimary]
				rc := c.NewRawClient("client.idle")
				readAt := func(osd int32) wire.OSDOpReply {
					_, ch := rc.Send(c.OSDs[osd], Op{Epoch: epoch, Object: id, PG: pg, Flags: wire.FlagBalanceReads,
						Ops: []wire.ObjectOp{{Code: wire.OpRead}}})
					return rc.WaitCommitted(ch)
				}
				sentBefore := c.Counter(primary.ID, "cuttle_osd_idle_watermarks_total")
				for _, val := range []string{"v1", "v2"} {
					_, ch := rc.Send(primary, Op{Epoch: epoch, Object: id, PG: pg,
						Ops: []wire.ObjectOp{{Code: wire.OpWriteFull, Data: []byte(val)}}})
					if r := rc.WaitCommitted(ch); r.Result != 0 {
						t.Fatalf("write %s: result %d", val, r.Result)
					}
					synctest.Wait() // every member has committed it; no virtual time has passed
					for _, r := range mp.Acting[1:] {
						if got := readAt(r); got.Result != -wire.ENOTCURRENT {
							t.Fatalf("osd.%d answered a read of the write %s at once with result %d, want ENOTCURRENT", r, val, got.Result)
						}
					}
					time.Sleep(2 * replread.IdleDelay) // the PG is idle: the primary sends the watermark
					synctest.Wait()
					for _, r := range mp.Acting[1:] {
						got := readAt(r)
						if got.Result != 0 || len(got.Ops) != 1 || string(got.Ops[0].Data) != val {
							t.Fatalf("osd.%d after the idle watermark: result %d, ops %+v, want %q", r, got.Result, got.Ops, val)
						}
					}
				}
				if sent := c.Counter(primary.ID, "cuttle_osd_idle_watermarks_total") - sentBefore; sent < 2 {
					t.Errorf("the primary counts %v idle watermarks sent, want 2 at least", sent)
				}
			})
		})
	}
}
