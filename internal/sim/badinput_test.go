package sim

import (
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Bad requests get clear errors and never hurt the OSD: it goes on
// serving.
func TestOSDBadRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, epoch := threeOSDs(t)
		rc := c.NewRawClient("client.1")
		id, pg, mp := place(t, c, "target")
		primary := c.OSDs[mp.ActingPrimary]
		for _, tc := range []struct {
			name string
			op   Op
			want int32
		}{
			{"no ops", Op{Epoch: epoch, Object: id, PG: pg}, -wire.EINVAL},
			{"unknown op", Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: 999}}}, -wire.ENOTSUP},
			{"write past the largest object", Op{Epoch: epoch, Object: id, PG: pg,
				Ops: []wire.ObjectOp{{Code: wire.OpWrite, Offset: objectstore.MaxObjectSize, Data: []byte("x")}}}, -wire.EFBIG},
			{"unknown class", Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpCall, Name: "nope.nope"}}}, -wire.ENOTSUP},
			{"no such pool", Op{Epoch: epoch, Object: objid.Object(77, "", "x"), PG: osdmap.PG{Pool: 77}, Ops: []wire.ObjectOp{{Code: wire.OpRead}}}, -wire.ENOENT},
			{"object of another pool", Op{Epoch: epoch, Object: objid.Object(0, "", "x"), PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpRead}}}, -wire.EINVAL},
			{"pg the OSD does not have", Op{Epoch: epoch, Object: id, PG: osdmap.PG{Pool: pg.Pool, Seed: 1 << 20}, Ops: []wire.ObjectOp{{Code: wire.OpRead}}}, -wire.ESTALE},
			{"bad attribute name", Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpSetXattr}}}, -wire.EINVAL},
		} {
			_, ch := rc.Send(primary, tc.op)
			if r := rc.Wait(ch); r.Result != tc.want {
				t.Errorf("%s: result %d, want %d", tc.name, r.Result, tc.want)
			}
		}
		// Undecodable bytes are dropped with a log line.
		rc.ms.Send(t.Context(), auth.EntityName{Type: "osd", ID: "0"}, c.OSDs[0].Addr, msgr.Message{Type: wire.TypeOSDOp, Version: 1, Payload: []byte("garbage")})
		rc.ms.Send(t.Context(), auth.EntityName{Type: "osd", ID: "0"}, c.OSDs[0].Addr, msgr.Message{Type: wire.TypeRepOp, Version: 1, Payload: []byte("garbage")})
		// A client that claims to be a primary cannot push rep ops.
		bogus := wire.RepOp{PG: pg, Epoch: epoch, Txn: &objectstore.Transaction{}}
		rc.ms.Send(t.Context(), auth.EntityName{Type: "osd", ID: "0"}, c.OSDs[0].Addr, msgr.Message{Type: wire.TypeRepOp, Version: 1, Payload: bogus.Encode()})
		// Still serving.
		_, ch := rc.Send(primary, Op{Epoch: epoch, Object: id, PG: pg, Ops: []wire.ObjectOp{{Code: wire.OpWrite, Data: []byte("ok")}}})
		if r := rc.WaitCommitted(ch); r.Result != 0 {
			t.Fatalf("write after bad requests: %+v", r)
		}
	})
}
