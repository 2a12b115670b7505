package mdcache

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// benchCache opens the engine over a monitor and three OSDs on loopback
// TCP, in real time.
func benchCache(b *testing.B) *Cache {
	c := sim.New(b, sim.Options{TCP: true})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "cephfs.meta", "pg_num", "16", "size", "3")
	c.Run("osd pool create", "pool", "cephfs.data", "pg_num", "16", "size", "3")
	c.WaitForEpoch(c.Epoch())
	conn := c.Client("client.mds")
	meta, err := conn.OpenIOContext("cephfs.meta")
	if err != nil {
		b.Fatal(err)
	}
	data, err := conn.LookupPool("cephfs.data")
	if err != nil {
		b.Fatal(err)
	}
	mc, err := Open(context.Background(), Config{Meta: meta, Conn: conn, DataPool: data, Incarnation: 1,
		Clock: clock.Real(), Outbox: &outbox{autoAck: true}})
	if err != nil {
		b.Fatal(err)
	}
	mc.Resume()
	b.Cleanup(func() { _ = mc.Close(context.Background()) })
	return mc
}

// Creates, stats and unlinks of files in one directory by 64 concurrent
// requests (as many clients' would arrive), each answered safe: the
// journal's group commit shares flushes among them. Reports ops/s.
func BenchmarkCreateStatUnlink(b *testing.B) {
	mc := benchCache(b)
	root := &tclient{c: mc, id: 1}
	if rep := root.do(&wire.ClientRequest{Op: wire.MetaMkdir, Path: p("bench"), Mode: 0o777}); rep.Result != 0 {
		b.Fatal(rep.Result)
	}
	var next atomic.Uint64
	run := func(b *testing.B, op wire.MetaOp) {
		next.Store(0)
		b.SetParallelism(64)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			tc := &tclient{c: mc, id: ClientID(100 + next.Add(1<<32)>>32)}
			for pb.Next() {
				n := next.Add(1) & (1<<32 - 1)
				req := &wire.ClientRequest{Op: op, Path: p(fmt.Sprintf("bench/f%d", n)), Mode: 0o644, OpFlags: syscall.O_CREAT | syscall.O_EXCL}
				tc.tid++
				req.Tid, req.OldestTid = tc.tid, tc.tid // one request in flight per client
				rs := tc.send(req)
				<-rs.safe
				if rs.last.Result != 0 && op == wire.MetaCreate {
					b.Errorf("%v: %d", op, rs.last.Result)
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	}
	b.Run("create", func(b *testing.B) { run(b, wire.MetaCreate) })
	b.Run("stat", func(b *testing.B) { run(b, wire.MetaGetattr) })
	b.Run("unlink", func(b *testing.B) { run(b, wire.MetaUnlink) })
}
