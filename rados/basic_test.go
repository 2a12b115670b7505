package rados_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Every op goes to the acting primary of its object's PG in the client's
// map, and names that PG (RADOS paper, section 3.1: clients compute
// placement and talk to the primary directly).
func TestOpsReachActingPrimary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{osds: 4, pgNum: 16})
		_, io := c.connect(t)
		ctx := t.Context()
		for i := range 40 {
			name := fmt.Sprintf("obj-%d", i)
			if err := io.WriteFull(ctx, name, []byte(name)); err != nil {
				t.Fatalf("write %s: %v", name, err)
			}
			got, err := io.Read(ctx, name, 0, 0)
			if err != nil || !bytes.Equal(got, []byte(name)) {
				t.Fatalf("read %s = %q, %v", name, got, err)
			}
		}
		m := c.newest()
		var s osdmap.Scratch
		primaries := map[int32]bool{}
		for _, r := range c.received() {
			pg, _ := m.ObjectIDToPG(r.op.Object)
			mp, _ := m.PGToUpActing(pg, &s)
			if r.op.PG != pg || r.osd != mp.ActingPrimary {
				t.Errorf("%v went to osd.%d naming pg %v; its pg is %v with primary osd.%d", r.op.Object, r.osd, r.op.PG, pg, mp.ActingPrimary)
			}
			if r.op.Epoch != uint64(m.Epoch()) || r.op.Attempt != 0 {
				t.Errorf("%v: epoch %d attempt %d, want %d and 0", r.op.Object, r.op.Epoch, r.op.Attempt, m.Epoch())
			}
			primaries[r.osd] = true
		}
		if len(primaries) < 2 {
			t.Errorf("40 objects over 16 PGs reached only %v", primaries)
		}
	})
}

// A write whose primary changes while it is in flight is resent to the
// new primary with the same ReqID and applied once; the caller sees one
// success.
func TestPrimaryChangeMidFlightAppliesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		_, io := c.connect(t)
		pg, primary := c.objectPG("obj")
		c.setScript(func(osd int32, op *wire.OSDOp) action {
			if osd == primary && op.Attempt == 0 {
				return actApplyNoReply // applied, but the reply is lost with the old primary
			}
			return actServe
		})
		done := make(chan error, 1)
		go func() { done <- io.Append(t.Context(), "obj", []byte("x")) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("write completed before any reply: %v", err)
		default:
		}
		next := c.otherOSD(pg, primary)
		c.newEpoch(movePrimary(pg, next))
		if err := <-done; err != nil {
			t.Fatalf("append: %v", err)
		}
		rs := c.receivedFor("obj")
		if len(rs) != 2 || rs[0].osd != primary || rs[1].osd != next || rs[0].op.Req != rs[1].op.Req ||
			rs[1].op.Attempt != 1 || rs[1].op.Epoch != 2 {
			t.Fatalf("arrivals %+v: want the same request at osd.%d then at osd.%d (attempt 1, epoch 2)", rs, primary, next)
		}
		if n := c.appliedCount(rs[0].op.Req); n != 1 {
			t.Fatalf("applied %d times", n)
		}
		got, err := io.Read(t.Context(), "obj", 0, 0)
		if err != nil || string(got) != "x" {
			t.Fatalf("read = %q, %v", got, err)
		}
	})
}

var _ = errors.Is
var _ = objid.Object
