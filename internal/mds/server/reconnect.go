package server

import (
	"slices"
	"time"
)

// reconnectWait is the reconnect phase's bookkeeping, pure: the clients
// that had sessions with the rank's previous holder (the session map in
// RADOS), which of them have reported their caps, and the deadline
// (mds_reconnect_timeout) after which the rank resumes without the
// others. The Server serializes calls.
type reconnectWait struct {
	want     map[ClientID]bool // true once reported
	deadline time.Time
}

func newReconnectWait(clients []ClientID, now time.Time, timeout time.Duration) *reconnectWait {
	w := &reconnectWait{want: map[ClientID]bool{}, deadline: now.Add(timeout)}
	for _, c := range clients {
		w.want[c] = false
	}
	return w
}

// Expected reports whether client had a session before the takeover.
func (w *reconnectWait) Expected(client ClientID) bool {
	_, ok := w.want[client]
	return ok
}

// Reported notes that client has sent its whole report.
func (w *reconnectWait) Reported(client ClientID) {
	if _, ok := w.want[client]; ok {
		w.want[client] = true
	}
}

// Done reports whether the phase is over at now: every expected client
// reported, or the deadline passed; missing are those that did not
// report, in order.
func (w *reconnectWait) Done(now time.Time) (done bool, missing []ClientID) {
	for c, ok := range w.want {
		if !ok {
			missing = append(missing, c)
		}
	}
	slices.Sort(missing)
	return len(missing) == 0 || !now.Before(w.deadline), missing
}
