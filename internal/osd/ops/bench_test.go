package ops

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// benchExecute runs ops on an object that has 4 KiB of data, attributes
// and omap entries, without applying what they change.
func benchExecute(b *testing.B, ops ...wire.ObjectOp) {
	f := newFixture(b)
	f.ok(wire.ObjectOp{Code: wire.OpWriteFull, Data: make([]byte, 4096)}, opSetX("a", "1"), opOmapSet("k1", "v1", "k2", "v2"))
	env := &Env{Store: f.store, Collection: f.coll, Object: f.obj, Version: wire.Version{Epoch: 1, Counter: 1}, Now: f.now}
	b.ReportAllocs()
	for b.Loop() {
		res, err := Execute(b.Context(), env, ops)
		if err != nil || res.Code != 0 {
			b.Fatal(err, res.Code)
		}
	}
}

// BenchmarkExecute: the common shapes (only writes, only reads) cost
// what they did before reads could see earlier writes; a read after a
// write pays for replaying the request's transaction.
func BenchmarkExecute(b *testing.B) {
	data := make([]byte, 4096)
	b.Run("write", func(b *testing.B) { benchExecute(b, wire.ObjectOp{Code: wire.OpWrite, Data: data}) })
	b.Run("setxattr+omapset", func(b *testing.B) { benchExecute(b, opSetX("b", "2"), opOmapSet("k3", "v3")) })
	b.Run("read", func(b *testing.B) { benchExecute(b, opRead(0, 4096)) })
	b.Run("cmpxattr+write", func(b *testing.B) {
		benchExecute(b, opCmpX("a", "1"), wire.ObjectOp{Code: wire.OpWrite, Data: data})
	})
	b.Run("getxattr+omapvals", func(b *testing.B) { benchExecute(b, opGetX("a"), wire.ObjectOp{Code: wire.OpOmapGetVals}) })
	b.Run("write+read", func(b *testing.B) { benchExecute(b, wire.ObjectOp{Code: wire.OpWrite, Data: data}, opRead(0, 4096)) })
	b.Run("setxattr+cmpxattr", func(b *testing.B) { benchExecute(b, opSetX("a", "2"), opCmpX("a", "2")) })
}
