package clock

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestRealInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := Real()
		start := c.Now()
		tm := c.NewTimer(time.Hour)
		fired := make(chan struct{})
		c.AfterFunc(30*time.Minute, func() { close(fired) })
		<-fired
		if got := c.Since(start); got != 30*time.Minute {
			t.Fatalf("AfterFunc fired after %v, want 30m", got)
		}
		if !tm.Reset(time.Minute) {
			t.Fatal("Reset of an armed timer reported it inactive")
		}
		at := <-tm.C()
		if got := at.Sub(start); got != 31*time.Minute {
			t.Fatalf("timer fired at +%v, want +31m", got)
		}
		if tm.Stop() {
			t.Fatal("Stop of a fired timer reported it active")
		}
	})
}

func TestStopPreventsAfterFunc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := Real()
		called := false
		tm := c.AfterFunc(time.Second, func() { called = true })
		if !tm.Stop() {
			t.Fatal("Stop of an armed AfterFunc reported it inactive")
		}
		time.Sleep(2 * time.Second) // virtual time: past the deadline
		if called {
			t.Fatal("stopped AfterFunc ran")
		}
		if tm.C() != nil {
			t.Fatal("AfterFunc timer has a channel")
		}
	})
}
