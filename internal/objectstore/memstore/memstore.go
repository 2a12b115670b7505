package memstore

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// DefaultTotal is the capacity of a store whose Options.Total is zero.
const DefaultTotal = 1 << 30

// Options configure a Store.
type Options struct {
	// Total is the capacity in bytes that StatFS reports and that
	// transactions may allocate before failing with ErrNoSpace. Only
	// object data counts (whole pages); attributes and omap are free.
	// Zero means DefaultTotal.
	Total uint64
}

// Store is an in-memory objectstore.Store. Create it with New.
type Store struct {
	mu     sync.RWMutex
	total  uint64
	closed bool
	colls  map[objectstore.CollectionID]*collection

	pages      uint64           // allocated pages of every object
	stored     uint64           // sum of the objects' stored bytes
	poolStored map[int64]uint64 // stored bytes by the collection's pool
}

// collection holds a collection's objects and their names in hash order.
type collection struct {
	objs  map[objid.ID]*object
	order []objid.ID // sorted by objid.Compare
}

var _ objectstore.Store = (*Store)(nil)

// New returns an empty store: no collections, no objects.
func New(opts Options) *Store {
	if opts.Total == 0 {
		opts.Total = DefaultTotal
	}
	return &Store{total: opts.Total, colls: map[objectstore.CollectionID]*collection{}, poolStored: map[int64]uint64{}}
}

// commit checks the view's space and installs its changes.
func (v *view) commit() error {
	s := v.s
	pages, stored := int64(s.pages), int64(s.stored)
	pools := map[int64]int64{}
	account := func(c objectstore.CollectionID, obj *object, sign int64) {
		n := sign * int64(obj.stored())
		pages += sign * int64(len(obj.pages))
		stored += n
		if c.Kind != objectstore.KindMeta {
			pools[c.Pool] += n
		}
	}
	for c, cv := range v.colls {
		bc := s.colls[c]
		if bc != nil && cv.fresh {
			for _, obj := range bc.objs {
				account(c, obj, -1)
			}
		}
		for o, obj := range cv.objs {
			if bc != nil && !cv.fresh && bc.objs[o] != nil {
				account(c, bc.objs[o], -1)
			}
			if obj != nil {
				account(c, obj, +1)
			}
		}
	}
	if pages > int64(s.pages) && uint64(pages)*PageSize > s.total {
		return fmt.Errorf("%d bytes allocated, capacity %d: %w", uint64(pages)*PageSize, s.total, objectstore.ErrNoSpace)
	}
	s.pages, s.stored = uint64(pages), uint64(stored)
	for pool, d := range pools {
		if n := int64(s.poolStored[pool]) + d; n == 0 {
			delete(s.poolStored, pool)
		} else {
			s.poolStored[pool] = uint64(n)
		}
	}
	for c, cv := range v.colls {
		v.install(c, cv)
	}
	return nil
}

func (v *view) install(c objectstore.CollectionID, cv *collView) {
	if !cv.exists {
		delete(v.s.colls, c)
		return
	}
	bc := v.s.colls[c]
	if bc == nil || cv.fresh {
		bc = &collection{objs: map[objid.ID]*object{}}
		v.s.colls[c] = bc
	}
	for o, obj := range cv.objs {
		_, had := bc.objs[o]
		i, _ := slices.BinarySearchFunc(bc.order, o, objid.Compare)
		switch {
		case obj == nil && had:
			delete(bc.objs, o)
			bc.order = slices.Delete(bc.order, i, i+1)
		case obj != nil:
			bc.objs[o] = obj
			if !had {
				bc.order = slices.Insert(bc.order, i, o)
			}
		}
	}
}

// sortedCollections returns the collection ids in (kind, pool, seed) order.
func (s *Store) sortedCollections() []objectstore.CollectionID {
	out := slices.Collect(maps.Keys(s.colls))
	slices.SortFunc(out, func(a, b objectstore.CollectionID) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Seed, b.Seed))
	})
	return out
}
