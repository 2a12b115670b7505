package msgr_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
)

func TestSmoke(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New(memnet.Config{Seed: 1})
		defer net.Close()
		a := newNode(t, net, "osd.1", "a", 1, nil)
		defer a.m.Close()
		b := newNode(t, net, "osd.2", "b", 2, nil)
		defer b.m.Close()
		for i := range 10 {
			if err := a.m.Send(t.Context(), b.name, "b", numbered(i, 100)); err != nil {
				t.Fatal(err)
			}
		}
		got := b.rec.waitMsgs(t, a.name, 10, time.Minute)
		checkInOrder(t, got, 10)
	})
}
