package osd

import (
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/osd/reserve"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/prometheus/client_golang/prometheus"
)

// The local reservations block the recoverer until granted, in priority
// order; one that gives up while waiting holds nothing, and one granted
// as it gave up passes its slot on.
func TestLocalReservations(t *testing.T) {
	synctest.Test(t, localReservations)
}

func localReservations(t *testing.T) {
	rs := newReservations(1)
	never := make(chan struct{})
	k := func(seed uint32) resKey { return resKey{osdmap.PG{Pool: 1, Seed: seed}, 5} }
	if !rs.acquireLocal(k(1), reserve.PriorityRecovery, never, nil) {
		t.Fatal("a free slot was not granted")
	}
	got := make(chan resKey, 2)
	backfill, recovery := make(chan struct{}), make(chan struct{})
	go func() { // waits behind k(1) at backfill priority
		if rs.acquireLocal(k(2), reserve.PriorityBackfill, never, nil) {
			got <- k(2)
		}
		close(backfill)
	}()
	gaveUp := make(chan struct{})
	go func() { // gives up
		if rs.acquireLocal(k(4), reserve.PriorityRecovery, gaveUp, nil) {
			t.Error("a waiter that gave up holds a slot")
		}
	}()
	go func() { // waits at recovery priority: granted first
		if rs.acquireLocal(k(3), reserve.PriorityRecovery, never, nil) {
			got <- k(3)
		}
		close(recovery)
	}()
	waiting := func() int {
		synctest.Wait()
		rs.mu.Lock()
		defer rs.mu.Unlock()
		return rs.local.State().Waiting
	}
	if n := waiting(); n != 3 {
		t.Fatalf("%d wait, want 3", n)
	}
	close(gaveUp)
	if n := waiting(); n != 2 {
		t.Fatalf("%d wait after one gave up, want 2", n)
	}
	rs.releaseLocal(k(1))
	<-recovery
	if first := <-got; first != k(3) {
		t.Fatalf("granted %v first, want the recovery %v", first, k(3))
	}
	rs.releaseLocal(k(3))
	<-backfill
	if held, limit := rs.localState(); held != 1 || limit != 1 {
		t.Fatalf("%d of %d held, want the backfill's 1 of 1", held, limit)
	}
}

// The reservations show in the OSD's metrics, with their high-water
// marks and the pushes taken without one.
func TestReservationMetrics(t *testing.T) {
	o := &OSD{res: newReservations(2)}
	pg := osdmap.PG{Pool: 1, Seed: 3}
	o.res.remote.Request(reserve.Request{PG: pg, From: 4, Interval: 9, Priority: 180})
	o.res.remote.Request(reserve.Request{PG: osdmap.PG{Pool: 1, Seed: 4}, From: 4, Interval: 9, Priority: 180})
	o.res.remote.Request(reserve.Request{PG: osdmap.PG{Pool: 1, Seed: 5}, From: 4, Interval: 9, Priority: 180})
	o.notePush(pg, 4, 9)                          // reserved
	o.notePush(osdmap.PG{Pool: 1, Seed: 5}, 4, 9) // waiting: not reserved
	o.notePush(pg, 4, 8)                          // another interval's
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(reservationCollector{o})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += " " + l.GetName() + "=" + l.GetValue()
			}
			got[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	want := map[string]float64{
		"cuttle_osd_recovery_reservations side=remote state=held":    2,
		"cuttle_osd_recovery_reservations side=remote state=waiting": 1,
		"cuttle_osd_recovery_reservations side=local state=held":     0,
		"cuttle_osd_recovery_reservations_max_held side=remote":      2,
		"cuttle_osd_unreserved_pushes_total":                         2,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, g, v, got)
		}
	}
	if len(got) != 7 {
		t.Errorf("%d series, want 7: %v", len(got), got)
	}
	d := o.dumpReservations()
	if len(d.Remote.Held) != 2 || len(d.Remote.Waiting) != 1 || d.Remote.MaxHeld != 2 || d.Remote.Held[0].Primary != 4 {
		t.Errorf("remote reservations %+v", d.Remote)
	}
}
