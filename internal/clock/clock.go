// Package clock owns the notion of time for driver loops: a Clock
// interface (Now, Since, NewTimer, AfterFunc) and Real, the wall clock.
//
// Pure cores take now or ticks as arguments and need none of this; the
// goroutines that drive them (messenger reconnects, heartbeats, timeouts)
// take a Clock so tests can substitute their own. Real works inside
// testing/synctest bubbles, where the time package is virtual, so most
// tests need nothing else.
//
// It knows nothing of the rest of Cuttle and imports only the standard
// library. Concurrency: Real and its Timers are safe for concurrent use,
// as time.Timer is.
package clock

import "time"

// Clock tells the time and arms timers.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Since returns the time elapsed since t.
	Since(t time.Time) time.Duration
	// NewTimer returns a Timer that sends the time on its channel once d
	// has elapsed.
	NewTimer(d time.Duration) Timer
	// AfterFunc calls f in its own goroutine once d has elapsed; the
	// Timer's channel is nil.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a single-shot timer, as time.Timer.
type Timer interface {
	// C is the channel the time is sent on (nil for AfterFunc timers).
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
	// Reset rearms the timer to fire after d; it reports whether the
	// timer was active.
	Reset(d time.Duration) bool
}

// Real returns the wall clock, backed by package time.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time                  { return time.Now() }
func (realClock) Since(t time.Time) time.Duration { return time.Since(t) }
func (realClock) NewTimer(d time.Duration) Timer  { return realTimer{time.NewTimer(d)} }
func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{time.AfterFunc(d, f)}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }
