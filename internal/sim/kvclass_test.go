package sim

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/rados"
)

// The kv class end to end: a rados client sets up a leaf and runs the
// guarded write and read through a replicated OSD; a failed guard comes
// back as the errno the kv library recognises, with nothing applied.
func TestKVClassThroughOSDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		io, err := c.connect(t, "client.kv").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		leaf := clskv.Leaf{Bounds: clskv.Bounds{Low: "a", High: "m"}, K: 1}
		w := rados.NewWriteOp()
		w.Create(true)
		w.SetXattr(clskv.LeafAttr, leaf.Encode())
		if err := io.OperateWrite(ctx, "leaf", w); err != nil {
			t.Fatal(err)
		}
		errno := func(err error) int {
			var oe *rados.OpError
			if !errors.As(err, &oe) {
				t.Fatalf("not an op error: %v", err)
			}
			return oe.Errno
		}
		put := func(keys ...string) error {
			var r clskv.WriteRequest
			for _, k := range keys {
				r.Puts = append(r.Puts, clskv.Pair{Key: k, Value: []byte(k)})
			}
			_, err := io.Exec(ctx, "leaf", clskv.Class, "write", r.Encode())
			return err
		}
		if err := put("b", "c"); err != nil {
			t.Fatal(err)
		}
		if err := put("d"); errno(err) != int(clskv.ErrnoFull) {
			t.Fatalf("a third entry with k 1: %v", err)
		}
		if err := put("x"); errno(err) != int(clskv.ErrnoNotMine) {
			t.Fatalf("a key out of range: %v", err)
		}
		r := rados.NewReadOp()
		st := r.Exec(clskv.Class, "read", clskv.ReadRequest{Scan: true, From: "a"}.Encode())
		if err := io.OperateRead(ctx, "leaf", r); err != nil {
			t.Fatal(err)
		}
		reply, err := clskv.DecodeReadReply(st.Output)
		if err != nil || len(reply.Pairs) != 2 || reply.Pairs[0].Key != "b" || reply.Pairs[1].Key != "c" || reply.More {
			t.Fatalf("scan %+v %v", reply, err)
		}
		// The count the guard keeps is replicated with the entries.
		attr, err := io.GetXattr(ctx, "leaf", clskv.LeafAttr)
		if err != nil {
			t.Fatal(err)
		}
		if l, err := clskv.DecodeLeaf(attr); err != nil || l.Count != 2 {
			t.Fatalf("leaf %+v %v", l, err)
		}
	})
}
