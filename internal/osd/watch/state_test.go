package watch

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

var (
	t0  = time.Unix(1000, 0)
	obj = objid.Object(1, "", "header")
	a   = wire.WatchInfo{WatcherID: wire.WatcherID{Client: "client.a", Cookie: 1}, TimeoutSec: 30}
	b   = wire.WatchInfo{WatcherID: wire.WatcherID{Client: "client.b", Cookie: 2}, TimeoutSec: 30}
	c   = wire.WatchInfo{WatcherID: wire.WatcherID{Client: "client.c", Cookie: 3}} // the default timeout
)

// at is t0 plus s seconds.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// show renders actions one a line, for comparison.
func show(as []Action) string {
	var lines []string
	for _, x := range as {
		switch x.Kind {
		case ActionSendNotify:
			lines = append(lines, fmt.Sprintf("send notify %d %q to %v on conn %d", x.NotifyID, x.Payload, x.Watcher.WatcherID, x.Conn))
		case ActionSendError:
			lines = append(lines, fmt.Sprintf("send error %s to %v on conn %d", wire.ErrnoName(x.Errno), x.Watcher.WatcherID, x.Conn))
		case ActionCompleteNotify:
			var acks []string
			for _, k := range x.Result.Acks {
				acks = append(acks, fmt.Sprintf("%v=%q", k.WatcherID, k.Payload))
			}
			lines = append(lines, fmt.Sprintf("complete notify %d acks [%s] timed out %v", x.NotifyID, strings.Join(acks, " "), x.Result.TimedOut))
		case ActionRemoveWatch:
			lines = append(lines, fmt.Sprintf("remove watch %v", x.Watcher.WatcherID))
		default:
			lines = append(lines, "check failed: "+string(x.Payload))
		}
	}
	return strings.Join(lines, "\n")
}

type step struct {
	do   func(s *State) []Action
	want string
}

func run(t *testing.T, steps []step) {
	t.Helper()
	s := New(30 * time.Second)
	for i, st := range steps {
		if got := show(st.do(s)); got != st.want {
			t.Fatalf("step %d:\ngot:\n%s\nwant:\n%s", i, got, st.want)
		}
	}
}

func none(f func(s *State)) func(s *State) []Action {
	return func(s *State) []Action { f(s); return nil }
}

// check runs f, whose non-empty answer shows as a failed check.
func check(f func(s *State) string) func(s *State) []Action {
	return func(s *State) []Action {
		if msg := f(s); msg != "" {
			return []Action{{Payload: []byte(msg)}}
		}
		return nil
	}
}

