package pglog

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/invariants"
)

// checkEnds verifies the two ends of the log after a change, in builds
// with the invariants tag (see internal/invariants). Each Append and trim
// keeps these, so checking the ends after every change covers the whole
// log by induction at O(1) a write; verify checks everything at once.
func (l *Log) checkEnds() {
	if invariants.Enabled {
		invariants.Check(l.verifyEnds())
	}
}

// size is the length of p's strings in the arena.
func (p *packed) size() int { return int(p.ns) + int(p.key) + int(p.name) + int(p.client) }

// verifyEnds reports a broken invariant at the ends of the log: the tail
// is older than the oldest entry, whose strings were not compacted away;
// the two newest entries are in version order with their strings
// contiguous, and the newest ends the arena; and no request id outlives
// its entry.
func (l *Log) verifyEnds() error {
	n := len(l.entries)
	if n == 0 {
		if len(l.byReq) != 0 {
			return fmt.Errorf("pglog: empty log with %d request ids", len(l.byReq))
		}
		return nil
	}
	first, last := &l.entries[0], &l.entries[n-1]
	switch {
	case !l.tail.Less(first.version):
		return fmt.Errorf("pglog: tail %v not older than the oldest entry %v", l.tail, first.version)
	case first.at < l.arenaBase:
		return fmt.Errorf("pglog: oldest entry %v at arena offset %d, before the arena's start %d", first.version, first.at, l.arenaBase)
	case last.at+last.size() != l.arenaBase+len(l.arena):
		return fmt.Errorf("pglog: newest entry %v ends at %d, the arena at %d", last.version, last.at+last.size(), l.arenaBase+len(l.arena))
	case len(l.byReq) > n:
		return fmt.Errorf("pglog: %d request ids for %d entries", len(l.byReq), n)
	}
	if n > 1 {
		prev := &l.entries[n-2]
		if !prev.version.Less(last.version) {
			return fmt.Errorf("pglog: entries %v and %v out of version order", prev.version, last.version)
		}
		if prev.at+prev.size() != last.at {
			return fmt.Errorf("pglog: entry %v's strings end at %d, the next entry's start at %d", prev.version, prev.at+prev.size(), last.at)
		}
	}
	return nil
}

// verify reports the first broken invariant of the whole log: versions
// strictly increasing after the tail, every entry's strings in the arena
// right after the previous entry's, and every request id naming an entry
// still in the log with that request. It costs O(n).
func (l *Log) verify() error {
	if err := l.verifyEnds(); err != nil {
		return err
	}
	prevVersion, at := l.tail, l.arenaBase
	if len(l.entries) > 0 {
		at = l.entries[0].at
	}
	for i := range l.entries {
		p := &l.entries[i]
		if !prevVersion.Less(p.version) {
			return fmt.Errorf("pglog: entry %v after %v: out of version order", p.version, prevVersion)
		}
		if p.at != at {
			return fmt.Errorf("pglog: entry %v's strings at %d, want %d", p.version, p.at, at)
		}
		prevVersion, at = p.version, at+p.size()
	}
	for k, i := range l.byReq {
		j := i - l.trimmed
		if j < 0 || j >= len(l.entries) {
			return fmt.Errorf("pglog: a request id names entry %d, outside the log's %d..%d", i, l.trimmed, l.trimmed+len(l.entries)-1)
		}
		if p := &l.entries[j]; l.packedKey(p) != k {
			return fmt.Errorf("pglog: a request id names entry %v of another request", p.version)
		}
	}
	return nil
}
