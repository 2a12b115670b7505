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
