package rbd

// span is a run [lo, hi) of the bytes of one cache block.
type span struct{ lo, hi uint32 }

// spans is a set of bytes of one cache block: runs in order, disjoint and
// not touching (two touching runs are one).
type spans []span

// add returns s with [lo, hi) added.
func (s spans) add(lo, hi uint32) spans {
	if lo >= hi {
		return s
	}
	out := make(spans, 0, len(s)+1)
	i := 0
	for ; i < len(s) && s[i].hi < lo; i++ { // runs wholly before, not touching
		out = append(out, s[i])
	}
	for ; i < len(s) && s[i].lo <= hi; i++ { // runs touching or overlapping: merged
		lo, hi = min(lo, s[i].lo), max(hi, s[i].hi)
	}
	out = append(out, span{lo, hi})
	return append(out, s[i:]...)
}

// remove returns s without [lo, hi).
func (s spans) remove(lo, hi uint32) spans {
	if lo >= hi || len(s) == 0 {
		return s
	}
	out := make(spans, 0, len(s)+1)
	for _, r := range s {
		if r.hi <= lo || r.lo >= hi {
			out = append(out, r)
			continue
		}
		if r.lo < lo {
			out = append(out, span{r.lo, lo})
		}
		if r.hi > hi {
			out = append(out, span{hi, r.hi})
		}
	}
	return out
}

// covers reports whether every byte of [lo, hi) is in s.
func (s spans) covers(lo, hi uint32) bool {
	if lo >= hi {
		return true
	}
	for _, r := range s {
		if r.lo <= lo && hi <= r.hi {
			return true
		}
	}
	return false
}

// size returns how many bytes s holds.
func (s spans) size() uint64 {
	var n uint64
	for _, r := range s {
		n += uint64(r.hi - r.lo)
	}
	return n
}

// clip returns the parts of s within [lo, hi).
func (s spans) clip(lo, hi uint32) spans {
	var out spans
	for _, r := range s {
		a, b := max(r.lo, lo), min(r.hi, hi)
		if a < b {
			out = append(out, span{a, b})
		}
	}
	return out
}
