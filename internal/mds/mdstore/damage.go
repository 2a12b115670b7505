package mdstore

import (
	"errors"
	"slices"
	"strings"

	"github.com/cuttlestore/cuttle/rados"
)

// maxDamage bounds the damage table: past it, further damaged objects
// are logged but not remembered (the count still grows).
const maxDamage = 1024

// damageTable is the store's record of damaged objects (Ceph's
// DamageTable): one entry an object, the first damage found in it.
type damageTable struct {
	byObject map[string]DamageError
	total    int
}

// recordDamage logs e (with its object's name) and remembers it.
func (s *Store) recordDamage(e *DamageError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.damaged.byObject[e.Object]; ok {
		return // logged once an object
	}
	s.log.Error("metadata damage detected: requests in this directory get EIO", "object", e.Object, "pool", e.Pool, "key", e.Key, "what", e.What, "err", e.Err)
	s.damaged.total++
	if s.damaged.byObject == nil {
		s.damaged.byObject = map[string]DamageError{}
	}
	if len(s.damaged.byObject) < maxDamage {
		s.damaged.byObject[e.Object] = *e
	}
}

// MissingFrag records err, a fragment read's error, as damage if the
// fragment's object is missing although a directory names it (the
// caller knows: a request's walk, not a replay) and returns it.
func (s *Store) MissingFrag(err error) error {
	var de *DamageError
	if errors.As(err, &de) && errors.Is(err, rados.ErrNotFound) {
		s.recordDamage(de)
	}
	return err
}

// Damage returns the damaged objects found so far, by object name, and
// how many there were (more than returned past maxDamage). A daemon
// shows them as "metadata damage detected" (docs/MDS.md, "Damage and
// scrub").
func (s *Store) Damage() ([]DamageError, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]DamageError, 0, len(s.damaged.byObject))
	for _, e := range s.damaged.byObject {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b DamageError) int { return strings.Compare(a.Object, b.Object) })
	return out, s.damaged.total
}
