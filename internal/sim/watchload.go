package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/rados"
)

// The watch/notify workload of the chaos test and of the thrash test
// (internal/cli) (docs/RADOS.md, "Watch/notify"): a watcher keeps a watch
// on one object, watching again whenever it is told the watch was lost,
// and a notifier sends a notify now and then while the faults run. The
// history check (Check) holds each notify to these rules:
//
//   - it completes: acked by every watcher, or reported timed out with
//     the watchers that did not answer (or fails with an error the
//     caller sees), and it returns by its context's deadline;
//   - it is never lost silently: a completed notify names every watch
//     that was registered before it started and that the watcher was
//     never told it lost, as acked or as timed out;
//   - an ack is real: the watch that acked it handed its payload to the
//     watcher's handler, and the ack carries the handler's reply.
//
// Final then asks that a watch of the watcher, alive and connected after
// the faults healed, receives and acks a notify.

// watchRec is one watch the watcher registered.
type watchRec struct {
	w      *rados.Watch
	cookie uint64
	from   time.Time // when the registration returned
	lost   bool      // the handler was told the watch was lost
	got    map[string]bool
}

// notifyRec is one notify the notifier sent and what came of it.
type notifyRec struct {
	payload         string
	start, deadline time.Time
	end             time.Time
	res             rados.NotifyResult
	err             error
}

// outcome names a notify's result: acked, timed out (the OSD reported
// the watchers that did not answer) or failed (an error).
func (n *notifyRec) outcome() string {
	switch {
	case n.err == nil:
		return "acked"
	case errors.Is(n.err, rados.ErrTimedOut) && len(n.res.TimedOut) > 0:
		return "timed out"
	default:
		return "failed"
	}
}

// WatchLoad is the workload: the watcher's and the notifier's
// IOContexts (of different clients), the object, each notify's timeout
// and how long past it a notify may wait for its PG (Slack), and the
// history.
type WatchLoad struct {
	wio, nio *rados.IOContext
	name     string
	timeout  time.Duration
	slack    time.Duration

	mu       sync.Mutex
	watches  []*watchRec
	notifies []*notifyRec
	lostWake chan struct{} // a watch was lost
	sent     int
}

// NewWatchLoad makes the workload on object name: wio watches, nio
// notifies with timeout, each notify's context ending slack after it.
func NewWatchLoad(wio, nio *rados.IOContext, name string, timeout, slack time.Duration) *WatchLoad {
	return &WatchLoad{wio: wio, nio: nio, name: name, timeout: timeout, slack: slack, lostWake: make(chan struct{}, 1)}
}

// Start creates the object and registers the first watch.
func (l *WatchLoad) Start(ctx context.Context) error {
	if err := l.nio.WriteFull(ctx, l.name, []byte("watched")); err != nil {
		return fmt.Errorf("creating %s: %w", l.name, err)
	}
	return l.watch(ctx)
}

// watch registers a new watch.
func (l *WatchLoad) watch(ctx context.Context) error {
	rec := &watchRec{got: map[string]bool{}}
	w, err := l.wio.Watch(ctx, l.name, func(ev rados.WatchEvent) []byte {
		l.mu.Lock()
		defer l.mu.Unlock()
		if ev.Err != nil {
			rec.lost = true
			select {
			case l.lostWake <- struct{}{}:
			default:
			}
			return nil
		}
		rec.got[string(ev.Payload)] = true
		return append([]byte("ack:"), ev.Payload...)
	})
	if err != nil {
		return fmt.Errorf("watching %s: %w", l.name, err)
	}
	l.mu.Lock()
	rec.w, rec.cookie, rec.from = w, w.Cookie(), time.Now()
	l.watches = append(l.watches, rec)
	l.mu.Unlock()
	return nil
}

// RunWatcher watches again each time a watch is lost, until stop.
func (l *WatchLoad) RunWatcher(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-l.lostWake:
		}
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := l.watch(ctx)
			cancel()
			if err == nil {
				break
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Second): // try again
			}
		}
	}
}

