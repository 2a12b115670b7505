package rados_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/cuttlestore/cuttle/rados"
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

// ESTALE from an OSD whose map is newer makes the client wait until its
// own map reaches the OSD's epoch (asking the monitors for it), then
// retarget; it does not resend before.
func TestStaleWaitsForMap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		_, io := c.connect(t)
		pg, primary := c.objectPG("obj")
		next := c.otherOSD(pg, primary)
		c.advance(movePrimary(pg, next)) // the OSDs know epoch 2; the monitors do not serve it yet
		done := make(chan error, 1)
		go func() { done <- io.WriteFull(t.Context(), "obj", []byte("v")) }()
		synctest.Wait()
		rs := c.receivedFor("obj")
		if len(rs) != 1 || rs[0].osd != primary || rs[0].op.Epoch != 1 {
			t.Fatalf("arrivals before the map: %+v", rs)
		}
		asked := false
		for _, s := range c.subscriptions() {
			asked = asked || s.Start == 2
		}
		if !asked {
			t.Fatalf("the client did not ask the monitors for epoch 2: %+v", c.subscriptions())
		}
		select {
		case err := <-done:
			t.Fatalf("write completed while its map was stale: %v", err)
		default:
		}
		c.publish()
		if err := <-done; err != nil {
			t.Fatalf("write: %v", err)
		}
		rs = c.receivedFor("obj")
		if len(rs) != 2 || rs[1].osd != next || rs[1].op.Epoch != 2 || rs[1].op.Attempt != 1 {
			t.Fatalf("arrivals: %+v", rs)
		}
	})
}

// A scripted ESTALE that names an epoch the client already has (the PG's
// interval changed under the same primary) is resent at once with the
// client's epoch, and an ESTALE naming the op's own epoch waits for the
// next map instead of looping.
func TestStaleAtCurrentEpoch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		conn, io := c.connect(t)
		pg, primary := c.objectPG("obj")
		c.newEpoch(func(_ *osdmap.Map, inc *osdmap.Incremental) { inc.NewPrimaryTemp = map[osdmap.PG]int32{pg: primary} })
		if err := conn.WaitForEpoch(t.Context(), 2); err != nil {
			t.Fatal(err)
		}
		stale := 1
		c.setScript(func(int32, *wire.OSDOp) action {
			if stale > 0 {
				stale--
				return actStale
			}
			return actServe
		})
		done := make(chan error, 1)
		go func() { done <- io.WriteFull(t.Context(), "obj", []byte("v")) }()
		synctest.Wait()
		if n := len(c.receivedFor("obj")); n != 1 {
			t.Fatalf("resent %d times without a newer map", n-1)
		}
		c.newEpoch(func(*osdmap.Map, *osdmap.Incremental) {})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if rs := c.receivedFor("obj"); len(rs) != 2 || rs[1].op.Epoch != 3 {
			t.Fatalf("arrivals: %+v", rs)
		}
	})
}

// An ESTALE answering an earlier send arrives after the op was sent
// again, on the same session, at the epoch the ESTALE names: the client
// ignores it, as it answers a send the op has moved past, and takes the
// answer to the latest one. It used to wait for a map one past the
// ESTALE's epoch, which a quiet cluster never makes.
func TestStaleAnswerToEarlierAttemptIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		conn, io := c.connect(t)
		_, primary := c.objectPG("obj")
		c.setScript(func(_ int32, op *wire.OSDOp) action {
			if op.Attempt == 0 {
				return actIgnore
			}
			return actServe
		})
		release := c.holdCommits()
		done := make(chan error, 1)
		go func() { done <- io.WriteFull(t.Context(), "obj", []byte("v")) }()
		synctest.Wait()
		// The primary restarts at the same address: a new interval, so
		// the client sends the op again, to the same session.
		m := c.newEpoch(func(m *osdmap.Map, inc *osdmap.Incremental) {
			o := m.OSD(primary)
			o.UpFrom = m.Epoch() + 1
			inc.NewOSDs = map[int32]osdmap.OSD{primary: o}
		})
		if err := conn.WaitForEpoch(t.Context(), uint64(m.Epoch())); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		rs := c.receivedFor("obj")
		if len(rs) != 2 || rs[1].op.Attempt != 1 || rs[1].from != rs[0].from {
			t.Fatalf("arrivals: %+v", rs)
		}
		first := rs[0].op
		stale := wire.OSDOpReply{Tid: first.Req.Tid, Attempt: first.Attempt, Epoch: uint64(m.Epoch()), Result: -wire.ESTALE}
		if err := rs[0].from.Send(t.Context(), msgr.Message{Type: wire.TypeOSDOpReply, Version: 1, Payload: stale.Encode()}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		release()
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("write: %v", err)
			}
		default:
			t.Fatal("the write waits after its latest send was answered")
		}
	})
}

