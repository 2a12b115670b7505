package meta

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/kv"
)

// Index is a bucket's object index: object name -> Entry, in a kv store.
type Index struct {
	kv *kv.Store
}

// Listed is one object of a listing.
type Listed struct {
	Key   string
	Entry Entry
}

// Get returns an object's entry (ErrNoSuchObject when absent).
func (ix *Index) Get(ctx context.Context, key string) (Entry, error) {
	raw, err := ix.kv.Get(ctx, key)
	if errors.Is(err, kv.ErrNotFound) {
		return Entry{}, fmt.Errorf("%w: %s", ErrNoSuchObject, key)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("index get %q: %w", key, err)
	}
	en, err := DecodeEntry(raw)
	if err != nil {
		return Entry{}, fmt.Errorf("index entry %q: %w", key, err)
	}
	if en.Deleted {
		return Entry{}, fmt.Errorf("%w: %s", ErrNoSuchObject, key)
	}
	return en, nil
}

// Stored is what an index holds for a key, read to be replaced with
// Swap: its entry if live, and the bytes stored (none for an absent key).
type Stored struct {
	Entry Entry
	Live  bool
	raw   []byte // nil: absent
}

// Current reads key's stored state.
func (ix *Index) Current(ctx context.Context, key string) (Stored, error) {
	raw, err := ix.kv.Get(ctx, key)
	if errors.Is(err, kv.ErrNotFound) {
		return Stored{}, nil
	}
	if err != nil {
		return Stored{}, fmt.Errorf("index get %q: %w", key, err)
	}
	en, err := DecodeEntry(raw)
	if err != nil {
		return Stored{}, fmt.Errorf("index entry %q: %w", key, err)
	}
	return Stored{Entry: en, Live: !en.Deleted, raw: raw}, nil
}

// Swap sets key's entry to en if the index still holds prev (read by
// Current), else ErrConflict: an overwrite, ACL change or delete that
// raced with this one is never undone by it.
func (ix *Index) Swap(ctx context.Context, key string, prev Stored, en Entry) error {
	old := prev.raw
	err := ix.kv.CompareAndSwap(ctx, key, old, en.Encode())
	if errors.Is(err, kv.ErrConflict) {
		return fmt.Errorf("index swap %q: %w", key, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("index swap %q: %w", key, err)
	}
	return nil
}

// Put sets an object's entry.
func (ix *Index) Put(ctx context.Context, key string, en Entry) error {
	if err := ix.kv.Put(ctx, key, en.Encode()); err != nil {
		return fmt.Errorf("index put %q: %w", key, err)
	}
	return nil
}

// Delete removes an object's entry (absent is not an error).
func (ix *Index) Delete(ctx context.Context, key string) error {
	if err := ix.kv.Remove(ctx, key); err != nil {
		return fmt.Errorf("index delete %q: %w", key, err)
	}
	return nil
}

// List returns up to limit live objects with keys in [start, end) ("" =
// unbounded) in order, and whether more may follow. Tombstones are read
// past in batches of at least listBatch, so a run of them costs few
// round trips.
func (ix *Index) List(ctx context.Context, start, end string, limit int) ([]Listed, bool, error) {
	var out []Listed
	for len(out) < limit {
		pairs, more, err := ix.kv.List(ctx, start, end, max(limit-len(out), listBatch))
		if err != nil {
			return nil, false, fmt.Errorf("index list from %q: %w", start, err)
		}
		for _, p := range pairs {
			en, err := DecodeEntry(p.Value)
			if err != nil {
				return nil, false, fmt.Errorf("index entry %q: %w", p.Key, err)
			}
			if en.Deleted {
				continue
			}
			if len(out) == limit {
				return out, true, nil
			}
			out = append(out, Listed{Key: p.Key, Entry: en})
		}
		if !more || len(pairs) == 0 {
			return out, false, nil
		}
		start = pairs[len(pairs)-1].Key + "\x00"
	}
	return out, true, nil
}

// listBatch is the fewest entries List asks the kv store for at once.
const listBatch = 64
