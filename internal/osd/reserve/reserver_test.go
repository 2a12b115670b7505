package reserve

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// step is one event for a Reserver[string] and the keys it must grant.
type step struct {
	op   string // request, cancel, limit
	key  string
	prio int // request: the priority; limit: the new limit
	want []string
}

func TestReserver(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
		steps []step
		end   State
	}{
		{"grants up to the limit, then in arrival order", 2, []step{
			{"request", "a", 1, []string{"a"}},
			{"request", "b", 1, []string{"b"}},
			{"request", "c", 1, nil},
			{"request", "d", 1, nil},
			{"cancel", "a", 0, []string{"c"}},
			{"cancel", "b", 0, []string{"d"}},
		}, State{Held: 2, Limit: 2, MaxHeld: 2}},
		{"higher priority first", 1, []step{
			{"request", "low", 100, []string{"low"}},
			{"request", "b1", 100, nil},
			{"request", "r1", 180, nil},
			{"request", "b2", 140, nil},
			{"request", "r2", 180, nil},
			{"cancel", "low", 0, []string{"r1"}},
			{"cancel", "r1", 0, []string{"r2"}},
			{"cancel", "r2", 0, []string{"b2"}},
			{"cancel", "b2", 0, []string{"b1"}},
		}, State{Held: 1, Limit: 1, MaxHeld: 1}},
		{"a request that is already held changes nothing", 1, []step{
			{"request", "a", 1, []string{"a"}},
			{"request", "a", 9, nil},
			{"request", "b", 1, nil},
			{"cancel", "a", 0, []string{"b"}},
		}, State{Held: 1, Limit: 1, MaxHeld: 1}},
		{"a waiting request takes its new priority", 1, []step{
			{"request", "a", 1, []string{"a"}},
			{"request", "b", 1, nil},
			{"request", "c", 1, nil},
			{"request", "c", 5, nil},
			{"cancel", "a", 0, []string{"c"}},
		}, State{Held: 1, Waiting: 1, Limit: 1, MaxHeld: 1}},
		{"cancelling a waiter grants nothing and forgets it", 1, []step{
			{"request", "a", 1, []string{"a"}},
			{"request", "b", 1, nil},
			{"cancel", "b", 0, nil},
			{"cancel", "a", 0, nil},
			{"cancel", "zz", 0, nil},
		}, State{Limit: 1, MaxHeld: 1}},
		{"raising the limit grants waiters at once", 1, []step{
			{"request", "a", 1, []string{"a"}},
			{"request", "b", 1, nil},
			{"request", "c", 2, nil},
			{"limit", "", 3, []string{"c", "b"}},
		}, State{Held: 3, Limit: 3, MaxHeld: 3}},
		{"lowering the limit takes nothing back", 3, []step{
			{"request", "a", 1, []string{"a"}},
			{"request", "b", 1, []string{"b"}},
			{"request", "c", 1, []string{"c"}},
			{"limit", "", 1, nil},
			{"request", "d", 1, nil},
			{"cancel", "a", 0, nil},
			{"cancel", "b", 0, nil},
			{"cancel", "c", 0, []string{"d"}},
		}, State{Held: 1, Limit: 1, MaxHeld: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReserver[string](tc.limit)
			for i, s := range tc.steps {
				var got []string
				switch s.op {
				case "request":
					got = r.Request(s.key, s.prio)
				case "cancel":
					got = r.Cancel(s.key)
				case "limit":
					got = r.SetLimit(s.prio)
				}
				if !slices.Equal(got, s.want) {
					t.Fatalf("step %d (%s %s %d): granted %v, want %v", i, s.op, s.key, s.prio, got, s.want)
				}
			}
			if got := r.State(); got != tc.end {
				t.Fatalf("state %+v, want %+v", got, tc.end)
			}
		})
	}
}

// TestReserverRandom checks the reserver's contract under random
// events against a direct model: never more held than the limit unless
// the limit was lowered under them, no one waits while a slot is free,
// the first waiter is the oldest of the highest priority, and every key
// is held or waiting exactly as the grants and cancels said.
func TestReserverRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		limit := 1 + rng.IntN(3)
		r := NewReserver[int](limit)
		held := map[int]bool{}
		prio := map[int]int{}
		for range 100 {
			k := rng.IntN(8)
			var got []int
			switch rng.IntN(5) {
			case 0, 1, 2:
				if !held[k] {
					prio[k] = rng.IntN(3)
				}
				got = r.Request(k, prio[k])
			case 3:
				delete(held, k)
				delete(prio, k)
				got = r.Cancel(k)
			case 4:
				limit = 1 + rng.IntN(3)
				got = r.SetLimit(limit)
			}
			for _, g := range got {
				if held[g] {
					t.Fatalf("round %d: %d granted twice", round, g)
				}
				held[g] = true
			}
			st := r.State()
			if st.Held != len(held) {
				t.Fatalf("round %d: %d held, the grants say %d", round, st.Held, len(held))
			}
			if st.Waiting > 0 && st.Held < st.Limit {
				t.Fatalf("round %d: %d wait with %d of %d slots held", round, st.Waiting, st.Held, st.Limit)
			}
			for k, p := range prio {
				if !held[k] && !r.Waiting(k) {
					t.Fatalf("round %d: %d (priority %d) neither held nor waiting", round, k, p)
				}
				if held[k] != r.Held(k) {
					t.Fatalf("round %d: %d held %v, reserver says %v", round, k, held[k], r.Held(k))
				}
			}
			if len(r.waiting) > 0 {
				top := r.waiting[0].prio
				for k, p := range prio {
					if !held[k] && p > top {
						t.Fatalf("round %d: %d (priority %d) waits behind priority %d", round, k, p, top)
					}
				}
			}
		}
	}
}

func TestPriority(t *testing.T) {
	for _, tc := range []struct {
		backfill, degraded bool
		short, want        int
	}{
		{false, true, 0, 180},
		{false, true, 1, 181},
		{true, true, 0, 140},
		{true, true, 2, 142},
		{true, false, 0, 100},
		{true, true, 1000, 179}, // never reaches the next class
		{false, false, -1, 180},
	} {
		if got := Priority(tc.backfill, tc.degraded, tc.short); got != tc.want {
			t.Errorf("Priority(%v, %v, %d) = %d, want %d", tc.backfill, tc.degraded, tc.short, got, tc.want)
		}
	}
}
