package memstore_test

import (
	"flag"
	"fmt"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/storetest"
)

var (
	seedFlag  = flag.Int64("storetest.seed", 0, "run TestDifferential with only this seed (0: the default seeds)")
	stepsFlag = flag.Int("storetest.steps", 1000, "transactions per TestDifferential seed")
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) objectstore.Store {
		// Small enough for the suite's ErrNoSpace test.
		return memstore.New(memstore.Options{Total: 64 << 20})
	})
}

// TestDifferential runs the random stream on two memstores: a check of
// the generator and comparator, and of memstore's determinism.
func TestDifferential(t *testing.T) {
	seeds := []int64{1, 2, 3, 42}
	if *seedFlag != 0 {
		seeds = []int64{*seedFlag}
	}
	steps := *stepsFlag
	if testing.Short() {
		steps = 300
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			a, b := memstore.New(memstore.Options{}), memstore.New(memstore.Options{})
			defer a.Close()
			defer b.Close()
			storetest.Differential(t, seed, steps, a, b)
		})
	}
}

func TestDefaults(t *testing.T) {
	st, err := memstore.New(memstore.Options{}).StatFS(t.Context())
	if err != nil || st.Total != memstore.DefaultTotal || st.Available != st.Total || st.Allocated != 0 {
		t.Fatalf("statfs of a new default store: %+v %v", st, err)
	}
}
