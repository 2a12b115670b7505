package kv

import (
	"bytes"
	"slices"

	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Register adds the kv class's methods to r.
func Register(r *objclass.Registry) error {
	for _, m := range []struct {
		name string
		m    objclass.Method
	}{
		{"write", objclass.Method{Write: true, Run: write}},
		{"read", objclass.Method{Run: read}},
		{"freeze", objclass.Method{Write: true, Run: freeze}},
		{"thaw", objclass.Method{Write: true, Run: thaw}},
		{"mark", objclass.Method{Write: true, Run: mark}},
		{"swap", objclass.Method{Write: true, Run: swap}},
		{"unmark", objclass.Method{Write: true, Run: unmark}},
	} {
		if err := r.Register(Class, m.name, m.m); err != nil {
			return err
		}
	}
	return nil
}

func badRequest(err error) error { return objclass.Errorf(wire.EINVAL, "%v", err) }

// loadLeaf returns the leaf's bounds and counts: ENOENT if the object is
// gone (a split or merge removed it), EIO if it is not a leaf.
func loadLeaf(c objclass.Context) (Leaf, error) {
	if !c.Exists() {
		return Leaf{}, objclass.Errorf(wire.ENOENT, "kv: the leaf does not exist (any more)")
	}
	b, ok, err := objclass.GetXattr(c, LeafAttr)
	if err != nil {
		return Leaf{}, err
	}
	if !ok {
		return Leaf{}, objclass.Errorf(wire.EIO, "kv: the object is not a leaf (no %s attribute)", LeafAttr)
	}
	l, err := DecodeLeaf(b)
	if err != nil {
		return Leaf{}, objclass.Errorf(wire.EIO, "kv: %v", err)
	}
	return l, nil
}

func checkKey(key string) error {
	if key == "" || len(key) > MaxKeyLen {
		return objclass.Errorf(wire.EINVAL, "kv: key of %d bytes (want 1 to %d)", len(key), MaxKeyLen)
	}
	return nil
}

func notMine(l Leaf, key string) error {
	return objclass.Errorf(ErrnoNotMine, "kv: key %q is not in the leaf's range %v", key, l.Bounds)
}

// write applies a WriteRequest if the leaf covers every key, is not
// frozen, every condition holds (else ErrnoMismatch), and it ends with
// between k and 2k entries (or fewer than k if it is the only leaf, or if
// the batch does not shrink it).
func write(c objclass.Context, in []byte) ([]byte, error) {
	req, err := DecodeWriteRequest(in)
	if err != nil {
		return nil, badRequest(err)
	}
	l, err := loadLeaf(c)
	if err != nil {
		return nil, err
	}
	if l.Frozen != "" {
		return nil, objclass.Errorf(ErrnoBusy, "kv: the leaf is frozen by %s", l.Frozen)
	}
	keys := make([]string, 0, len(req.Puts)+len(req.Removes)+len(req.Conds))
	for _, p := range req.Puts {
		keys = append(keys, p.Key)
	}
	keys = append(keys, req.Removes...)
	for _, c := range req.Conds {
		keys = append(keys, c.Key)
	}
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return nil, err
		}
		if !l.Bounds.Contains(k) {
			return nil, notMine(l, k)
		}
	}
	present, err := objclass.OmapGet(c, keys...)
	if err != nil {
		return nil, err
	}
	for _, cond := range req.Conds {
		v, ok := present[cond.Key]
		if cond.Absent && ok {
			return nil, objclass.Errorf(ErrnoMismatch, "kv: key %q exists", cond.Key)
		}
		if !cond.Absent && (!ok || !bytes.Equal(v, cond.Value)) {
			return nil, objclass.Errorf(ErrnoMismatch, "kv: key %q does not hold the expected value", cond.Key)
		}
	}
	// The batch applies removes after puts, as the ops below do.
	after := map[string]bool{}
	for k := range present {
		after[k] = true
	}
	for _, p := range req.Puts {
		after[p.Key] = true
	}
	for _, k := range req.Removes {
		after[k] = false
	}
	count := int64(l.Count)
	for k, now := range after {
		_, was := present[k]
		switch {
		case now && !was:
			count++
		case !now && was:
			count--
		}
	}
	switch {
	case count > 2*int64(l.K):
		return nil, objclass.Errorf(ErrnoFull, "kv: the leaf would hold %d entries, over 2k = %d", count, 2*l.K)
	case count < int64(l.K) && count < int64(l.Count) && !l.Bounds.Everything():
		return nil, objclass.Errorf(ErrnoTooSmall, "kv: the leaf would hold %d entries, under k = %d", count, l.K)
	}
	if len(req.Puts) > 0 {
		pairs := make([]wire.KV, len(req.Puts))
		for i, p := range req.Puts {
			pairs[i] = wire.KV{Key: p.Key, Value: p.Value}
		}
		if err := objclass.OmapSet(c, pairs...); err != nil {
			return nil, err
		}
	}
	if len(req.Removes) > 0 {
		if err := objclass.OmapRm(c, req.Removes...); err != nil {
			return nil, err
		}
	}
	l.Count = uint64(count)
	return nil, objclass.SetXattr(c, LeafAttr, l.Encode())
}

