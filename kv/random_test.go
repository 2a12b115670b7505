package kv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Seeded: clients in goroutines put and remove keys of their own (so each
// key's history is one client's, and the model is exact), and four of
// the six die at random steps of their splits, joins and cleanups; the
// others meet the abandoned operations and take them over. An operation whose client
// died was not applied (it dies before its write). At the end, past the
// timeout, every leaf is looked at once more, and the store must match
// the model with no mark, freeze or stray object.
func TestRandomClientsDie(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { randomClientsDie(t, seed) })
		})
	}
}

func randomClientsDie(t *testing.T, seed uint64) {
	connect := simPool(t)
	ctx := context.Background()
	admin, err := Create(ctx, connect("client.admin"), "s", Options{K: 3}, Config{MarkTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const clients, ops = 6, 80
	models := make([]map[string]string, clients)
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	deaths := make([]int, clients)
	for w := range clients {
		models[w] = map[string]string{}
		s, err := Open(ctx, connect(fmt.Sprintf("client.%d", w)), "s", Config{MarkTimeout: time.Second, Retries: 50})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		dead := false
		s.afterStep = func(string) error {
			if w >= 2 && rng.IntN(20) == 0 { // clients 0 and 1 live on
				dead = true
				return errDied
			}
			return nil
		}
		wg.Go(func() {
			for i := 0; i < ops && !dead; i++ {
				key := fmt.Sprintf("k%02d.%d", rng.IntN(40), w)
				var err error
				if rng.IntN(3) == 0 {
					err = s.Remove(ctx, key)
					if err == nil {
						delete(models[w], key)
					}
				} else {
					val := fmt.Sprintf("%d.%d", w, i)
					err = s.Put(ctx, key, []byte(val))
					if err == nil {
						models[w][key] = val
					}
				}
				if errors.Is(err, errDied) {
					deaths[w]++
					return
				}
				if err != nil {
					errs <- fmt.Errorf("client %d: %w", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	died := 0
	for _, d := range deaths {
		died += d
	}
	if died == 0 {
		t.Fatalf("seed %d: no client died", seed)
	}
	// Past the timeout, a last look at every leaf.
	time.Sleep(2 * time.Second)
	if err := admin.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, l := range admin.Leaves() {
		if err := admin.cleanup(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	model := map[string]string{}
	for _, m := range models {
		for k, v := range m {
			model[k] = v
		}
	}
	checkStore(t, admin, model, func(name string) bool { return leftOver(t, admin, name) })
	t.Logf("seed %d: %d clients died, %d keys, %d leaves", seed, died, len(model), len(admin.Leaves()))
}
