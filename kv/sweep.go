package kv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/rados"
)

// Swept is one leaf Sweep removed, or found orphaned but left because it
// was younger than asked.
type Swept struct {
	Leaf string
	Age  time.Duration // now, by this client's clock, less the object's mtime
	// Frozen is the operation that froze it ("" if none): an old leaf
	// swapped out by that operation, whose client died before removing
	// it. Unfrozen orphans are new leaves of an operation rolled back.
	Frozen string
}

// SweepResult is what Sweep found among the pool's leaf objects of the
// store.
type SweepResult struct {
	OlderThan time.Duration // the age an orphan had to reach to be removed
	Leaves    int           // leaf objects of the store in the pool
	Removed   []Swept       // orphans removed
	Young     []Swept       // orphans younger than olderThan, left
}

// Sweep removes the store's orphan leaves: leaf objects in the pool
// (named kv.N.leaf.<nonce>.<counter>) that no index entry names and no
// mark on the index names (as an old or a new leaf), whose mtime is at
// least olderThan ago (Config.MarkTimeout if olderThan <= 0). Such
// leaves are left by an owner that wrote its new leaves after a cleanup
// rolled its operation back, or by a client that died between a swap
// and removing the old leaves. See docs/KV.md ("Orphan sweep") for why a
// leaf of a live operation is never removed: each leaf is read first and
// then the one index entry covering its low bound, in one read; a leaf
// that exists was marked before it was written, and a mark that neither
// that entry nor the index names any more never comes back.
func (s *Store) Sweep(ctx context.Context, olderThan time.Duration) (SweepResult, error) {
	if olderThan <= 0 {
		olderThan = s.cfg.MarkTimeout
	}
	res := SweepResult{OlderThan: olderThan}
	prefix := "kv." + s.name + ".leaf."
	var names []string
	for e, err := range s.io.Objects(ctx) {
		if err != nil {
			return res, fmt.Errorf("kv: sweep %s: list the pool: %w", s.name, err)
		}
		if e.Namespace == s.io.Namespace() && isLeafName(e.Name, prefix) {
			names = append(names, e.Name)
		}
	}
	res.Leaves = len(names)
	for _, name := range names {
		o, err := s.orphan(ctx, name)
		if err != nil {
			return res, err
		}
		if o == nil {
			continue
		}
		if o.Age < olderThan {
			res.Young = append(res.Young, *o)
			continue
		}
		if err := s.io.Delete(ctx, name); err != nil && !errors.Is(err, rados.ErrNotFound) {
			return res, fmt.Errorf("kv: sweep %s: remove %s: %w", s.name, name, err)
		}
		s.log.Info("kv: sweep: removed an orphan leaf", "leaf", name, "age", o.Age, "frozen", o.Frozen)
		res.Removed = append(res.Removed, *o)
	}
	return res, nil
}

// isLeafName reports whether name is prefix followed by exactly a
// handle's nonce (16 hex digits) and a counter (decimal): the leaves of
// another store whose name starts with this one's and ".leaf." have more
// dot-separated parts and never match.
func isLeafName(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return false
	}
	nonce, counter, ok := strings.Cut(rest, ".")
	if !ok || len(nonce) != 16 || counter == "" {
		return false
	}
	for _, c := range nonce {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	for _, c := range counter {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// orphan reads leaf name (its kv.leaf attribute and mtime, in one read),
// then the index entry covering its low bound (one read), and returns
// the leaf as an orphan if that entry neither names it nor carries a
// mark naming it; nil if it is live, gone, or not a leaf this sweep may
// judge (no or a corrupt kv.leaf: Check reports a named one; an unnamed
// one is left alone rather than guessed about).
func (s *Store) orphan(ctx context.Context, name string) (*Swept, error) {
	r := rados.NewReadOp()
	st := r.Stat()
	at := r.GetXattr(clskv.LeafAttr)
	if err := s.io.OperateRead(ctx, name, r); errors.Is(err, rados.ErrNotFound) || errors.Is(err, rados.ErrNoAttr) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("kv: sweep %s: read %s: %w", s.name, name, err)
	}
	l, err := clskv.DecodeLeaf(at.Data)
	if err != nil {
		s.log.Warn("kv: sweep: a leaf object whose kv.leaf does not decode, left", "leaf", name, "err", err)
		return nil, nil
	}
	after := ""
	if l.Bounds.Low != "" {
		after = clskv.IndexKey(l.Bounds.Low)
	}
	index := indexName(s.name)
	kvs, _, err := s.io.GetOmapValues(ctx, index, after, "", 1)
	if err != nil {
		return nil, fmt.Errorf("kv: sweep %s: read the index: %w", s.name, err)
	}
	if len(kvs) == 0 {
		return nil, fmt.Errorf("kv: object %s: no entry covers %q: %w", index, l.Bounds.Low, ErrCorrupt)
	}
	x, err := clskv.DecodeEntry(kvs[0].Value)
	if err != nil {
		return nil, fmt.Errorf("kv: object %s: entry %q: %w: %v", index, kvs[0].Key, ErrCorrupt, err)
	}
	if x.Leaf == name || (x.Mark != nil && markNames(*x.Mark, name)) {
		return nil, nil
	}
	return &Swept{Leaf: name, Age: time.Since(st.ModTime), Frozen: l.Frozen}, nil
}

// markNames reports whether mark m names leaf as one of its old or new
// leaves.
func markNames(m clskv.Mark, leaf string) bool {
	if m.Old == leaf {
		return true
	}
	for _, e := range m.Entries {
		if e.Leaf == leaf {
			return true
		}
	}
	for _, n := range m.New {
		if n.Name == leaf {
			return true
		}
	}
	return false
}
