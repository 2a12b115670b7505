package rados

import (
	"math/rand/v2"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/osdmap"
)

func TestChooseReaderPrimary(t *testing.T) {
	cands := []readChoice{{osd: 4}, {osd: 1}, {osd: 7}}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		if got := chooseReader(osdmap.ReadPrimary, cands, defaultWeights(), rnd); got != 4 {
			t.Fatalf("primary policy chose osd.%d", got)
		}
	}
}

// balance spreads reads evenly over the members; the same seed makes the
// same choices.
func TestChooseReaderBalance(t *testing.T) {
	cands := []readChoice{{osd: 4}, {osd: 1}, {osd: 7}}
	count := map[int32]int{}
	var first []int32
	rnd := rand.New(rand.NewPCG(7, 7))
	for i := range 3000 {
		got := chooseReader(osdmap.ReadBalance, cands, defaultWeights(), rnd)
		count[got]++
		if i < 20 {
			first = append(first, got)
		}
	}
	for _, c := range cands {
		if n := count[c.osd]; n < 900 || n > 1100 {
			t.Errorf("osd.%d chosen %d times in 3000, want about 1000", c.osd, n)
		}
	}
	again := rand.New(rand.NewPCG(7, 7))
	for i, want := range first {
		if got := chooseReader(osdmap.ReadBalance, cands, defaultWeights(), again); got != want {
			t.Fatalf("choice %d with the same seed: osd.%d, then osd.%d", i, want, got)
		}
	}
}

// score's P_i x Random_i: a member with a larger P_i wins more often, in
// proportion (for two members with P_a > P_b, a wins with probability
// 1 - P_b/(2 P_a)); an equal P_i is an even split.
func TestChooseReaderScore(t *testing.T) {
	w := ScoreWeights{Distance: 0.4, Disk: 0.3, CPU: 0.2, Memory: 0.1}
	near := readChoice{osd: 1, dist: 1}                                                 // P = 1.0
	far := readChoice{osd: 2, dist: 0, load: osdmap.Load{Disk: 100, CPU: 0, Memory: 0}} // P = 0.3
	if got := w.score(near.dist, near.load); got < 0.9999 || got > 1.0001 {
		t.Fatalf("idle OSD on the client's host: P %v, want 1", got)
	}
	if got := w.score(far.dist, far.load); got < 0.2999 || got > 0.3001 {
		t.Fatalf("busy-disk OSD elsewhere: P %v, want 0.3", got)
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	const n = 20000
	wins := 0
	for range n {
		if chooseReader(osdmap.ReadScore, []readChoice{far, near}, w, rnd) == near.osd {
			wins++
		}
	}
	want := 1 - 0.3/2 // 0.85
	if got := float64(wins) / n; got < want-0.02 || got > want+0.02 {
		t.Errorf("the nearer, idler OSD won %.3f of reads, want %.2f", got, want)
	}
	// All weights zero but distance, no location: every P_i is 0, and
	// the primary (first) is kept.
	if got := chooseReader(osdmap.ReadScore, []readChoice{{osd: 2}, {osd: 1}}, ScoreWeights{Distance: 1}, rnd); got != 2 {
		t.Errorf("all scores zero: chose osd.%d, want the primary", got)
	}
}

func TestDistanceAndLocations(t *testing.T) {
	// root default > rack r1 > hosts h1 (osd 0, 1), h2 (osd 2); rack r2 > host h3 (osd 3).
	spec := crush.Spec{
		Types:   []crush.BucketType{{ID: 0, Name: "osd"}, {ID: 1, Name: "host"}, {ID: 3, Name: "rack"}, {ID: 10, Name: "root"}},
		Devices: []crush.Device{{ID: 0, Name: "osd.0"}, {ID: 1, Name: "osd.1"}, {ID: 2, Name: "osd.2"}, {ID: 3, Name: "osd.3"}},
		Buckets: []crush.Bucket{
			{ID: -1, Name: "default", Type: 10, Alg: crush.AlgStraw2, Items: []int32{-2, -3}, Weights: []uint32{0x30000, 0x10000}},
			{ID: -2, Name: "r1", Type: 3, Alg: crush.AlgStraw2, Items: []int32{-4, -5}, Weights: []uint32{0x20000, 0x10000}},
			{ID: -3, Name: "r2", Type: 3, Alg: crush.AlgStraw2, Items: []int32{-6}, Weights: []uint32{0x10000}},
			{ID: -4, Name: "h1", Type: 1, Alg: crush.AlgStraw2, Items: []int32{0, 1}, Weights: []uint32{0x10000, 0x10000}},
			{ID: -5, Name: "h2", Type: 1, Alg: crush.AlgStraw2, Items: []int32{2}, Weights: []uint32{0x10000}},
			{ID: -6, Name: "h3", Type: 1, Alg: crush.AlgStraw2, Items: []int32{3}, Weights: []uint32{0x10000}},
		},
	}
	c, err := crush.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	locs := locations(c)
	if l := locs[2]; l["host"] != "h2" || l["rack"] != "r1" || l["root"] != "default" {
		t.Fatalf("osd.2 at %v", l)
	}
	client, err := parseLocation("host=h1, rack=r1")
	if err != nil {
		t.Fatal(err)
	}
	for osd, want := range map[int32]float64{0: 1, 1: 1, 2: 0.5, 3: 0} {
		if got := distance(client, locs[osd]); got != want {
			t.Errorf("osd.%d: distance %v, want %v", osd, got, want)
		}
	}
	if got := distance(location{}, locs[0]); got != 0 {
		t.Errorf("a client with no location: distance %v", got)
	}
	for _, bad := range []string{"host", "=h1", "host="} {
		if _, err := parseLocation(bad); err == nil {
			t.Errorf("parseLocation(%q) accepted", bad)
		}
	}
}

func TestReadPolicyConfig(t *testing.T) {
	for _, c := range []struct {
		in     string
		policy osdmap.ReadPolicy
		set    bool
		ok     bool
	}{{"", 0, false, true}, {"pool", 0, false, true}, {"primary", osdmap.ReadPrimary, true, true},
		{"balance", osdmap.ReadBalance, true, true}, {"score", osdmap.ReadScore, true, true}, {"nearest", 0, false, false}} {
		p, set, err := parseReadPolicy(c.in)
		if (err == nil) != c.ok || p != c.policy || set != c.set {
			t.Errorf("parseReadPolicy(%q) = %v %v %v", c.in, p, set, err)
		}
	}
	if w := defaultWeights(); w != (ScoreWeights{Distance: 0.4, Disk: 0.3, CPU: 0.2, Memory: 0.1}) {
		t.Errorf("default weights %+v are not the schema's", w)
	}
	if err := (ScoreWeights{Disk: -1}).validate(); err == nil {
		t.Error("a negative weight was taken")
	}
	// The pool's policy unless the client set one; erasure pools read
	// from their primaries.
	pool := &osdmap.Pool{Type: osdmap.PoolReplicated, ReadPolicy: osdmap.ReadBalance}
	if got := (&readRouting{}).policyFor(pool); got != osdmap.ReadBalance {
		t.Errorf("pool's policy: %v", got)
	}
	if got := (&readRouting{policy: osdmap.ReadScore, policySet: true}).policyFor(pool); got != osdmap.ReadScore {
		t.Errorf("client's policy: %v", got)
	}
	if got := (&readRouting{}).policyFor(&osdmap.Pool{Type: osdmap.PoolErasure}); got != osdmap.ReadPrimary {
		t.Errorf("erasure pool: %v", got)
	}
}
