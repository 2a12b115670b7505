package objectstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestCompletion(t *testing.T) {
	ctx := context.Background()
	c := objectstore.NewCompletion()
	if closed(c.Applied()) || closed(c.Committed()) || c.Err() != nil {
		t.Fatal("new completion is not open")
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.WaitApplied(short); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitApplied on a canceled context: %v", err)
	}
	if err := c.Wait(short); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a canceled context: %v", err)
	}
	c.MarkApplied()
	c.MarkApplied() // idempotent
	if !closed(c.Applied()) || closed(c.Committed()) {
		t.Fatal("MarkApplied closed the wrong channels")
	}
	if err := c.WaitApplied(ctx); err != nil {
		t.Fatalf("WaitApplied: %v", err)
	}
	c.MarkCommitted(nil)
	c.MarkCommitted(errors.New("late")) // ignored: the outcome is fixed
	if !closed(c.Committed()) || c.Err() != nil {
		t.Fatalf("after commit: closed %v, err %v", closed(c.Committed()), c.Err())
	}
	if err := c.Wait(ctx); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

func TestCompletionFailure(t *testing.T) {
	ctx := context.Background()
	c := objectstore.NewCompletion()
	boom := errors.New("boom")
	c.MarkCommitted(boom) // closes Applied too
	c.MarkCommitted(errors.New("second"))
	c.MarkApplied()
	if !closed(c.Applied()) || !closed(c.Committed()) {
		t.Fatal("MarkCommitted left a channel open")
	}
	if err := c.WaitApplied(ctx); !errors.Is(err, boom) {
		t.Fatalf("WaitApplied: %v, want boom", err)
	}
	if err := c.Wait(ctx); !errors.Is(err, boom) {
		t.Fatalf("Wait: %v, want boom", err)
	}
}

func TestCompletionConcurrent(t *testing.T) {
	c := objectstore.NewCompletion()
	done := make(chan error, 8)
	for range 8 {
		go func() { done <- c.Wait(context.Background()) }()
	}
	go c.MarkApplied()
	go c.MarkCommitted(nil)
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// Callbacks run once each, after their channel closed: those registered
// before the mark in order, in the marking goroutine; later ones at once.
func TestCompletionCallbacks(t *testing.T) {
	c := objectstore.NewCompletion()
	var got []string
	c.OnApplied(func() {
		if !closed(c.Applied()) {
			t.Error("OnApplied callback ran before Applied closed")
		}
		got = append(got, "applied")
	})
	c.OnCommitted(func(err error) {
		if !closed(c.Committed()) {
			t.Error("OnCommitted callback ran before Committed closed")
		}
		got = append(got, "committed "+fmt.Sprint(err))
	})
	if len(got) != 0 {
		t.Fatalf("callbacks ran early: %v", got)
	}
	boom := errors.New("boom")
	c.MarkCommitted(boom)
	c.MarkCommitted(nil)
	c.MarkApplied()
	c.OnApplied(func() { got = append(got, "late applied") })
	c.OnCommitted(func(err error) { got = append(got, "late committed "+fmt.Sprint(err)) })
	want := []string{"applied", "committed boom", "late applied", "late committed boom"}
	if !slices.Equal(got, want) {
		t.Fatalf("callbacks ran as %q, want %q", got, want)
	}
}

// OnApplied callbacks run at MarkApplied, not again at MarkCommitted.
func TestCompletionAppliedCallbackOnce(t *testing.T) {
	c := objectstore.NewCompletion()
	n := 0
	c.OnApplied(func() { n++ })
	c.MarkApplied()
	if n != 1 {
		t.Fatalf("after MarkApplied the callback ran %d times", n)
	}
	c.MarkCommitted(nil)
	if n != 1 {
		t.Fatalf("after MarkCommitted the callback ran %d times", n)
	}
}
