package msgr

import (
	"context"
	"errors"
	"sync"
)

// errStopped is returned by acquire when its stop channel closes.
var errStopped = errors.New("msgr: stopped")

// throttle bounds bytes and items held at once. acquire blocks while the
// budget is used up; an item larger than the whole byte budget passes when
// nothing else is held, so it cannot wait forever.
type throttle struct {
	maxBytes, maxCount int64

	mu           sync.Mutex
	bytes, count int64
	wait         chan struct{} // closed on release; nil when nobody waits
}

func newThrottle(maxBytes, maxCount int64) *throttle {
	return &throttle{maxBytes: maxBytes, maxCount: maxCount}
}

// acquire takes n bytes and one item, waiting until they fit, ctx is done
// or stop closes.
func (t *throttle) acquire(ctx context.Context, stop <-chan struct{}, n int) error {
	for {
		t.mu.Lock()
		if t.fitsLocked(n) {
			t.mu.Unlock()
			return nil
		}
		if t.wait == nil {
			t.wait = make(chan struct{})
		}
		w := t.wait
		t.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		case <-stop:
			return errStopped
		}
	}
}

// tryAcquire takes n bytes and one item if they fit now.
func (t *throttle) tryAcquire(n int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fitsLocked(n)
}

// fitsLocked takes n bytes and one item if they fit.
func (t *throttle) fitsLocked(n int) bool {
	if t.count < t.maxCount && (t.bytes+int64(n) <= t.maxBytes || t.count == 0) {
		t.bytes += int64(n)
		t.count++
		return true
	}
	return false
}

// release returns bytes and count items, waking waiters.
func (t *throttle) release(bytes int64, count int64) {
	if count == 0 {
		return
	}
	t.mu.Lock()
	t.bytes -= bytes
	t.count -= count
	if t.wait != nil {
		close(t.wait)
		t.wait = nil
	}
	t.mu.Unlock()
}

// held returns the bytes and items held, for tests and metrics.
func (t *throttle) held() (bytes, count int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bytes, t.count
}
