package blockstore

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/storetest"
)

func openForSuite(t *testing.T) objectstore.Store {
	opts := testOptions(vfs.NewMem())
	opts.Size = 32 << 20
	if err := Mkfs(opts); err != nil {
		t.Fatal(err)
	}
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, openForSuite)
}

func TestDifferentialMemstore(t *testing.T) {
	for seed := range int64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			b := openForSuite(t)
			defer b.Close()
			m := memstore.New(memstore.Options{})
			defer m.Close()
			storetest.Differential(t, seed, 300, b, m)
		})
	}
}
