package kv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
)

var errDied = errors.New("the client died")

// scenario is an operation client a starts on a store holding model,
// and the model once it is done.
type scenario struct {
	name  string
	setup []string // keys put (then removed if prefixed "-") before a starts
	op    string   // "+key" put, "-key" remove
	steps []string // where a can stop
}

var scenarios = []scenario{
	{"split", []string{"a", "b", "c", "d"}, "+e",
		[]string{stepMarked, stepFrozen, stepRead, stepLeftFails, stepRightFails, stepWritten, stepSwapped}},
	// [a b] [c d e]: removing a rebalances to [a b c] [d e].
	{"rebalance", []string{"a", "b", "c", "d", "e"}, "-a",
		[]string{"join " + stepMarked, "join " + stepFrozen, "join " + stepRead, "join " + stepLeftFails, "join " + stepRightFails, "join " + stepWritten, "join " + stepSwapped}},
	// [a b] [c d]: removing a merges them.
	{"merge", []string{"a", "b", "c", "d", "e", "-e"}, "-a",
		[]string{"join " + stepMarked, "join " + stepFrozen, "join " + stepRead, "join " + stepLeftFails, "join " + stepWritten, "join " + stepSwapped}},
}

// start builds the scenario's store (k 2) with client a, opens it in
// clients b and c (whose cleanup waits a second for a mark), and returns
// the model.
func (sc scenario) start(t *testing.T) (a, b, c *Store, model map[string]string) {
	t.Helper()
	connect := simPool(t)
	ctx := context.Background()
	a, err := Create(ctx, connect("client.a"), "s", Options{K: 2}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	model = map[string]string{}
	for _, k := range sc.setup {
		if strings.HasPrefix(k, "-") {
			if err := a.Remove(ctx, k[1:]); err != nil {
				t.Fatal(err)
			}
			delete(model, k[1:])
			continue
		}
		if err := a.Put(ctx, k, []byte("A")); err != nil {
			t.Fatal(err)
		}
		model[k] = "A"
	}
	cfg := Config{MarkTimeout: time.Second}
	if b, err = Open(ctx, connect("client.b"), "s", cfg); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(ctx, connect("client.c"), "s", cfg); err != nil {
		t.Fatal(err)
	}
	return a, b, c, model
}

// apply runs the scenario's operation with s, and records it in model.
func (sc scenario) apply(ctx context.Context, s *Store, model map[string]string) error {
	key := sc.op[1:]
	if sc.op[0] == '+' {
		model[key] = "A"
		return s.Put(ctx, key, []byte("A"))
	}
	delete(model, key)
	return s.Remove(ctx, key)
}

// checkStore compares the store with the model through a fresh handle:
// a scan returns exactly the model; every leaf is unfrozen, holds its
// count, between k and 2k entries (unless alone) and only keys in its
// bounds; no entry is marked; and the pool holds no object but the index,
// its leaves, and those orphans allows (leaves a client wrote after its
// operation was rolled back).
func checkStore(t *testing.T, s *Store, model map[string]string, orphans func(name string) bool) {
	t.Helper()
	ctx := context.Background()
	fresh, err := Open(ctx, s.io, s.name, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ps, more, err := fresh.List(ctx, "", "", 1000)
	if err != nil || more || len(ps) != len(model) {
		t.Fatalf("scan: %d pairs (model %d), more %v, %v", len(ps), len(model), more, err)
	}
	for _, p := range ps {
		if v, ok := model[p.Key]; !ok || v != string(p.Value) {
			t.Fatalf("scan: %q = %q, model %q %v", p.Key, p.Value, v, ok)
		}
	}
	raw, _, err := s.io.GetOmapValues(ctx, indexName(s.name), "", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range raw {
		if x, err := clskv.DecodeEntry(p.Value); err != nil || x.Mark != nil {
			t.Fatalf("index entry %q: %+v %v", p.Key, x, err)
		}
	}
	names := map[string]bool{indexName(s.name): true}
	leaves := fresh.Leaves()
	for _, e := range leaves {
		names[e.Leaf] = true
		attr, err := s.io.GetXattr(ctx, e.Leaf, clskv.LeafAttr)
		if err != nil {
			t.Fatalf("leaf %s: %v", e.Leaf, err)
		}
		l, err := clskv.DecodeLeaf(attr)
		if err != nil || l.Bounds != e.Bounds || l.Frozen != "" {
			t.Fatalf("leaf %s: %+v %v; the index says %v", e.Leaf, l, err, e.Bounds)
		}
		kvs, _, err := s.io.GetOmapValues(ctx, e.Leaf, "", "", 1000)
		if err != nil || uint64(len(kvs)) != l.Count || (len(leaves) > 1 && (l.Count < uint64(s.k) || l.Count > 2*uint64(s.k))) {
			t.Fatalf("leaf %s: %d entries, count %d, %v", e.Leaf, len(kvs), l.Count, err)
		}
		for _, p := range kvs {
			if !e.Bounds.Contains(p.Key) {
				t.Fatalf("leaf %s %v holds %q", e.Leaf, e.Bounds, p.Key)
			}
		}
	}
	for o, err := range s.io.Objects(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if !names[o.Name] && (orphans == nil || !orphans(o.Name)) {
			t.Fatalf("object %s is neither the index nor a leaf", o.Name)
		}
	}
}

// Client a dies after each step of a split, a rebalance and a merge
// (docs/KV.md, "Cleanup": the design document's interleavings of an
// operating client A and a cleaning client B). Until b's mark timeout
// other clients read every key; then b, meeting the busy leaf, takes the
// operation over and rolls it forward (once every new leaf is written)
// or back, and does the operation itself: no key lost, none duplicated
// or resurrected, no mark, freeze or stray object left.
func TestAbandonedAtEachStep(t *testing.T) {
	for _, sc := range scenarios {
		for _, step := range sc.steps {
			t.Run(sc.name+"/"+step, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					a, b, _, model := sc.start(t)
					ctx := context.Background()
					a.afterStep = func(s string) error {
						if s == step {
							return errDied
						}
						return nil
					}
					want := map[string]string{}
					for k, v := range model {
						want[k] = v
					}
					if err := sc.apply(ctx, a, want); !errors.Is(err, errDied) {
						t.Fatalf("a: %v", err)
					}
					for k, v := range model {
						if got, err := b.Get(ctx, k); err != nil || string(got) != v {
							t.Fatalf("get %q after a died: %q %v", k, got, err)
						}
					}
					start := time.Now()
					if err := sc.apply(ctx, b, model); err != nil {
						t.Fatalf("b: %v", err)
					}
					if strings.HasSuffix(step, stepSwapped) {
						// The swap was made: nothing waits.
						if d := time.Since(start); d >= time.Second {
							t.Fatalf("b waited %v after a swapped", d)
						}
					}
					for i, k := range []string{"a", "b", "c", "f", "g"} {
						if err := b.Put(ctx, k, fmt.Appendf(nil, "B%d", i)); err != nil {
							t.Fatalf("b's put %q: %v", k, err)
						}
						model[k] = fmt.Sprintf("B%d", i)
					}
					// After a swap the old leaves are gone only once a
					// client met them frozen; b's cache named them.
					checkStore(t, b, model, func(name string) bool { return strings.HasSuffix(step, stepSwapped) && leftOver(t, b, name) })
				})
			})
		}
	}
}