func TestWatchNotifyStateMachine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"every watcher acks: the notify completes with their payloads", []step{
			{func(s *State) []Action { return s.Watch(obj, a, 1, at(0)) }, ""},
			{func(s *State) []Action { return s.Watch(obj, b, 2, at(0)) }, ""},
			{func(s *State) []Action { return s.Notify(obj, 7, "client.n", []byte("hi"), 5*time.Second, at(1)) },
				"send notify 7 \"hi\" to client.a/1 on conn 1\nsend notify 7 \"hi\" to client.b/2 on conn 2"},
			{func(s *State) []Action { return s.Ack(7, b.WatcherID, []byte("B")) }, ""},
			{func(s *State) []Action { return s.Ack(7, b.WatcherID, []byte("again")) }, ""},
			{func(s *State) []Action { return s.Ack(7, a.WatcherID, []byte("A")) },
				"complete notify 7 acks [client.a/1=\"A\" client.b/2=\"B\"] timed out []"},
			{func(s *State) []Action { return s.Ack(7, a.WatcherID, nil) }, ""},
		}},
		{"no watcher: the notify completes at once", []step{
			{func(s *State) []Action { return s.Notify(obj, 1, "client.n", nil, time.Second, at(0)) },
				"complete notify 1 acks [] timed out []"},
		}},
		{"a slow watcher: the notify times out and reports it; its watch stays", []step{
			{func(s *State) []Action { return s.Watch(obj, a, 1, at(0)) }, ""},
			{func(s *State) []Action { return s.Watch(obj, b, 2, at(0)) }, ""},
			{func(s *State) []Action { return s.Notify(obj, 3, "client.n", []byte("x"), 5*time.Second, at(0)) },
				"send notify 3 \"x\" to client.a/1 on conn 1\nsend notify 3 \"x\" to client.b/2 on conn 2"},
			{func(s *State) []Action { return s.Ack(3, a.WatcherID, []byte("A")) }, ""},
			{func(s *State) []Action { return s.Tick(at(4.9)) }, ""},
			{func(s *State) []Action { return s.Tick(at(5)) },
				"complete notify 3 acks [client.a/1=\"A\"] timed out [client.b/2]"},
			{func(s *State) []Action { return s.Ack(3, b.WatcherID, []byte("late")) }, ""},
			{check(func(s *State) string {
				if got := s.Watchers(obj); len(got) != 2 {
					return fmt.Sprintf("watchers %v", got)
				}
				return ""
			}), ""},
		}},
		{"a watcher that dies: removed at its timeout, counted timed out by the notify waiting for it", []step{
			{func(s *State) []Action { return s.Watch(obj, a, 1, at(0)) }, ""},
			{func(s *State) []Action { return s.Watch(obj, b, 2, at(0)) }, ""},
			{none(func(s *State) { s.ConnLost(2, at(10)) }), ""},
			{func(s *State) []Action { return s.Notify(obj, 4, "client.n", []byte("y"), 60*time.Second, at(20)) },
				"send notify 4 \"y\" to client.a/1 on conn 1"},
			{func(s *State) []Action { return s.Ack(4, a.WatcherID, nil) }, ""},
			{func(s *State) []Action { s.Ping(obj, a.WatcherID, at(30)); return s.Tick(at(39.9)) }, ""},
			{func(s *State) []Action { return s.Tick(at(40)) },
				"remove watch client.b/2\ncomplete notify 4 acks [client.a/1=\"\"] timed out [client.b/2]"},
			{check(func(s *State) string {
				if got := s.Ping(obj, b.WatcherID, at(41)); got != wire.ENOTCONN {
					return fmt.Sprintf("ping of an expired watch: %d", got)
				}
				if d, ok := s.Deadline(); !ok || !d.Equal(at(60)) {
					return fmt.Sprintf("deadline %v %v", d, ok)
				}
				return ""
			}), ""},
		}},
		{"a blocklisted watcher: evicted at once, told nothing, counted timed out; others stay", []step{
			{func(s *State) []Action { return s.Watch(obj, a, 1, at(0)) }, ""},
			{func(s *State) []Action { return s.Watch(obj, b, 2, at(0)) }, ""},
			{func(s *State) []Action { return s.Notify(obj, 5, "client.n", []byte("z"), 60*time.Second, at(1)) },
				"send notify 5 \"z\" to client.a/1 on conn 1\nsend notify 5 \"z\" to client.b/2 on conn 2"},
			{func(s *State) []Action { return s.Ack(5, a.WatcherID, []byte("A")) }, ""},
			{func(s *State) []Action { return s.Evict(map[ConnID]bool{3: true}) }, ""},
			{func(s *State) []Action { return s.Evict(map[ConnID]bool{2: true}) },
				"remove watch client.b/2\ncomplete notify 5 acks [client.a/1=\"A\"] timed out [client.b/2]"},
			{check(func(s *State) string {
				if got := s.Watchers(obj); len(got) != 1 || got[0].WatcherID != a.WatcherID {
					return fmt.Sprintf("watchers after the eviction %v", got)
				}
				return ""
			}), ""},
			{func(s *State) []Action { return s.Notify(obj, 6, "client.n", nil, time.Second, at(2)) },
				"send notify 6 \"\" to client.a/1 on conn 1"},
		}},
		{"a disconnected watch is not evicted by its old session", []step{
			{func(s *State) []Action { return s.Watch(obj, a, 1, at(0)) }, ""},
			{none(func(s *State) { s.ConnLost(1, at(1)) }), ""},
			{func(s *State) []Action { return s.Evict(map[ConnID]bool{1: true}) }, ""},
		}},
		{"pings keep a watch; silence expires it", []step{
			{func(s *State) []Action { return s.Watch(obj, c, 1, at(0)) }, ""},
			{func(s *State) []Action { s.Ping(obj, c.WatcherID, at(20)); return s.Tick(at(30)) }, ""},
			{func(s *State) []Action { return s.Tick(at(50)) },
				"send error ENOTCONN to client.c/3 on conn 1\nremove watch client.c/3"},
		}},
		{"a held PG expires no watch; notifies still time out; the release gives each watch its timeout again", []step{
			{func(s *State) []Action { return s.Watch(obj, a, 1, at(0)) }, ""},
			{func(s *State) []Action { return s.Watch(obj, b, 2, at(0)) }, ""},
			{none(func(s *State) { s.ConnLost(2, at(0)) }), ""},
			{none(func(s *State) { s.Hold() }), ""},
			{func(s *State) []Action { return s.Notify(obj, 12, "client.n", []byte("h"), 5*time.Second, at(10)) },
				"send notify 12 \"h\" to client.a/1 on conn 1"},
			{func(s *State) []Action { return s.Tick(at(15)) }, "complete notify 12 acks [] timed out [client.a/1 client.b/2]"},
			{check(func(s *State) string {
				if d, ok := s.Deadline(); ok {
					return fmt.Sprintf("a deadline while held: %v", d)
				}
				return ""
			}), ""},
			{func(s *State) []Action { return s.Tick(at(100)) }, ""},
			{none(func(s *State) { s.Release(at(100)) }), ""},
			{check(func(s *State) string {
				if d, ok := s.Deadline(); !ok || !d.Equal(at(130)) || s.Held() {
					return fmt.Sprintf("deadline %v %v held %v after the release", d, ok, s.Held())
				}
				return ""
			}), ""},
			{func(s *State) []Action { s.Ping(obj, a.WatcherID, at(110)); return s.Tick(at(130)) }, "remove watch client.b/2"},
			{func(s *State) []Action { return s.Tick(at(140)) },
				"send error ENOTCONN to client.a/1 on conn 1\nremove watch client.a/1"},
		}},
		{"a release without a hold changes no deadline", []step{
			{func(s *State) []Action { return s.Watch(obj, a, 1, at(0)) }, ""},
			{none(func(s *State) { s.Release(at(20)) }), ""},
			{func(s *State) []Action { return s.Tick(at(30)) },
				"send error ENOTCONN to client.a/1 on conn 1\nremove watch client.a/1"},
		}},
		{"a reconnect gets the notify that went out on the lost session", []step{
			{func(s *State) []Action { return s.Watch(obj, a, 1, at(0)) }, ""},
			{func(s *State) []Action { return s.Notify(obj, 5, "client.n", []byte("z"), 10*time.Second, at(1)) },
				"send notify 5 \"z\" to client.a/1 on conn 1"},
			{none(func(s *State) { s.ConnLost(1, at(2)) }), ""},
			{func(s *State) []Action { return s.Watch(obj, a, 9, at(3)) }, "send notify 5 \"z\" to client.a/1 on conn 9"},
			{func(s *State) []Action { return s.Ack(5, a.WatcherID, []byte("ok")) },
				"complete notify 5 acks [client.a/1=\"ok\"] timed out []"},
		}},
		{"a new primary loads the persisted watches; the notify waits for the reconnect", []step{
			{none(func(s *State) { s.Load(obj, []wire.WatchInfo{a, b}, at(0)) }), ""},
			{none(func(s *State) { s.Load(obj, nil, at(1)) }), ""}, // loaded once
			{func(s *State) []Action { return s.Notify(obj, 6, "client.n", []byte("w"), 10*time.Second, at(1)) }, ""},
			{func(s *State) []Action { return s.Watch(obj, a, 4, at(2)) }, "send notify 6 \"w\" to client.a/1 on conn 4"},
			{func(s *State) []Action { return s.Ack(6, a.WatcherID, []byte("A")) }, ""},
			{func(s *State) []Action { return s.Tick(at(11)) },
				"complete notify 6 acks [client.a/1=\"A\"] timed out [client.b/2]"},
			{func(s *State) []Action { return s.Tick(at(30)) }, "remove watch client.b/2"},
		}},
		{"unwatch during a notify: no longer waited for", []step{
			{func(s *State) []Action { return s.Watch(obj, a, 1, at(0)) }, ""},
			{func(s *State) []Action { return s.Watch(obj, b, 2, at(0)) }, ""},
			{func(s *State) []Action { return s.Notify(obj, 8, "client.n", nil, 10*time.Second, at(0)) },
				"send notify 8 \"\" to client.a/1 on conn 1\nsend notify 8 \"\" to client.b/2 on conn 2"},
			{func(s *State) []Action { return s.Ack(8, a.WatcherID, nil) }, ""},
			{func(s *State) []Action { return s.Unwatch(obj, b.WatcherID) }, "complete notify 8 acks [client.a/1=\"\"] timed out []"},
		}},
		{"the object is deleted: its watchers are told, its notifies complete", []step{
			{func(s *State) []Action { return s.Watch(obj, a, 1, at(0)) }, ""},
			{none(func(s *State) { s.Load(obj, nil, at(0)) }), ""},
			{func(s *State) []Action { return s.Watch(obj, b, 2, at(0)) }, ""},
			{none(func(s *State) { s.ConnLost(2, at(0)) }), ""},
			{func(s *State) []Action { return s.Notify(obj, 9, "client.n", nil, 10*time.Second, at(0)) },
				"send notify 9 \"\" to client.a/1 on conn 1"},
			{func(s *State) []Action { return s.Deleted(obj) },
				"send error ENOTCONN to client.a/1 on conn 1\ncomplete notify 9 acks [] timed out [client.a/1 client.b/2]"},
			{check(func(s *State) string {
				if !s.Empty() {
					return "state not empty after the delete"
				}
				return ""
			}), ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc.steps) })
	}
}

