package server

import (
	"time"
)

// DefaultOpComplaintTime is mds_op_complaint_time's default: a request
// in flight longer is slow (MDS_SLOW_REQUEST), as in Ceph.
const DefaultOpComplaintTime = 30 * time.Second

// opKey names a request: its client and the client's tid.
type opKey struct {
	client ClientID
	tid    uint64
}

// opTracker keeps the requests handed to the engine and not yet answered
// safe, with when each arrived: what the rank reports as requests in
// flight and slow requests. A pure structure; the Server serializes
// calls.
type opTracker struct {
	ops map[opKey]time.Time
}

func newOpTracker() *opTracker { return &opTracker{ops: map[opKey]time.Time{}} }

// start records a request arriving at now (a resent one keeps its first
// arrival).
func (t *opTracker) start(c ClientID, tid uint64, now time.Time) {
	k := opKey{c, tid}
	if _, ok := t.ops[k]; !ok {
		t.ops[k] = now
	}
}

// done forgets a request answered safe.
func (t *opTracker) done(c ClientID, tid uint64) { delete(t.ops, opKey{c, tid}) }

// dropClient forgets a client's requests: its session ended.
func (t *opTracker) dropClient(c ClientID) {
	for k := range t.ops {
		if k.client == c {
			delete(t.ops, k)
		}
	}
}

// reset forgets every request: the rank stopped serving.
func (t *opTracker) reset() { clear(t.ops) }

// len counts the requests in flight.
func (t *opTracker) len() int { return len(t.ops) }

// slow counts the requests in flight for at least complaint at now, and
// returns the oldest one's age (0 when none is slow).
func (t *opTracker) slow(now time.Time, complaint time.Duration) (n int, oldest time.Duration) {
	for _, at := range t.ops {
		if age := now.Sub(at); age >= complaint {
			n++
			oldest = max(oldest, age)
		}
	}
	return n, oldest
}
