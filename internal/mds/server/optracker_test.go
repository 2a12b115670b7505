package server

import (
	"testing"
	"time"
)

// The tracker counts the requests in flight and those past the
// complaint time, with the oldest's age; a request leaves it when
// answered safe, with its client's session, or when the rank stops.
func TestOpTracker(t *testing.T) {
	const complaint = 30 * time.Second
	tr := newOpTracker()
	type step struct {
		at       time.Duration
		do       string // start, done, drop, reset, check
		c        ClientID
		tid      uint64
		inFlight int
		slow     int
		oldest   time.Duration
	}
	steps := []step{
		{0, "start", 1, 1, 1, 0, 0},
		{5 * time.Second, "start", 1, 2, 2, 0, 0},
		{10 * time.Second, "start", 2, 1, 3, 0, 0},
		{29 * time.Second, "check", 0, 0, 3, 0, 0},
		{30 * time.Second, "check", 0, 0, 3, 1, 30 * time.Second},
		{31 * time.Second, "start", 1, 1, 3, 1, 31 * time.Second}, // a resend keeps its first arrival
		{40 * time.Second, "check", 0, 0, 3, 3, 40 * time.Second},
		{41 * time.Second, "done", 1, 1, 2, 2, 36 * time.Second},
		{42 * time.Second, "done", 9, 9, 2, 2, 37 * time.Second}, // unknown: nothing
		{43 * time.Second, "drop", 1, 0, 1, 1, 33 * time.Second},
		{44 * time.Second, "start", 3, 7, 2, 1, 34 * time.Second},
		{45 * time.Second, "reset", 0, 0, 0, 0, 0},
	}
	for i, st := range steps {
		now := t0.Add(st.at)
		switch st.do {
		case "start":
			tr.start(st.c, st.tid, now)
		case "done":
			tr.done(st.c, st.tid)
		case "drop":
			tr.dropClient(st.c)
		case "reset":
			tr.reset()
		}
		slow, oldest := tr.slow(now, complaint)
		if tr.len() != st.inFlight || slow != st.slow || oldest != st.oldest {
			t.Fatalf("step %d (%s at %v): in flight %d, slow %d, oldest %v; want %d, %d, %v", i, st.do, st.at,
				tr.len(), slow, oldest, st.inFlight, st.slow, st.oldest)
		}
	}
}

func TestHostOf(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.1:0/1234": "10.0.0.1",
		"[::1]:6800/7":    "::1",
		"client.a:0/99":   "client.a",
		"":                "",
		"no-port":         "no-port",
	} {
		if got := hostOf(in); got != want {
			t.Errorf("hostOf(%q) = %q, want %q", in, got, want)
		}
	}
}