// A new interval forgets everything and names the notifies to resend.
func TestReset(t *testing.T) {
	s := New(30 * time.Second)
	s.Watch(obj, a, 1, at(0))
	s.Notify(obj, 11, "client.n", nil, time.Minute, at(0))
	s.Notify(objid.Object(1, "", "other"), 10, "client.n", nil, time.Minute, at(0)) // completes: no watcher
	s.Notify(obj, 12, "client.n", nil, time.Minute, at(0))
	if got := s.Reset(); !slices.Equal(got, []uint64{11, 12}) {
		t.Fatalf("reset returned %v", got)
	}
	if !s.Empty() || s.Loaded(obj) {
		t.Fatal("state kept after reset")
	}
	if _, ok := s.Deadline(); ok {
		t.Fatal("a deadline after reset")
	}
}

// A new default timeout (osd_client_watch_timeout changed) applies to a
// watch that asks for none from its next ping; a watch that names its
// own timeout keeps it, and deadlines already set stay.
func TestSetDefaultTimeout(t *testing.T) {
	s := New(30 * time.Second)
	s.Watch(obj, c, 1, at(0))
	s.Watch(obj, a, 2, at(0))
	s.SetDefaultTimeout(5 * time.Second)
	if d, ok := s.Deadline(); !ok || !d.Equal(at(30)) {
		t.Fatalf("deadline %v %v right after the change, want %v (set before it)", d, ok, at(30))
	}
	s.Ping(obj, c.WatcherID, at(10))
	s.Ping(obj, a.WatcherID, at(10))
	if d, ok := s.Deadline(); !ok || !d.Equal(at(15)) {
		t.Fatalf("deadline %v %v after pings, want %v (the new default from the ping)", d, ok, at(15))
	}
	if got := show(s.Tick(at(15))); got != "send error ENOTCONN to client.c/3 on conn 1\nremove watch client.c/3" {
		t.Fatalf("at the new deadline: %q, want client.c's watch removed", got)
	}
}
