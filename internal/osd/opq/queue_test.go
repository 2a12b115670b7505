package opq

import (
	"slices"
	"testing"
)

// step is one call on a queue of string items keyed by object name.
type step struct {
	op    string // "add", "done", "next", "cut"
	key   string
	class Class
	item  string
	// want is what the call hands out to run ("" for nothing; for cut,
	// the items cut, comma-separated in key order).
	want string
}

// limitPolicy admits at most n items of each class, and otherwise acts
// as Today: it lets the tests exercise items waiting for admission.
type limitPolicy struct{ n int }

func (p limitPolicy) Admit(c Class, _ int64, running Load) bool { return running.Items < p.n }
func (p limitPolicy) Done(Class, int64)                         {}
func (p limitPolicy) Yields(c, other Class) bool                { return Today{}.Yields(c, other) }

func TestQueue(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		steps  []step
	}{
		{"one object's ops run in order, one at a time", Today{}, []step{
			{op: "add", key: "a", class: Client, item: "w1", want: "w1"},
			{op: "add", key: "a", class: Client, item: "w2"},
			{op: "add", key: "a", class: Client, item: "r3"},
			{op: "done", key: "a", want: "w2"},
			{op: "done", key: "a", want: "r3"},
			{op: "done", key: "a"},
			{op: "add", key: "a", class: Client, item: "w4", want: "w4"},
		}},
		{"objects do not wait for each other", Today{}, []step{
			{op: "add", key: "a", class: Client, item: "a1", want: "a1"},
			{op: "add", key: "b", class: Client, item: "b1", want: "b1"},
			{op: "add", key: "a", class: Client, item: "a2"},
			{op: "done", key: "b"},
			{op: "done", key: "a", want: "a2"},
		}},
		{"a second scrub waits for the first", Today{}, []step{
			{op: "add", key: "pg1", class: Scrub, item: "s1", want: "s1"},
			{op: "add", key: "pg2", class: Scrub, item: "s2"},
			{op: "add", key: "x", class: Client, item: "c", want: "c"},
			{op: "next"},
			{op: "done", key: "pg1"},
			{op: "next", want: "s2"},
			{op: "next"},
		}},
		{"an item waiting for admission starts when its class has room", limitPolicy{1}, []step{
			{op: "add", key: "a", class: Client, item: "a1", want: "a1"},
			{op: "add", key: "b", class: Client, item: "b1"},
			{op: "add", key: "c", class: Client, item: "c1"},
			{op: "add", key: "d", class: Replica, item: "d1", want: "d1"},
			{op: "done", key: "a"},
			{op: "next", want: "b1"},
			{op: "next"},
			{op: "done", key: "b"},
			{op: "next", want: "c1"},
		}},
		{"the next item on a key may wait for admission too", limitPolicy{1}, []step{
			{op: "add", key: "a", class: Client, item: "a1", want: "a1"},
			{op: "add", key: "a", class: Client, item: "a2"},
			{op: "add", key: "b", class: Client, item: "b1"},
			{op: "done", key: "a"}, // a2 waits behind b1, which came to wait first
			{op: "next", want: "b1"},
			{op: "next"},
			{op: "done", key: "b"},
			{op: "next", want: "a2"},
		}},
		{"an item does not overtake a waiting one of its class", limitPolicy{1}, []step{
			{op: "add", key: "a", class: Client, item: "a1", want: "a1"},
			{op: "add", key: "b", class: Client, item: "b1"},
			{op: "done", key: "a"},
			{op: "add", key: "c", class: Client, item: "c1"}, // room, but b1 waits
			{op: "next", want: "b1"},
			{op: "add", key: "d", class: Replica, item: "d1", want: "d1"},
			{op: "done", key: "b"},
			{op: "next", want: "c1"},
		}},
		{"a client write to an object under recovery waits for the running push", Today{}, []step{
			{op: "add", key: "a", class: Recovery, item: "push", want: "push"},
			{op: "add", key: "a", class: Client, item: "w1"},
			{op: "add", key: "a", class: Client, item: "w2"},
			{op: "done", key: "a", want: "w1"},
			{op: "done", key: "a", want: "w2"},
		}},
		{"a client write goes ahead of a push of its object that has not started", limitPolicy{1}, []step{
			{op: "add", key: "a", class: Recovery, item: "pa", want: "pa"},
			{op: "add", key: "b", class: Recovery, item: "pb"}, // waits: one push at a time
			{op: "add", key: "b", class: Client, item: "w1", want: "w1"},
			{op: "add", key: "b", class: Client, item: "w2"}, // behind w1, still ahead of pb
			{op: "done", key: "a"},
			{op: "next"}, // pb is w2's and w1's to follow, no longer waiting
			{op: "done", key: "b", want: "w2"},
			{op: "done", key: "b", want: "pb"},
			{op: "done", key: "b"},
		}},
		{"a client op does not overtake a client op, nor a push that started", Today{}, []step{
			{op: "add", key: "a", class: Client, item: "w1", want: "w1"},
			{op: "add", key: "a", class: Recovery, item: "push"},
			{op: "add", key: "a", class: Client, item: "w2"}, // ahead of the push, behind w1
			{op: "done", key: "a", want: "w2"},
			{op: "add", key: "a", class: Client, item: "w3"}, // behind w2 only: the push has not started
			{op: "done", key: "a", want: "w3"},
			{op: "done", key: "a", want: "push"},
			{op: "add", key: "a", class: Client, item: "w4"}, // the push runs: behind it
			{op: "done", key: "a", want: "w4"},
		}},
		{"recovery does not overtake, nor do replica ops and scrub chunks", Today{}, []step{
			{op: "add", key: "a", class: Client, item: "w1", want: "w1"},
			{op: "add", key: "a", class: Client, item: "w2"},
			{op: "add", key: "a", class: Recovery, item: "push"},
			{op: "add", key: "a", class: Scrub, item: "chunk"},
			{op: "add", key: "a", class: Replica, item: "rep"},
			{op: "done", key: "a", want: "w2"},
			{op: "done", key: "a", want: "push"},
			{op: "done", key: "a", want: "chunk"},
			{op: "done", key: "a", want: "rep"},
		}},
		{"a PG's replica ops run in order on its one key", Today{}, []step{
			{op: "add", key: "pg", class: Replica, item: "v1", want: "v1"},
			{op: "add", key: "pg", class: Replica, item: "v2"},
			{op: "add", key: "x", class: Client, item: "c", want: "c"},
			{op: "add", key: "pg", class: Replica, item: "v3"},
			{op: "done", key: "pg", want: "v2"},
			{op: "done", key: "pg", want: "v3"},
		}},
		{"a client op overtaking a push that waited for admission may wait itself", limitPolicy{1}, []step{
			{op: "add", key: "a", class: Client, item: "c1", want: "c1"},
			{op: "add", key: "x", class: Recovery, item: "px", want: "px"},
			{op: "add", key: "b", class: Recovery, item: "pb"},
			{op: "add", key: "b", class: Client, item: "c2"}, // ahead of pb, but c1 runs
			{op: "done", key: "x"},
			{op: "next"}, // pb is behind c2 now: nothing of recovery waits
			{op: "done", key: "a"},
			{op: "next", want: "c2"},
			{op: "done", key: "b", want: "pb"},
		}},
		{"cut takes what has not started and keeps what runs", Today{}, []step{
			{op: "add", key: "a", class: Client, item: "a1", want: "a1"},
			{op: "add", key: "a", class: Client, item: "a2"},
			{op: "add", key: "a", class: Client, item: "a3"},
			{op: "cut", want: "a2,a3"},
			{op: "done", key: "a"},
			{op: "add", key: "a", class: Client, item: "a4", want: "a4"},
		}},
		{"cut takes a first item that waited for admission", limitPolicy{1}, []step{
			{op: "add", key: "a", class: Client, item: "a1", want: "a1"},
			{op: "add", key: "b", class: Client, item: "b1"},
			{op: "cut", want: "b1"},
			{op: "done", key: "a"},
			{op: "next"},
			{op: "add", key: "b", class: Client, item: "b2", want: "b2"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := NewQueue[string, string](tt.policy)
			for i, s := range tt.steps {
				got := ""
				switch s.op {
				case "add":
					if q.Add(s.key, s.class, 1, s.item) {
						got = s.item
					}
				case "done":
					got, _ = q.Done(s.key)
				case "next":
					if k, v, ok := q.Next(); ok {
						got = v
						if q.Len(k) == 0 {
							t.Fatalf("step %d: Next handed out %s of key %s, which has no items", i, v, k)
						}
					}
				case "cut":
					cut := q.Cut(nil)
					slices.Sort(cut)
					got = joinItems(cut)
				}
				if got != s.want {
					t.Fatalf("step %d (%s %s %s): got %q, want %q", i, s.op, s.key, s.item, got, s.want)
				}
			}
		})
	}
}

