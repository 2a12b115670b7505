package kv

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
)

// A writer that meets a leaf frozen by another client's split waits, and
// proceeds as soon as the splitter's notify on the index arrives, not
// when its backoff (an hour here) ends: first while it starts watching
// the index, then with the watch already in place. Its cache is updated
// from the notice, so it writes to the new leaf without re-reading the
// index.
func TestWriterWokenByNotify(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := fullStore(t, Config{Backoff: time.Hour})
		ctx := context.Background()
		// Split the leaf holding a..d (with e), then the right leaf
		// (with f and g): b writes into the leaf each split froze.
		for i, split := range []struct{ put, blocked string }{{"e", "a"}, {"g", "d"}} {
			if i == 1 {
				if err := a.Put(ctx, "f", []byte("A")); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan error, 1)
			waiting := make(chan struct{})
			b.onWait = func() { b.onWait = nil; close(waiting) }
			var released time.Time
			a.afterStep = func(step string) error {
				if step != stepFrozen {
					return nil
				}
				a.afterStep = nil
				go func() { done <- b.Put(ctx, split.blocked, []byte("B")) }()
				<-waiting // b met the frozen leaf and waits
				select {
				case err := <-done:
					t.Fatalf("split %d: b's put into a frozen leaf returned: %v", i, err)
				default:
				}
				released = time.Now()
				return nil
			}
			if err := a.Put(ctx, split.put, []byte("A")); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if took := time.Since(released); took > time.Second {
				t.Fatalf("split %d: b's put took %v after the split went on: it waited for its backoff, not the notify", i, took)
			}
			if _, watching := b.changes(); !watching {
				t.Fatalf("split %d: b does not watch the index", i)
			}
		}
		if w := b.Waits(); w.Woken < 2 || w.BackedOff != 0 {
			t.Fatalf("b's waits: %+v, want two or more woken by a notify and none backed off", w)
		}
		if n := len(b.Leaves()); n != 3 {
			t.Fatalf("b's cache holds %d leaves after two splits, want 3", n)
		}
		for k, want := range map[string]string{"a": "B", "b": "A", "d": "B", "e": "A", "g": "A"} {
			if v, err := a.Get(ctx, k); err != nil || string(v) != want {
				t.Fatalf("%s = %q %v, want %q", k, v, err, want)
			}
		}
		for _, s := range []*Store{a, b} {
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// Without a notify (the splitter died after its swap, before it
// notified) a waiter still proceeds after its backoff: the notify is an
// optimisation, never what correctness rests on.
func TestWriterWithoutNotifyBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := fullStore(t, Config{Backoff: 100 * time.Millisecond})
		ctx := context.Background()
		errDied := errors.New("died")
		done := make(chan error, 1)
		waiting := make(chan struct{})
		b.onWait = func() { b.onWait = nil; close(waiting) }
		a.afterStep = func(step string) error {
			switch step {
			case stepFrozen:
				go func() { done <- b.Put(ctx, "a", []byte("B")) }()
				<-waiting // b waits, watching the index
				if _, watching := b.changes(); !watching {
					t.Fatal("b does not watch the index")
				}
			case stepSwapped:
				return errDied
			}
			return nil
		}
		if err := a.Put(ctx, "e", []byte("A")); !errors.Is(err, errDied) {
			t.Fatalf("a's put: %v", err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if v, err := b.Get(ctx, "a"); err != nil || string(v) != "B" {
			t.Fatalf("a = %q %v", v, err)
		}
		if w := b.Waits(); w.BackedOff == 0 || w.Woken != 0 {
			t.Fatalf("b's waits: %+v, want backed off only", w)
		}
	})
}

// With Config.NoWatch a waiter never watches: it proceeds after its
// backoff, however long.
func TestNoWatchBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := fullStore(t, Config{Backoff: time.Hour})
		b.cfg.NoWatch = true
		ctx := context.Background()
		done := make(chan error, 1)
		waiting := make(chan struct{})
		b.onWait = func() { b.onWait = nil; close(waiting) }
		a.afterStep = func(step string) error {
			if step == stepFrozen {
				a.afterStep = nil
				go func() { done <- b.Put(ctx, "a", []byte("B")) }()
				<-waiting
			}
			return nil
		}
		start := time.Now()
		if err := a.Put(ctx, "e", []byte("A")); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took < time.Hour {
			t.Fatalf("b's put took %v: something woke it before its backoff", took)
		}
		if _, watching := b.changes(); watching {
			t.Fatal("b watches the index")
		}
		if w := b.Waits(); w.Woken != 0 || w.BackedOff == 0 {
			t.Fatalf("b's waits: %+v", w)
		}
	})
}

// The notify's payload: encodings round-trip, bad ones fail.
func TestNoticeEncoding(t *testing.T) {
	for _, n := range []notice{{}, {Old: []clskv.IndexEntry{{High: "m", Leaf: "x"}}, New: []clskv.IndexEntry{{High: "g", Leaf: "y"}, {High: "m", Leaf: "z"}}}} {
		got, err := decodeNotice(n.encode())
		if err != nil || len(got.Old) != len(n.Old) || len(got.New) != len(n.New) {
			t.Fatalf("%+v: %+v %v", n, got, err)
		}
		for i := range n.New {
			if got.New[i] != n.New[i] {
				t.Fatalf("%+v: %+v", n, got)
			}
		}
	}
	for _, bad := range [][]byte{nil, {1}, {2, 1, 0, 0, 0}, notice{}.encode()[:3]} {
		if _, err := decodeNotice(bad); err == nil {
			t.Fatalf("%x decoded", bad)
		}
	}
}

func FuzzDecodeNotice(f *testing.F) {
	f.Add(notice{}.encode())
	f.Add(notice{Old: []clskv.IndexEntry{{High: "m", Leaf: "x"}}, New: []clskv.IndexEntry{{High: "", Leaf: "y"}}}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := decodeNotice(b)
		if err != nil {
			return
		}
		if _, err := decodeNotice(n.encode()); err != nil {
			t.Fatalf("re-encoding %+v: %v", n, err)
		}
	})
}
