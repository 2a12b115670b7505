package kv

import (
	"context"
	"fmt"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/kv/plan"
	"github.com/cuttlestore/cuttle/rados"
)

// Pair is a key and its value.
type Pair struct {
	Key   string
	Value []byte
}

// scanPage bounds the entries one read of a leaf returns (a leaf holds up
// to 2k; values up to MaxValueLen each).
const scanPage = 512

// List returns up to limit pairs with start <= key < end in key order
// (end "" means no upper bound), and more=true if pairs remain in the
// range past the last one returned. It reads leaf by leaf and is correct
// across concurrent splits/merges (a leaf that moved is re-read through
// the index).
//
// To read the next page, call List again with start = the last key
// returned + "\x00". The position is a key, never a leaf: a leaf answers
// only for its own range and the ranges are disjoint, so no split or
// merge between or during pages makes a key appear twice or not at all.
// A key written while a scan runs appears if it was written before the
// scan read its leaf.
func (s *Store) List(ctx context.Context, start, end string, limit int) (pairs []Pair, more bool, err error) {
	if limit <= 0 {
		return nil, false, fmt.Errorf("kv: list with limit %d (want at least 1): %w", limit, ErrInvalid)
	}
	if len(start) > MaxKeyLen+1 || len(end) > MaxKeyLen+1 {
		return nil, false, fmt.Errorf("kv: list bounds of %d and %d bytes (at most %d): %w", len(start), len(end), MaxKeyLen+1, ErrInvalid)
	}
	if len(start) > MaxKeyLen {
		// A continuation after a longest key (it + "\x00"). No key is
		// longer than MaxKeyLen, so the keys from start are the keys
		// after its first MaxKeyLen bytes.
		return s.list(ctx, start[:MaxKeyLen], true, end, limit)
	}
	return s.list(ctx, start, false, end, limit)
}

// list is List from start, itself excluded if after.
func (s *Store) list(ctx context.Context, start string, after bool, end string, limit int) ([]Pair, bool, error) {
	if end != "" && start >= end {
		return nil, false, nil
	}
	var pairs []Pair
	from := start
	for {
		// One more pair than wanted says whether more remain; one more
		// again when the read starts at a key already returned.
		n := limit - len(pairs) + 1
		if after {
			n++
		}
		reply, err := s.scanLeaf(ctx, from, min(n, scanPage))
		if err != nil {
			return nil, false, err
		}
		for _, p := range reply.Pairs {
			if after && p.Key == from {
				continue
			}
			if end != "" && p.Key >= end {
				return pairs, false, nil
			}
			if len(pairs) == limit {
				return pairs, true, nil
			}
			pairs = append(pairs, Pair{Key: p.Key, Value: p.Value})
		}
		if reply.More {
			if len(reply.Pairs) == 0 {
				return nil, false, fmt.Errorf("kv: list from %q: a leaf said more entries follow and returned none: %w", from, ErrCorrupt)
			}
			from, after = reply.Pairs[len(reply.Pairs)-1].Key, true
			continue
		}
		high := reply.Bounds.High
		if high == "" || (end != "" && high >= end) {
			return pairs, false, nil
		}
		from, after = high, false
	}
}

// scanLeaf reads up to n entries from key from (inclusive) of the leaf
// covering from, through the index cache (re-read if the leaf moved).
func (s *Store) scanLeaf(ctx context.Context, from string, n int) (clskv.ReadReply, error) {
	var reply clskv.ReadReply
	in := clskv.ReadRequest{Scan: true, From: from, Limit: uint32(n)}.Encode()
	err := s.retry(ctx, from, func(leaf plan.Entry) error {
		r := rados.NewReadOp()
		st := r.Exec(clskv.Class, "read", in)
		if err := s.io.OperateRead(ctx, leaf.Leaf, r); err != nil {
			return err
		}
		var err error
		reply, err = clskv.DecodeReadReply(st.Output)
		if err != nil {
			return fmt.Errorf("kv: leaf %s: %w: %v", leaf.Leaf, ErrCorrupt, err)
		}
		if !reply.Bounds.Contains(from) || !inOrder(reply.Pairs, reply.Bounds, from) {
			return fmt.Errorf("kv: leaf %s %v: a scan from %q answered out of order or range: %w", leaf.Leaf, reply.Bounds, from, ErrCorrupt)
		}
		return nil
	})
	return reply, err
}

// inOrder reports whether pairs are in increasing key order, from from
// on, within b.
func inOrder(pairs []clskv.Pair, b clskv.Bounds, from string) bool {
	prev := ""
	for i, p := range pairs {
		if p.Key < from || !b.Contains(p.Key) || (i > 0 && p.Key <= prev) {
			return false
		}
		prev = p.Key
	}
	return true
}