// leftOver reports whether name is a leaf frozen by a finished
// operation (one whose client died between the swap and removing it).
func leftOver(t *testing.T, s *Store, name string) bool {
	attr, err := s.io.GetXattr(context.Background(), name, clskv.LeafAttr)
	if err != nil {
		return false
	}
	l, err := clskv.DecodeLeaf(attr)
	return err == nil && l.Frozen != ""
}

// The cleaning client b dies too, after each step of its cleanup of a's
// split (rolled forward: a had written both leaves; back: it had written
// one, the left or the right); c then finishes b's cleanup.
func TestCleanupAbandoned(t *testing.T) {
	for _, tt := range []struct{ aStep, bStep string }{
		{stepWritten, "cleanup " + stepMarked},
		{stepWritten, "cleanup " + stepSwapped},
		{stepRightFails, "cleanup " + stepMarked},
		{stepRightFails, "cleanup thawed"},
		{stepLeftFails, "cleanup " + stepMarked},
		{stepLeftFails, "cleanup thawed"},
	} {
		t.Run(tt.aStep+"/"+tt.bStep, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := scenarios[0]
				a, b, c, model := sc.start(t)
				ctx := context.Background()
				a.afterStep = func(s string) error {
					if s == tt.aStep {
						return errDied
					}
					return nil
				}
				b.afterStep = func(s string) error {
					if s == tt.bStep {
						return errDied
					}
					return nil
				}
				if err := sc.apply(ctx, a, map[string]string{}); !errors.Is(err, errDied) {
					t.Fatalf("a: %v", err)
				}
				if err := sc.apply(ctx, b, map[string]string{}); !errors.Is(err, errDied) {
					t.Fatalf("b: %v", err)
				}
				if err := sc.apply(ctx, c, model); err != nil {
					t.Fatalf("c: %v", err)
				}
				checkStore(t, c, model, func(name string) bool { return leftOver(t, c, name) })
			})
		})
	}
}

// Client a stalls (not dies) after each step; b takes its operation over
// and finishes or undoes it; then a resumes. a's swap must then fail
// (ECANCELED) and a re-read the index and retry, never applying the
// operation twice; a freeze it makes after b rolled back is thawed by a
// later cleanup. Leaves a writes after the rollback are orphans (never
// named by the index), the only objects left over.
func TestStalledOwnerResumes(t *testing.T) {
	for _, sc := range scenarios {
		for _, step := range sc.steps {
			t.Run(sc.name+"/"+step, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					a, b, _, model := sc.start(t)
					a.cfg.MarkTimeout = time.Second
					ctx := context.Background()
					stalled, resume := make(chan struct{}), make(chan struct{})
					a.afterStep = func(s string) error {
						if s == step {
							a.afterStep = nil
							close(stalled)
							<-resume
						}
						return nil
					}
					done := make(chan error, 1)
					aModel := map[string]string{}
					go func() { done <- sc.apply(ctx, a, aModel) }()
					<-stalled
					if err := b.Put(ctx, "f", []byte("B")); err != nil {
						t.Fatalf("b: %v", err)
					}
					model["f"] = "B"
					if err := b.Put(ctx, "bb", []byte("B")); err != nil {
						t.Fatalf("b: %v", err)
					}
					model["bb"] = "B"
					close(resume)
					if err := <-done; err != nil {
						t.Fatalf("a after it resumed: %v", err)
					}
					if key := sc.op[1:]; sc.op[0] == '+' {
						model[key] = "A"
					} else {
						delete(model, key)
					}
					mine := "kv.s.leaf." + a.nonce + "."
					checkStore(t, b, model, func(name string) bool {
						return strings.HasPrefix(name, mine) || leftOver(t, b, name)
					})
				})
			})
		}
	}
}