// read answers a ReadRequest from a leaf that covers its keys.
func read(c objclass.Context, in []byte) ([]byte, error) {
	req, err := DecodeReadRequest(in)
	if err != nil {
		return nil, badRequest(err)
	}
	l, err := loadLeaf(c)
	if err != nil {
		return nil, err
	}
	reply := ReadReply{Bounds: l.Bounds}
	if !req.Scan {
		for _, k := range req.Keys {
			if err := checkKey(k); err != nil {
				return nil, err
			}
			if !l.Bounds.Contains(k) {
				return nil, notMine(l, k)
			}
		}
		vals, err := objclass.OmapGet(c, req.Keys...)
		if err != nil {
			return nil, err
		}
		for k, v := range vals {
			reply.Pairs = append(reply.Pairs, Pair{Key: k, Value: v})
		}
		slices.SortFunc(reply.Pairs, func(a, b Pair) int {
			switch {
			case a.Key < b.Key:
				return -1
			case a.Key > b.Key:
				return 1
			}
			return 0
		})
		return reply.Encode(), nil
	}
	if !l.Bounds.Contains(req.From) {
		return nil, notMine(l, req.From)
	}
	limit := uint64(req.Limit)
	if limit == 0 {
		limit = 512
	}
	first, err := objclass.OmapGet(c, req.From)
	if err != nil {
		return nil, err
	}
	if v, ok := first[req.From]; ok {
		reply.Pairs = append(reply.Pairs, Pair{Key: req.From, Value: v})
		limit--
	}
	if limit > 0 {
		entries, more, err := objclass.OmapList(c, req.From, "", limit)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			reply.Pairs = append(reply.Pairs, Pair{Key: e.Key, Value: e.Value})
		}
		reply.More = more
	} else {
		// The limit is spent on From itself: say whether any follow.
		entries, _, err := objclass.OmapList(c, req.From, "", 1)
		if err != nil {
			return nil, err
		}
		reply.More = len(entries) > 0
	}
	return reply.Encode(), nil
}

