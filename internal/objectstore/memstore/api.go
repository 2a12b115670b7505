package memstore

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// Queue validates t, applies it and returns a completion that has already
// fired: a memory store is durable once applied. On error nothing is
// applied.
func (s *Store) Queue(ctx context.Context, t *objectstore.Transaction) (*objectstore.Completion, error) {
	if t == nil {
		return nil, fmt.Errorf("memstore: queue: nil transaction: %w", objectstore.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: queue: %w", err)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("memstore: queue: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("memstore: queue: %w", objectstore.ErrClosed)
	}
	v := newView(s)
	for i := range t.Ops {
		if err := v.apply(&t.Ops[i]); err != nil {
			return nil, fmt.Errorf("memstore: op %d (%s): %w", i, t.Ops[i].Code, err)
		}
	}
	if err := v.commit(); err != nil {
		return nil, fmt.Errorf("memstore: commit: %w", err)
	}
	c := objectstore.NewCompletion()
	c.MarkCommitted(nil)
	return c, nil
}

// Close releases the store; later calls, Close included, return ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("memstore: close: %w", objectstore.ErrClosed)
	}
	s.closed, s.colls, s.poolStored = true, nil, nil
	return nil
}

// rlock read-locks the store unless it is closed or ctx is done; on
// success the caller must call s.mu.RUnlock.
func (s *Store) rlock(ctx context.Context, what string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: %s: %w", what, err)
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return fmt.Errorf("memstore: %s: %w", what, objectstore.ErrClosed)
	}
	return nil
}

// object read-locks the store and returns o; on success the caller must
// call s.mu.RUnlock.
func (s *Store) object(ctx context.Context, what string, c objectstore.CollectionID, o objid.ID) (*object, error) {
	if err := s.rlock(ctx, what); err != nil {
		return nil, err
	}
	bc := s.colls[c]
	if bc == nil {
		s.mu.RUnlock()
		return nil, fmt.Errorf("memstore: %s %v: %w", what, c, objectstore.ErrCollectionNotFound)
	}
	obj := bc.objs[o]
	if obj == nil {
		s.mu.RUnlock()
		return nil, fmt.Errorf("memstore: %s %v %v: %w", what, c, o, objectstore.ErrNotFound)
	}
	return obj, nil
}

// Read returns length bytes at off (to the end when length is 0); holes
// read as zeros and a read past the end returns no bytes.
func (s *Store) Read(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64) ([]byte, error) {
	obj, err := s.object(ctx, "read", c, o)
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return obj.read(off, length), nil
}

// Stat returns o's size and its allocated bytes within the size.
func (s *Store) Stat(ctx context.Context, c objectstore.CollectionID, o objid.ID) (objectstore.ObjectInfo, error) {
	obj, err := s.object(ctx, "stat", c, o)
	if err != nil {
		return objectstore.ObjectInfo{}, err
	}
	defer s.mu.RUnlock()
	return objectstore.ObjectInfo{Size: obj.size, Allocated: obj.stored()}, nil
}

// StatAttrs stats o and copies up to two of its attributes in one
// lookup (objectstore.AttrStater).
func (s *Store) StatAttrs(ctx context.Context, c objectstore.CollectionID, o objid.ID, names [2]string) (objectstore.StatAttrs, error) {
	obj, err := s.object(ctx, "stat", c, o)
	if err != nil {
		return objectstore.StatAttrs{}, err
	}
	defer s.mu.RUnlock()
	out := objectstore.StatAttrs{Info: objectstore.ObjectInfo{Size: obj.size, Allocated: obj.stored()}}
	for i, name := range names {
		if v, ok := obj.attrs[name]; ok && name != "" {
			out.Vals[i], out.Has[i] = append([]byte{}, v...), true
		}
	}
	return out, nil
}

// ExtentMap returns the runs of allocated pages within the range and the
// object's size.
func (s *Store) ExtentMap(ctx context.Context, c objectstore.CollectionID, o objid.ID, off, length uint64) ([]objectstore.Extent, error) {
	obj, err := s.object(ctx, "extent map", c, o)
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return obj.extents(off, length), nil
}

// GetAttr returns a copy of attribute name.
func (s *Store) GetAttr(ctx context.Context, c objectstore.CollectionID, o objid.ID, name string) ([]byte, error) {
	obj, err := s.object(ctx, "getattr", c, o)
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	v, ok := obj.attrs[name]
	if !ok {
		return nil, fmt.Errorf("memstore: getattr %v %v %q: %w", c, o, name, objectstore.ErrNoAttr)
	}
	return bytes.Clone(v), nil
}

