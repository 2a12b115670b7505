package rbd

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/cls/lock"
	"github.com/cuttlestore/cuttle/rados"
)

// What an opener does when the lock is held, by who holds it and who
// watches the header.
func TestNextLockStep(t *testing.T) {
	const me, other = "client.a/1", "client.a/2"
	holder := func(entity string, watch uint64, instance string) []lock.Holder {
		return []lock.Holder{{Entity: entity, Cookie: lockCookie(watch, instance)}}
	}
	for _, c := range []struct {
		name     string
		holders  []lock.Holder
		watchers []rados.WatcherID
		want     lockStep
	}{
		{"free (released meanwhile)", nil, nil, stepLock},
		{"alive holder", holder("client.a", 7, other), []rados.WatcherID{{Client: "client.a", Cookie: 7}}, stepRequest},
		{"alive holder among others", holder("client.b", 7, other), []rados.WatcherID{{Client: "client.a", Cookie: 7}, {Client: "client.b", Cookie: 7}}, stepRequest},
		{"dead holder", holder("client.a", 7, other), nil, stepFence},
		// Same cookie, other entity: not the holder's watch.
		{"dead holder, a namesake's watch", holder("client.b", 7, other), []rados.WatcherID{{Client: "client.a", Cookie: 7}}, stepFence},
		{"dead holder, its newer watch", holder("client.a", 7, other), []rados.WatcherID{{Client: "client.a", Cookie: 8}}, stepFence},
		{"our own lost watch", holder("client.a", 7, me), []rados.WatcherID{{Client: "client.a", Cookie: 8}}, stepBreak},
		{"our own live watch (another Image of this process)", holder("client.a", 7, me), []rados.WatcherID{{Client: "client.a", Cookie: 7}}, stepRequest},
		{"a lock taken by hand", []lock.Holder{{Entity: "client.x", Cookie: "mine"}}, nil, stepForeign},
		{"a bad watch number", []lock.Holder{{Entity: "client.x", Cookie: "auto x client.x/1"}}, nil, stepForeign},
	} {
		got, h := nextLockStep(me, c.holders, c.watchers)
		if got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if len(c.holders) > 0 && h != c.holders[0] {
			t.Errorf("%s: holder %+v", c.name, h)
		}
	}
}

func TestLockCookie(t *testing.T) {
	w, inst, ok := parseLockCookie(lockCookie(1<<40+3, "client.admin/ab12"))
	if !ok || w != 1<<40+3 || inst != "client.admin/ab12" {
		t.Fatalf("round trip: %d %q %v", w, inst, ok)
	}
	for _, bad := range []string{"", "auto", "auto 1", "auto 1 a b", "manual 1 a", "auto -1 a"} {
		if _, _, ok := parseLockCookie(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// FuzzNotice: the notice decoder never panics and round-trips.
func FuzzNotice(f *testing.F) {
	f.Add(notice{Kind: noticeRequestLock, Instance: "client.a/1", Cookie: 9}.encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := decodeNotice(b)
		if err != nil {
			return
		}
		if again, err := decodeNotice(n.encode()); err != nil || again != n {
			t.Fatalf("round trip: %+v %+v %v", n, again, err)
		}
	})
}