// freeze marks the leaf as being replaced by operation ID: its writes are
// refused from now on (EBUSY). Freezing again with the same ID is not an
// error; with another, EBUSY. It returns a FreezeReply: the leaf, and
// its first Entries entries if the request asked (the leaf no longer
// changes, so they are what the operation copies).
func freeze(c objclass.Context, in []byte) ([]byte, error) {
	req, err := DecodeFreezeRequest(in)
	if err != nil {
		return nil, badRequest(err)
	}
	l, err := loadLeaf(c)
	if err != nil {
		return nil, err
	}
	switch l.Frozen {
	case req.ID:
	case "":
		l.Frozen = req.ID
		if err := objclass.SetXattr(c, LeafAttr, l.Encode()); err != nil {
			return nil, err
		}
	default:
		return nil, objclass.Errorf(ErrnoBusy, "kv: the leaf is frozen by %s", l.Frozen)
	}
	reply := FreezeReply{Leaf: l}
	if req.Entries > 0 {
		entries, more, err := objclass.OmapList(c, "", "", uint64(req.Entries))
		if err != nil {
			return nil, err
		}
		reply.Entries, reply.More = true, more
		size := 0
		for _, e := range entries {
			if size >= FreezeReplyBytes {
				reply.More = true
				break
			}
			size += len(e.Key) + len(e.Value)
			reply.Pairs = append(reply.Pairs, Pair{Key: e.Key, Value: e.Value})
		}
	}
	return reply.Encode(), nil
}

// thaw undoes freeze: it clears the leaf's freeze by operation ID (a
// rollback). A leaf not frozen is not an error (thawed already); one
// frozen by another operation is ECANCELED.
func thaw(c objclass.Context, in []byte) ([]byte, error) {
	req, err := DecodeFreezeRequest(in)
	if err != nil {
		return nil, badRequest(err)
	}
	l, err := loadLeaf(c)
	if err != nil {
		return nil, err
	}
	switch l.Frozen {
	case "":
		return nil, nil
	case req.ID:
		l.Frozen = ""
		return nil, objclass.SetXattr(c, LeafAttr, l.Encode())
	}
	return nil, objclass.Errorf(ErrnoNoMark, "kv: the leaf is frozen by %s, not %s", l.Frozen, req.ID)
}

// loadEntry returns the index entry ending at high: ok false if there is
// none, EIO if it does not decode.
func loadEntry(c objclass.Context, high string) (Entry, bool, error) {
	vals, err := objclass.OmapGet(c, IndexKey(high))
	if err != nil {
		return Entry{}, false, err
	}
	b, ok := vals[IndexKey(high)]
	if !ok {
		return Entry{}, false, nil
	}
	x, err := DecodeEntry(b)
	if err != nil {
		return Entry{}, false, objclass.Errorf(wire.EIO, "kv: index entry %q: %v", high, err)
	}
	return x, true, nil
}

func setEntry(c objclass.Context, high string, x Entry) error {
	return objclass.OmapSet(c, wire.KV{Key: IndexKey(high), Value: x.Encode()})
}