// RunNotifier sends a notify every interval until stop.
func (l *WatchLoad) RunNotifier(every time.Duration, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		l.notify()
		select {
		case <-stop:
			return
		case <-time.After(every):
		}
	}
}

// notify sends one notify and records it.
func (l *WatchLoad) notify() *notifyRec {
	l.mu.Lock()
	l.sent++
	n := &notifyRec{payload: fmt.Sprint("notify ", l.sent), start: time.Now()}
	l.mu.Unlock()
	n.deadline = n.start.Add(l.timeout + l.slack)
	ctx, cancel := context.WithDeadline(context.Background(), n.deadline)
	n.res, n.err = l.nio.Notify(ctx, l.name, []byte(n.payload), l.timeout)
	cancel()
	n.end = time.Now()
	l.mu.Lock()
	l.notifies = append(l.notifies, n)
	l.mu.Unlock()
	return n
}

// Check holds every notify so far to the rules above, describing each
// break of them; late is how long past its deadline a notify may
// return (scheduling on a loaded machine; 0 in virtual time).
func (l *WatchLoad) Check(late time.Duration) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var bad []string
	for _, n := range l.notifies {
		bad = append(bad, l.checkLocked(n, late)...)
	}
	return bad
}

func (l *WatchLoad) checkLocked(n *notifyRec, late time.Duration) []string {
	var bad []string
	if n.end.After(n.deadline.Add(late)) {
		bad = append(bad, fmt.Sprintf("%s returned %v after it started, past its deadline of %v", n.payload, n.end.Sub(n.start), l.timeout+l.slack))
	}
	if n.outcome() == "failed" {
		return bad
	}
	answered := map[uint64]bool{}
	for _, t := range n.res.TimedOut {
		answered[t.Cookie] = true
	}
	for _, a := range n.res.Acks {
		answered[a.Cookie] = true
		for _, w := range l.watches {
			if w.cookie != a.Cookie {
				continue
			}
			if !w.got[n.payload] {
				bad = append(bad, fmt.Sprintf("%s: acked by watch %d, whose handler never received it", n.payload, w.cookie))
			}
			if want := "ack:" + n.payload; string(a.Payload) != want {
				bad = append(bad, fmt.Sprintf("%s: watch %d acked with %q, want %q", n.payload, w.cookie, a.Payload, want))
			}
		}
	}
	for _, w := range l.watches {
		if w.from.Before(n.start) && !w.lost && !answered[w.cookie] {
			bad = append(bad, fmt.Sprintf("%s (%s, %+v): lost silently for watch %d, registered %v before it and never reported lost",
				n.payload, n.outcome(), n.res, w.cookie, n.start.Sub(w.from)))
		}
	}
	return bad
}

// Final sends one notify, which a watch the watcher holds (registered,
// never lost) must receive and ack; it is nil if one did.
func (l *WatchLoad) Final() error {
	n := l.notify()
	l.mu.Lock()
	defer l.mu.Unlock()
	if bad := l.checkLocked(n, time.Second); len(bad) > 0 {
		return errors.New(bad[0])
	}
	if n.err != nil {
		return fmt.Errorf("%s: %w (%+v)", n.payload, n.err, n.res)
	}
	for _, a := range n.res.Acks {
		for _, w := range l.watches {
			if w.cookie == a.Cookie && !w.lost && w.got[n.payload] {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: no watch of the watcher acked it: %+v", n.payload, n.res)
}

// Counts counts the notifies by outcome, and the watches registered and
// lost.
func (l *WatchLoad) Counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{"watches": len(l.watches)}
	for _, n := range l.notifies {
		out["notify "+n.outcome()]++
	}
	for _, w := range l.watches {
		if w.lost {
			out["watches lost"]++
		}
	}
	return out
}