// Applied and committed are distinct acknowledgements (RADOS paper,
// section 3.4.1 / DESIGN.md "Two completions"): with commits held, an
// async write is applied but not committed; a sync write does not ask
// for the applied reply.
func TestAppliedThenCommitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		_, io := c.connect(t)
		release := c.holdCommits()
		comp := io.WriteFullAsync(t.Context(), "obj", []byte("data"))
		synctest.Wait()
		select {
		case <-comp.Applied():
		default:
			t.Fatal("not applied")
		}
		select {
		case <-comp.Committed():
			t.Fatal("committed while commits are held")
		default:
		}
		if err := comp.WaitApplied(t.Context()); err != nil {
			t.Fatal(err)
		}
		applied := comp.Version()
		// Readers see the applied write.
		if got, err := io.Read(t.Context(), "obj", 0, 0); err != nil || string(got) != "data" {
			t.Fatalf("read after applied = %q, %v", got, err)
		}
		release()
		if err := comp.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		if comp.Version() != applied || applied == 0 {
			t.Fatalf("version %d after commit, %d when applied", comp.Version(), applied)
		}
		if err := io.WriteFull(t.Context(), "sync", []byte("x")); err != nil {
			t.Fatal(err)
		}
		for _, r := range c.received() {
			want := r.op.Object.Name == "obj"
			if got := r.op.Flags&wire.FlagWantApplied != 0; got != want && r.op.Ops[0].Code.IsWrite() {
				t.Errorf("%s: want-applied %v", r.op.Object.Name, got)
			}
		}
	})
}

// A lost session (before or after the OSD applied the write) makes the
// client resend on a new session; the write is applied once.
func TestSessionDropResends(t *testing.T) {
	for name, act := range map[string]action{"before": actDropBefore, "after-apply": actApplyThenDrop} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, clusterConfig{})
				_, io := c.connect(t)
				c.setScript(func(_ int32, op *wire.OSDOp) action {
					if op.Attempt == 0 {
						return act
					}
					return actServe
				})
				if err := io.Append(t.Context(), "obj", []byte("a")); err != nil {
					t.Fatal(err)
				}
				// Usually attempt 1 arrives; under load a resend can be
				// queued on the session being torn down and dropped
				// with it, and the client sends again (attempt 2).
				rs := c.receivedFor("obj")
				last := len(rs) - 1
				if len(rs) < 2 || rs[0].op.Attempt != 0 || rs[last].op.Attempt < 1 || rs[0].osd != rs[last].osd {
					t.Fatalf("arrivals: %+v", rs)
				}
				if n := c.appliedCount(rs[0].op.Req); n != 1 {
					t.Fatalf("applied %d times", n)
				}
				if got, _ := io.Read(t.Context(), "obj", 0, 0); string(got) != "a" {
					t.Fatalf("read %q", got)
				}
			})
		})
	}
}

// An OSD that stays unreachable is retried with backoff, not in a loop,
// until a map moves the PG elsewhere.
func TestUnreachablePrimaryBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		_, io := c.connect(t)
		pg, primary := c.objectPG("obj")
		c.setScript(func(osd int32, _ *wire.OSDOp) action {
			if osd == primary {
				return actDropBefore
			}
			return actServe
		})
		done := make(chan error, 1)
		go func() { done <- io.WriteFull(t.Context(), "obj", []byte("v")) }()
		time.Sleep(10 * time.Second)
		n := len(c.receivedFor("obj"))
		if n < 3 || n > 20 {
			t.Fatalf("%d attempts in 10 s", n)
		}
		c.newEpoch(func(m *osdmap.Map, inc *osdmap.Incremental) {
			if err := inc.MarkDown(m, primary); err != nil {
				t.Fatal(err)
			}
		})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if last := c.receivedFor("obj"); last[len(last)-1].osd == primary {
			t.Fatalf("served by the down primary osd.%d (pg %v)", primary, pg)
		}
	})
}

