package objectstore_test

import (
	"context"
	"errors"
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
