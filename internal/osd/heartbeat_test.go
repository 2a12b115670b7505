package osd

import (
	"testing"
	"time"
)

// The heartbeat decisions for one peer over time: quiet for the interval
// means a ping (not more than one per interval), quiet for the grace a
// failure report on every tick, heard again a cancelled report.
func TestHeartbeatTick(t *testing.T) {
	m := capsMap(t)
	var h heartbeats
	const interval, grace = 6 * time.Second, 20 * time.Second
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	do := func(now time.Time, peers ...int32) heartbeatAction {
		t.Helper()
		acts := h.tick(m, peers, now, interval, grace)
		if len(acts) > 1 {
			t.Fatalf("%v: %d actions for one peer", now.Sub(t0), len(acts))
		}
		if len(acts) == 0 {
			return heartbeatAction{}
		}
		return acts[0]
	}
	if a := do(at(0), 0); a != (heartbeatAction{}) {
		t.Fatalf("a new peer: %+v", a)
	}
	h.heard("0", at(2*time.Second))
	if a := do(at(7*time.Second), 0); a.ping || a.report {
		t.Fatalf("heard 5 s ago: %+v", a)
	}
	if a := do(at(9*time.Second), 0); !a.ping || a.report {
		t.Fatalf("quiet 7 s: want a ping, got %+v", a)
	}
	if a := do(at(12*time.Second), 0); a.ping {
		t.Fatalf("a second ping within the interval: %+v", a)
	}
	a := do(at(23*time.Second), 0)
	if !a.report || a.failedFor != 21*time.Second {
		t.Fatalf("quiet 21 s: want a report of 21 s, got %+v", a)
	}
	if a := do(at(26*time.Second), 0); !a.report {
		t.Fatalf("still quiet: want the report again, got %+v", a)
	}
	h.heard("0", at(27*time.Second))
	if a := do(at(28*time.Second), 0); !a.cancel || a.report {
		t.Fatalf("heard again: want the report cancelled, got %+v", a)
	}
	if a := do(at(29*time.Second), 0); a.cancel {
		t.Fatalf("cancelled twice: %+v", a)
	}
	// A peer that leaves the OSD's PGs is forgotten; back, it starts over.
	do(at(30 * time.Second))
	if a := do(at(60*time.Second), 0); a != (heartbeatAction{}) {
		t.Fatalf("a returning peer: %+v", a)
	}
	h.heard("junk", at(61*time.Second)) // not an OSD id: ignored
}

// A refused dial reports the peer at once, immediate, only for the first
// refusal since it was last heard from; ticks repeat the report,
// immediate, while no message comes; a message cancels it, and a later
// refusal reports it again. A peer never watched, or watched in a new
// incarnation, starts over.
func TestHeartbeatRefused(t *testing.T) {
	m := capsMap(t)
	var h heartbeats
	const interval, grace = 6 * time.Second, 20 * time.Second
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	tick := func(d time.Duration) heartbeatAction {
		t.Helper()
		acts := h.tick(m, []int32{0}, at(d), interval, grace)
		if len(acts) == 0 {
			return heartbeatAction{}
		}
		return acts[0]
	}
	up := m.OSD(0).UpFrom
	// Refused before any tick watched it: watched from then, reported.
	if a, ok := h.refused(0, up, at(0)); !ok || !a.immediate || a.failedFor != 0 {
		t.Fatalf("a refusal of a peer no tick has seen yet: %+v, %v", a, ok)
	}
	h.heard("0", at(time.Second))
	tick(time.Second) // cancels
	a, ok := h.refused(0, up, at(1500*time.Millisecond))
	if !ok || !a.report || !a.immediate || a.failedFor != 500*time.Millisecond || a.upFrom != m.OSD(0).UpFrom {
		t.Fatalf("first refusal: %+v, %v; want an immediate report, quiet 500ms, of the watched incarnation", a, ok)
	}
	if a, ok := h.refused(0, up, at(1800*time.Millisecond)); ok {
		t.Fatalf("a second refusal reported again at once: %+v", a)
	}
	if a := tick(3 * time.Second); !a.report || !a.immediate || a.cancel {
		t.Fatalf("tick after the refusal, well within the grace: %+v, want the immediate report again", a)
	}
	h.heard("0", at(4*time.Second)) // a restart at the same address, or the link back
	if a := tick(5 * time.Second); !a.cancel || a.report {
		t.Fatalf("heard after the refusal: %+v, want the report cancelled", a)
	}
	if a := tick(6 * time.Second); a.report || a.cancel {
		t.Fatalf("heard, no refusal since: %+v", a)
	}
	if a, ok := h.refused(0, up, at(7*time.Second)); !ok || !a.immediate {
		t.Fatalf("refused again after being heard: %+v, %v", a, ok)
	}
	// A grace report that a refusal finds standing turns immediate.
	h.heard("0", at(8*time.Second))
	tick(8 * time.Second) // cancels
	if a := tick(29 * time.Second); !a.report || a.immediate {
		t.Fatalf("quiet 21 s: %+v, want a report after the grace, not immediate", a)
	}
	if a, ok := h.refused(0, up, at(30*time.Second)); !ok || !a.immediate || a.failedFor != 22*time.Second {
		t.Fatalf("refused while reported: %+v, %v", a, ok)
	}
}