// Duplicated replies are ignored.
func TestDuplicateReplies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		_, io := c.connect(t)
		c.setScript(func(int32, *wire.OSDOp) action { return actDupReplies })
		for i := range 5 {
			comp := io.WriteFullAsync(t.Context(), "obj", []byte{byte(i)})
			if err := comp.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := io.Read(t.Context(), "obj", 0, 0); err != nil || !bytes.Equal(got, []byte{4}) {
			t.Fatalf("read %v, %v", got, err)
		}
	})
}

// Ops to one object keep their order across a resend: appends held by
// an old primary are resent in tid order to the new one.
func TestResendKeepsOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		_, io := c.connect(t)
		pg, primary := c.objectPG("obj")
		c.setScript(func(osd int32, _ *wire.OSDOp) action {
			if osd == primary {
				return actIgnore
			}
			return actServe
		})
		var comps []*rados.Completion
		for i := range 6 {
			comps = append(comps, io.OperateWriteAsync(t.Context(), "obj", appendOp(byte('0'+i))))
		}
		synctest.Wait()
		c.newEpoch(movePrimary(pg, c.otherOSD(pg, primary)))
		for _, comp := range comps {
			if err := comp.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := io.Read(t.Context(), "obj", 0, 0); string(got) != "012345" {
			t.Fatalf("read %q", got)
		}
	})
}

func appendOp(b byte) *rados.WriteOp {
	w := rados.NewWriteOp()
	w.Append([]byte{b})
	return w
}

// A deadline ends an op with ErrTimedOut (and DeadlineExceeded); a
// cancellation with context.Canceled; Config.OpTimeout bounds ops
// without a deadline. A late reply to an ended op is ignored.
func TestDeadlineAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		_, io := c.connect(t)
		c.setScript(func(int32, *wire.OSDOp) action { return actIgnore })
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		start := time.Now()
		err := io.WriteFull(ctx, "obj", []byte("v"))
		if !errors.Is(err, rados.ErrTimedOut) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Fatalf("timed out after %v", d)
		}

		ctx2, cancel2 := context.WithCancel(t.Context())
		comp := io.WriteFullAsync(ctx2, "obj", []byte("w"))
		synctest.Wait()
		cancel2()
		if err := comp.Wait(t.Context()); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled: %v", err)
		}
		if err := io.WriteFull(ctx2, "obj", []byte("w")); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled context: %v", err)
		}
		// A synchronous call ends its op itself when its context ends.
		ctx3, cancel3 := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- io.WriteFull(ctx3, "obj", []byte("x")) }()
		synctest.Wait()
		cancel3()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled in flight: %v", err)
		}

		cfg := c.config()
		cfg.OpTimeout = time.Second
		conn2, err := rados.Connect(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer conn2.Close()
		io2, _ := conn2.OpenIOContext(testPool)
		start = time.Now()
		if _, err := io2.Read(t.Context(), "obj", 0, 0); !errors.Is(err, rados.ErrTimedOut) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("op timeout: %v", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Fatalf("op timed out after %v, want 1s", d)
		}
		comp = io2.WriteFullAsync(t.Context(), "obj", []byte("y"))
		if err := comp.Wait(t.Context()); !errors.Is(err, rados.ErrTimedOut) {
			t.Fatalf("async op timeout: %v", err)
		}
		// The OSDs serve again: the ignored ops are long gone.
		c.setScript(nil)
		if err := io.WriteFull(t.Context(), "obj", []byte("z")); err != nil {
			t.Fatal(err)
		}
	})
}

// Close fails the ops in flight with ErrClosed.
func TestCloseFailsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{})
		conn, io := c.connect(t)
		c.setScript(func(int32, *wire.OSDOp) action { return actIgnore })
		comp := io.WriteFullAsync(t.Context(), "obj", []byte("v"))
		synctest.Wait()
		conn.Close()
		if err := comp.Wait(t.Context()); !errors.Is(err, rados.ErrClosed) {
			t.Fatalf("err = %v", err)
		}
		if err := io.WriteFull(t.Context(), "obj", nil); !errors.Is(err, rados.ErrClosed) {
			t.Fatalf("after close: %v", err)
		}
	})
}