// GetAttrs returns a copy of every attribute.
func (s *Store) GetAttrs(ctx context.Context, c objectstore.CollectionID, o objid.ID) (map[string][]byte, error) {
	obj, err := s.object(ctx, "getattrs", c, o)
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return cloneValues(obj.attrs), nil
}

func cloneValues(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = bytes.Clone(v)
	}
	return out
}

// OmapGetHeader returns a copy of the omap header, nil if unset.
func (s *Store) OmapGetHeader(ctx context.Context, c objectstore.CollectionID, o objid.ID) ([]byte, error) {
	obj, err := s.object(ctx, "omap header", c, o)
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return bytes.Clone(obj.header), nil
}

// OmapGetValues returns copies of the entries for the keys that exist.
func (s *Store) OmapGetValues(ctx context.Context, c objectstore.CollectionID, o objid.ID, keys []string) (map[string][]byte, error) {
	obj, err := s.object(ctx, "omap get", c, o)
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := map[string][]byte{}
	for _, k := range keys {
		if v, ok := obj.omap[k]; ok {
			out[k] = bytes.Clone(v)
		}
	}
	return out, nil
}

// OmapIterate returns up to limit entries (all when limit <= 0) with keys
// after after (every key, "" included, when after is "") and starting with
// prefix, in key order.
func (s *Store) OmapIterate(ctx context.Context, c objectstore.CollectionID, o objid.ID, after, prefix string, limit int) ([]objectstore.KV, bool, error) {
	obj, err := s.object(ctx, "omap iterate", c, o)
	if err != nil {
		return nil, false, err
	}
	defer s.mu.RUnlock()
	var keys []string
	for k := range obj.omap {
		if (after == "" || k > after) && strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	more := limit > 0 && len(keys) > limit
	if more {
		keys = keys[:limit]
	}
	out := make([]objectstore.KV, len(keys))
	for i, k := range keys {
		out[i] = objectstore.KV{Key: k, Value: bytes.Clone(obj.omap[k])}
	}
	return out, more, nil
}

// ListCollections returns every collection, sorted by kind, pool and seed.
func (s *Store) ListCollections(ctx context.Context) ([]objectstore.CollectionID, error) {
	if err := s.rlock(ctx, "list collections"); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	return s.sortedCollections(), nil
}

// CollectionExists reports whether c exists.
func (s *Store) CollectionExists(ctx context.Context, c objectstore.CollectionID) (bool, error) {
	if err := s.rlock(ctx, "collection exists"); err != nil {
		return false, err
	}
	defer s.mu.RUnlock()
	return s.colls[c] != nil, nil
}

// ListObjects returns up to limit objects (all when limit <= 0) at or
// after start in hash order; the zero objid.ID starts at the beginning,
// before objects of negative pools too.
func (s *Store) ListObjects(ctx context.Context, c objectstore.CollectionID, start objid.ID, limit int) ([]objid.ID, objid.ID, error) {
	if err := s.rlock(ctx, "list objects"); err != nil {
		return nil, objid.ID{}, err
	}
	defer s.mu.RUnlock()
	bc := s.colls[c]
	if bc == nil {
		return nil, objid.ID{}, fmt.Errorf("memstore: list objects %v: %w", c, objectstore.ErrCollectionNotFound)
	}
	i := 0
	if start != (objid.ID{}) {
		i, _ = slices.BinarySearchFunc(bc.order, start, objid.Compare)
	}
	end := len(bc.order)
	if limit > 0 && end-i > limit {
		end = i + limit
	}
	next := objid.Max()
	if end < len(bc.order) {
		next = bc.order[end]
	}
	return slices.Clone(bc.order[i:end]), next, nil
}

// StatFS reports the capacity, the allocated pages and the stored bytes.
func (s *Store) StatFS(ctx context.Context) (objectstore.FSStats, error) {
	if err := s.rlock(ctx, "statfs"); err != nil {
		return objectstore.FSStats{}, err
	}
	defer s.mu.RUnlock()
	alloc := s.pages * PageSize
	return objectstore.FSStats{
		Total: s.total, Available: s.total - min(alloc, s.total), Allocated: alloc,
		Stored: s.stored, PoolStored: maps.Clone(s.poolStored),
	}, nil
}
