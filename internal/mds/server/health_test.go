package server

import (
	"reflect"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// The health report counts the sessions and the requests in flight
// until their safe reply, the slow ones past the complaint time, and
// names the clients the engine finds late by entity and host.
func TestHealthReport(t *testing.T) {
	r := newRig(t)
	held := make(chan func(*wire.ClientReply), 1)
	r.eng.mu.Lock()
	r.eng.held = held
	r.eng.mu.Unlock()
	if h := r.srv.Health(time.Now()); !reflect.DeepEqual(h, wire.MDSHealth{ComplaintTime: DefaultOpComplaintTime}) {
		t.Fatalf("a standby's report: %+v", h)
	}
	r.activate()
	r.waitPhase("active")
	c := r.client("10.0.0.50:1")
	c.open(7, "/")
	c.send(wire.TypeClientRequest, (&wire.ClientRequest{Tid: 2, Op: wire.MetaGetattr, Path: wire.FilePath{Ino: 1}}).Encode())
	taken := func() func(*wire.ClientReply) {
		t.Helper()
		select {
		case f := <-held:
			return f
		case <-time.After(10 * time.Second):
			t.Fatal("the getattr did not reach the engine")
		}
		return nil
	}
	reply := taken()
	now := time.Now()
	r.eng.mu.Lock()
	r.eng.late = []LateRelease{{Client: 7, Ino: 0x10000000001, Since: now.Add(-40 * time.Second)}, {Client: 99, Ino: 5, Since: now}}
	r.eng.mu.Unlock()

	h := r.srv.Health(now)
	if h.Sessions != 1 || h.InFlight != 1 || h.Slow != 0 || h.Oldest != 0 {
		t.Fatalf("at once: %+v", h)
	}
	h = r.srv.Health(now.Add(time.Minute))
	if h.Sessions != 1 || h.InFlight != 1 || h.Slow != 1 || h.Oldest < time.Minute || h.Oldest > time.Minute+10*time.Second {
		t.Fatalf("a minute later: %+v", h)
	}
	want := []wire.MDSLateRelease{{ClientID: 7, Entity: "client.admin", Host: "10.0.0.50", Ino: 0x10000000001, Age: 100 * time.Second},
		{ClientID: 99, Ino: 5, Age: time.Minute}}
	if h.LateClients != 2 || !reflect.DeepEqual(h.LateRelease, want) {
		t.Fatalf("late: %d %+v, want %+v", h.LateClients, h.LateRelease, want)
	}
	// The report decodes from a beacon as it was made (durations in
	// milliseconds).
	h.Oldest = h.Oldest.Truncate(time.Millisecond)
	b := wire.MDSBeacon{Name: "a", State: mdsmap.StateActive, WantRank: mdsmap.NoRank, Health: h}
	if got, err := wire.DecodeMDSBeacon(b.Encode()); err != nil || !reflect.DeepEqual(got.Health, h) {
		t.Fatalf("beacon: %+v, %v", got.Health, err)
	}

	reply(&wire.ClientReply{Tid: 2, Op: wire.MetaGetattr, Safe: true})
	if a := c.recvReply(); !a.Safe || a.Tid != 2 {
		t.Fatalf("reply %+v", a)
	}
	if h := r.srv.Health(now.Add(time.Minute)); h.InFlight != 0 || h.Slow != 0 {
		t.Fatalf("after the safe reply: %+v", h)
	}
	// A session that ends takes its requests with it.
	c.send(wire.TypeClientRequest, (&wire.ClientRequest{Tid: 3, Op: wire.MetaGetattr, Path: wire.FilePath{Ino: 1}}).Encode())
	taken()
	if h := r.srv.Health(time.Now()); h.InFlight != 1 {
		t.Fatalf("second getattr: %+v", h)
	}
	c.send(wire.TypeClientSession, wire.ClientSession{Op: wire.SessionRequestClose, Seq: 4}.Encode())
	if s := c.recvSession(); s.Op != wire.SessionClose {
		t.Fatalf("close: %+v", s)
	}
	if h := r.srv.Health(time.Now()); h.InFlight != 0 || h.Sessions != 0 {
		t.Fatalf("after the session closed: %+v", h)
	}
}
