package meta

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/kv"
	"github.com/cuttlestore/cuttle/rados"
)

func gcKey(id uint64) string { return fmt.Sprintf("%016x", id) }

// GCShards is how many objects the garbage list is spread over, so that
// the writes of concurrent uploads do not queue on one object.
const GCShards = 32

// gcObj is the shard of the garbage list that holds data id's record.
func gcObj(shard int) string { return fmt.Sprintf("s3.gc.%02d", shard) }

func gcShard(id uint64) int { return int(id % GCShards) }

// AddGarbage records data that may be left behind: written before its
// index entry exists (so a crash leaves it named here), or replaced.
func (s *Store) AddGarbage(ctx context.Context, gs ...Garbage) error {
	return s.SwapGarbage(ctx, gs, nil)
}

// DropGarbage forgets records: their data is in use, or removed.
func (s *Store) DropGarbage(ctx context.Context, ids ...uint64) error {
	return s.SwapGarbage(ctx, nil, ids)
}

// SwapGarbage adds records, then drops others: an overwrite's old data
// become garbage as its new data stop being. Within a shard it is one
// atomic write; across shards every add lands before any drop, so a
// crash between leaves both recorded, never neither.
func (s *Store) SwapGarbage(ctx context.Context, add []Garbage, drop []uint64) error {
	adds := map[int]map[string][]byte{}
	for _, g := range add {
		if g.Since.IsZero() {
			g.Since = s.Now()
		}
		sh := gcShard(g.ID)
		if adds[sh] == nil {
			adds[sh] = map[string][]byte{}
		}
		adds[sh][gcKey(g.ID)] = g.Encode()
	}
	drops := map[int][]string{}
	for _, id := range drop {
		drops[gcShard(id)] = append(drops[gcShard(id)], gcKey(id))
	}
	write := func(sh int, m map[string][]byte, keys []string) error {
		w := rados.NewWriteOp()
		if len(m) > 0 {
			w.SetOmap(m)
		}
		if len(keys) > 0 {
			w.RmOmapKeys(keys)
		}
		err := s.io.OperateWrite(ctx, gcObj(sh), w)
		if err != nil && !(len(m) == 0 && errors.Is(err, rados.ErrNotFound)) {
			return fmt.Errorf("gc list: %w", err)
		}
		return nil
	}
	// Adds (with the drops of the same shard), then the other drops.
	for sh, m := range adds {
		if err := write(sh, m, drops[sh]); err != nil {
			return err
		}
		delete(drops, sh)
	}
	for sh, keys := range drops {
		if err := write(sh, nil, keys); err != nil {
			return err
		}
	}
	return nil
}

// Garbage returns up to max records of one shard after the id after.
func (s *Store) Garbage(ctx context.Context, shard int, after uint64, max int) ([]Garbage, bool, error) {
	start := ""
	if after != 0 {
		start = gcKey(after)
	}
	kvs, more, err := s.io.GetOmapValues(ctx, gcObj(shard), start, "", uint64(max))
	if errors.Is(err, rados.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("gc list: %w", err)
	}
	out := make([]Garbage, 0, len(kvs))
	for _, p := range kvs {
		g, err := DecodeGarbage(p.Value)
		if err != nil {
			return nil, false, err
		}
		out = append(out, g)
	}
	return out, more, nil
}

// IndexByID opens the index of the bucket whose id is id, without
// creating it: ok is false when it does not exist (the bucket is gone).
func (s *Store) IndexByID(ctx context.Context, id string) (ix *Index, ok bool, err error) {
	s.mu.Lock()
	ix = s.indexes[id]
	s.mu.Unlock()
	if ix != nil {
		return ix, true, nil
	}
	st, err := kv.Open(ctx, s.io, indexName(id), s.kvc)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("index of bucket id %s: %w", id, err)
	}
	return &Index{kv: st}, true, nil
}