// mark marks the index entries of the request (Mark.Entries, or the one
// ending at High) with its Mark, all or none: if each names its leaf
// (EXDEV otherwise: the client's view is stale) and carries no mark
// (EBUSY otherwise) or, to take an abandoned operation over, the mark
// TakeOver made at least OlderThan ago (ECANCELED if another, EBUSY if
// younger).
func mark(c objclass.Context, in []byte) ([]byte, error) {
	req, err := DecodeMarkRequest(in)
	if err != nil {
		return nil, badRequest(err)
	}
	if !c.Exists() {
		return nil, objclass.Errorf(wire.ENOENT, "kv: the index does not exist")
	}
	targets := req.Mark.Entries
	if len(targets) == 0 {
		targets = []IndexEntry{{High: req.High, Leaf: req.Leaf}}
	}
	xs := make([]Entry, len(targets))
	for i, t := range targets {
		if i > 0 && IndexKey(t.High) <= IndexKey(targets[i-1].High) {
			return nil, objclass.Errorf(wire.EINVAL, "kv: mark entries out of order at %q", t.High)
		}
		x, ok, err := loadEntry(c, t.High)
		if err != nil {
			return nil, err
		}
		if !ok || x.Leaf != t.Leaf {
			return nil, objclass.Errorf(ErrnoNotMine, "kv: no index entry of leaf %s ending at %q", t.Leaf, t.High)
		}
		switch {
		case req.TakeOver == "" && x.Mark != nil:
			return nil, objclass.Errorf(ErrnoBusy, "kv: the index entry of leaf %s is marked by %s", x.Leaf, x.Mark.ID)
		case req.TakeOver != "" && (x.Mark == nil || x.Mark.ID != req.TakeOver):
			return nil, objclass.Errorf(ErrnoNoMark, "kv: the index entry of leaf %s does not carry mark %s", x.Leaf, req.TakeOver)
		case req.TakeOver != "" && c.Now()-x.Mark.Created < req.OlderThan:
			return nil, objclass.Errorf(ErrnoBusy, "kv: mark %s on leaf %s is %dns old, not %dns", req.TakeOver, x.Leaf, c.Now()-x.Mark.Created, req.OlderThan)
		}
		xs[i] = x
	}
	m := req.Mark
	m.Created = c.Now()
	m.Entries = targets
	for i, t := range targets {
		xs[i].Mark = &m
		if err := setEntry(c, t.High, xs[i]); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// swap removes the entries ending at Remove, each of which must carry
// the mark ID (ECANCELED otherwise: the operation was rolled back or
// finished by another client), and adds the entries of Add, unmarked
// (EEXIST if one would replace an entry it does not remove).
func swap(c objclass.Context, in []byte) ([]byte, error) {
	req, err := DecodeSwapRequest(in)
	if err != nil {
		return nil, badRequest(err)
	}
	if !c.Exists() {
		return nil, objclass.Errorf(wire.ENOENT, "kv: the index does not exist")
	}
	var rm []string
	for _, high := range req.Remove {
		x, ok, err := loadEntry(c, high)
		if err != nil {
			return nil, err
		}
		if !ok || x.Mark == nil || x.Mark.ID != req.ID {
			return nil, objclass.Errorf(ErrnoNoMark, "kv: the index entry ending at %q does not carry mark %s", high, req.ID)
		}
		rm = append(rm, IndexKey(high))
	}
	if len(rm) > 0 {
		if err := objclass.OmapRm(c, rm...); err != nil {
			return nil, err
		}
	}
	removed := map[string]bool{}
	for _, high := range req.Remove {
		removed[high] = true
	}
	for _, a := range req.Add {
		if a.Leaf == "" {
			return nil, objclass.Errorf(wire.EINVAL, "kv: an index entry without a leaf")
		}
		// An added entry takes the place of a removed one or of none:
		// never another leaf's.
		if !removed[a.High] {
			if x, ok, err := loadEntry(c, a.High); err != nil {
				return nil, err
			} else if ok {
				return nil, objclass.Errorf(wire.EEXIST, "kv: the index already has leaf %s ending at %q", x.Leaf, a.High)
			}
		}
		if err := setEntry(c, a.High, Entry{Leaf: a.Leaf}); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// unmark clears the mark ID from the entry ending at High and from every
// other entry the mark names that carries it (ECANCELED if the entry at
// High does not carry it).
func unmark(c objclass.Context, in []byte) ([]byte, error) {
	req, err := DecodeUnmarkRequest(in)
	if err != nil {
		return nil, badRequest(err)
	}
	if !c.Exists() {
		return nil, objclass.Errorf(wire.ENOENT, "kv: the index does not exist")
	}
	x, ok, err := loadEntry(c, req.High)
	if err != nil {
		return nil, err
	}
	if !ok || x.Mark == nil || x.Mark.ID != req.ID {
		return nil, objclass.Errorf(ErrnoNoMark, "kv: the index entry ending at %q does not carry mark %s", req.High, req.ID)
	}
	highs := []string{req.High}
	for _, e := range x.Mark.Entries {
		if e.High != req.High {
			highs = append(highs, e.High)
		}
	}
	for _, high := range highs {
		y, ok, err := loadEntry(c, high)
		if err != nil {
			return nil, err
		}
		if !ok || y.Mark == nil || y.Mark.ID != req.ID {
			continue
		}
		y.Mark = nil
		if err := setEntry(c, high, y); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