func joinItems(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

// TestQueueLoad checks the running loads and the waiting count a policy
// and the OSD's status see.
func TestQueueLoad(t *testing.T) {
	q := NewQueue[string, int](Today{})
	q.Add("a", Client, CostOf(4096), 1)
	q.Add("a", Client, CostOf(0), 2)
	q.Add("b", Client, CostOf(0), 3)
	if got, want := q.Running(Client), (Load{Items: 2, Cost: 4097}); got != want {
		t.Errorf("running %+v, want %+v", got, want)
	}
	if q.Waiting() != 1 || q.Len("a") != 2 {
		t.Errorf("waiting %d, a has %d", q.Waiting(), q.Len("a"))
	}
	q.Done("a")
	q.Done("a")
	q.Done("b")
	if got := q.Running(Client); got != (Load{}) || q.Waiting() != 0 {
		t.Errorf("after every Done: running %+v, waiting %d", got, q.Waiting())
	}
	if _, ok := q.Done("a"); ok {
		t.Error("Done of an idle key handed something out")
	}
}

func TestToday(t *testing.T) {
	tests := []struct {
		c       Class
		running int
		admit   bool
	}{
		{Client, 1000, true},
		{Replica, 1000, true},
		{Recovery, 1000, true}, // Limiters bound recovery
		{Scrub, 0, true},
		{Scrub, 1, false},
		{SnapTrim, 1000, true}, // the trimmer's window bounds trims
	}
	for _, tt := range tests {
		if got := (Today{}).Admit(tt.c, 1, Load{Items: tt.running}); got != tt.admit {
			t.Errorf("Admit(%v with %d running) = %v", tt.c, tt.running, got)
		}
	}
	for _, c := range Classes() {
		for _, other := range Classes() {
			want := (c == Recovery || c == SnapTrim) && other == Client
			if got := (Today{}).Yields(c, other); got != want {
				t.Errorf("Yields(%v, %v) = %v", c, other, got)
			}
		}
		if c.String() == "unknown" {
			t.Errorf("class %d has no name", c)
		}
	}
}

// TestQueueReusesFreedSlices checks that an op on an idle key allocates
// nothing once the queue has freed a key's slice, and that a reused
// slice carries nothing of its past: a key that had three items, emptied,
// serves another key's items in order.
func TestQueueReusesFreedSlices(t *testing.T) {
	q := NewQueue[string, string](Today{})
	q.Add("warm", Client, 1, "x")
	q.Done("warm")
	if n := testing.AllocsPerRun(100, func() {
		if !q.Add("a", Client, 1, "w") {
			t.Fatal("not started")
		}
		if _, ok := q.Done("a"); ok {
			t.Fatal("more")
		}
	}); n != 0 {
		t.Errorf("Add and Done of an idle key: %v allocations, want 0", n)
	}
	for _, it := range []string{"b1", "b2", "b3"} {
		q.Add("b", Client, 1, it)
	}
	for _, want := range []string{"b2", "b3", ""} {
		if got, _ := q.Done("b"); got != want {
			t.Fatalf("b: %q, want %q", got, want)
		}
	}
	q.Add("c", Client, 1, "c1")
	q.Add("c", Client, 1, "c2")
	if q.Len("c") != 2 || q.Busy("b") {
		t.Fatalf("c has %d items, b busy %v", q.Len("c"), q.Busy("b"))
	}
	if got, _ := q.Done("c"); got != "c2" {
		t.Fatalf("c: %q after c1", got)
	}
	if got, ok := q.Done("c"); ok || q.Waiting() != 0 {
		t.Fatalf("c: %q, %v after c2; %d waiting", got, ok, q.Waiting())
	}
}
