package msgr

import "testing"

func TestSendYieldBacksOffWhenYieldsGainNothing(t *testing.T) {
	var y sendYield
	// Fresh: only the probe wakes yield.
	yields := 0
	for range yieldProbe {
		if y.should() {
			yields++
			y.record(false)
		}
	}
	if yields != 1 {
		t.Fatalf("%d yields in %d wakes with nothing gained, want 1 (the probe)", yields, yieldProbe)
	}
	// A probe that gains turns yielding on ...
	for !y.should() {
	}
	y.record(true)
	for i := range 3 {
		if !y.should() {
			t.Fatalf("wake %d after a gain did not yield", i)
		}
		y.record(true)
	}
	if y.score != maxYieldScore {
		t.Fatalf("score %d after gains, want the cap %d", y.score, maxYieldScore)
	}
	// ... and yields that gain nothing turn it off again.
	for range maxYieldScore {
		if !y.should() {
			t.Fatal("stopped yielding before the score ran out")
		}
		y.record(false)
	}
	if y.score != 0 {
		t.Fatalf("score %d after %d empty yields, want 0", y.score, maxYieldScore)
	}
}
