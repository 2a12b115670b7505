package objectstore

import (
	"fmt"
	"strconv"
	"strings"
)

// CollectionKind says what a collection holds.
type CollectionKind uint8

const (
	// KindMeta is the OSD's own collection (superblock, maps).
	KindMeta CollectionKind = iota
	// KindPG holds a placement group's objects.
	KindPG
	// KindTemp holds a placement group's temporary objects (recovery
	// writes them there, then moves them into the PG).
	KindTemp
)

// CollectionID names a collection: the meta collection, or a placement
// group's main or temporary collection.
type CollectionID struct {
	Kind CollectionKind
	Pool int64
	Seed uint32 // placement group number within the pool
}

// MetaCollection is the OSD's meta collection.
var MetaCollection = CollectionID{Kind: KindMeta}

// PGCollection returns the collection of placement group pool.seed.
func PGCollection(pool int64, seed uint32) CollectionID {
	return CollectionID{Kind: KindPG, Pool: pool, Seed: seed}
}

// TempCollection returns the temporary collection of pool.seed.
func TempCollection(pool int64, seed uint32) CollectionID {
	return CollectionID{Kind: KindTemp, Pool: pool, Seed: seed}
}

// String prints the collection as Ceph names it: "meta", "1.1f_head",
// "1.1f_TEMP".
func (c CollectionID) String() string {
	switch c.Kind {
	case KindMeta:
		return "meta"
	case KindPG:
		return fmt.Sprintf("%d.%x_head", c.Pool, c.Seed)
	case KindTemp:
		return fmt.Sprintf("%d.%x_TEMP", c.Pool, c.Seed)
	}
	return fmt.Sprintf("collection(kind %d)", c.Kind)
}

// Valid reports whether c is a well-formed collection id.
func (c CollectionID) Valid() bool {
	switch c.Kind {
	case KindMeta:
		return c.Pool == 0 && c.Seed == 0
	case KindPG, KindTemp:
		return c.Pool >= 0
	}
	return false
}

// ParseCollectionID parses the form String prints.
func ParseCollectionID(s string) (CollectionID, error) {
	if s == "meta" {
		return MetaCollection, nil
	}
	base, kind := s, KindPG
	switch {
	case strings.HasSuffix(s, "_head"):
		base = strings.TrimSuffix(s, "_head")
	case strings.HasSuffix(s, "_TEMP"):
		base, kind = strings.TrimSuffix(s, "_TEMP"), KindTemp
	default:
		return CollectionID{}, fmt.Errorf("%w: collection %q: want meta, POOL.SEED_head or POOL.SEED_TEMP", ErrInvalid, s)
	}
	poolText, seedText, ok := strings.Cut(base, ".")
	pool, err1 := strconv.ParseInt(poolText, 10, 64)
	seed, err2 := strconv.ParseUint(seedText, 16, 32)
	if !ok || err1 != nil || err2 != nil || pool < 0 {
		return CollectionID{}, fmt.Errorf("%w: collection %q: bad POOL.SEED", ErrInvalid, s)
	}
	return CollectionID{Kind: kind, Pool: pool, Seed: uint32(seed)}, nil
}
