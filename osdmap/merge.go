package osdmap

import (
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/encoding"
)

// PG merging (a smaller pg_num) in the map. A merge takes two epochs, as
// Ceph's does since Nautilus:
//
//  1. The leader sets the pool's PGNumPending to the pg_num it merges
//     down to (Ceph's pg_num_pending), once pgp_num is at or below it, so
//     that every source PG (seeds in [PGNumPending, PGNum)) is placed with
//     its target (the PG its seed maps to with PGNumPending PGs). The
//     sources and targets start a new interval and take no writes: their
//     primaries answer writes ESTALE and the clients wait for the next
//     map. They peer and recover as usual, so they go active+clean with
//     last updates that no longer change.
//  2. Once every source and target reported active+clean in that
//     interval, on the same OSDs, the leader lowers PGNum to PGNumPending
//     and records in LastMerge the last update each source and target
//     had (from those reports). Every OSD merges each source it holds
//     into the target, and a merged copy counts as current only when its
//     source and target copies had exactly the recorded versions.

// PGVersion is a PG log version (epoch, counter), as the OSDs number
// their writes.
type PGVersion struct {
	Epoch, Counter uint64
}

// String formats v as Ceph does, epoch'counter.
func (v PGVersion) String() string { return fmt.Sprintf("%d'%d", v.Epoch, v.Counter) }

// ParsePGVersion parses what String writes.
func ParsePGVersion(s string) (PGVersion, error) {
	var v PGVersion
	if n, err := fmt.Sscanf(s, "%d'%d", &v.Epoch, &v.Counter); err != nil || n != 2 || v.String() != s {
		return PGVersion{}, fmt.Errorf("osdmap: %q is not a PG version (epoch'counter)", s)
	}
	return v, nil
}

// MergedPG is one source PG of the last merge step and the last updates
// its copy and its target's had when both were clean and took no writes.
type MergedPG struct {
	Source                       uint32
	SourceVersion, TargetVersion PGVersion
}

// PoolMerge is a pool's last merge step: the pg_num it merged from (0:
// none yet) and its sources, in seed order. Every source in [PGNum, From)
// is listed.
type PoolMerge struct {
	From uint32
	PGs  []MergedPG
}

// Merging reports whether the pool's pg_num is headed below its current
// value.
func (p *Pool) Merging() bool {
	n, _ := p.Targets()
	return n < p.PGNum || p.PGNumPending != 0
}

// MergeParticipant reports whether PG seed takes part in the pending
// merge (PGNumPending set): a source, or the target of one. Those take no
// writes until the merge is done.
func (p *Pool) MergeParticipant(seed uint32) bool {
	n := p.PGNumPending
	if n == 0 || seed >= p.PGNum {
		return false
	}
	if seed >= n {
		return true
	}
	for s := n; s < p.PGNum; s++ {
		if StableMod(s, n, PGMask(n)) == seed {
			return true
		}
	}
	return false
}

// MergedVersions returns what LastMerge recorded for source seed.
func (p *Pool) MergedVersions(source uint32) (MergedPG, bool) {
	i, ok := slices.BinarySearchFunc(p.LastMerge.PGs, source, func(m MergedPG, s uint32) int {
		return int(int64(m.Source) - int64(s))
	})
	if !ok {
		return MergedPG{}, false
	}
	return p.LastMerge.PGs[i], true
}

func (p *Pool) validateMerge() error {
	switch n := p.PGNumPending; {
	case n != 0 && n >= p.PGNum:
		return fmt.Errorf("pool %d: pg_num_pending %d not below pg_num %d", p.ID, n, p.PGNum)
	case n != 0 && n < p.PGPNum:
		return fmt.Errorf("pool %d: pg_num_pending %d below pgp_num %d", p.ID, n, p.PGPNum)
	case (n == 0) != (p.PendingSince == 0):
		return fmt.Errorf("pool %d: pg_num_pending %d since epoch %d", p.ID, n, p.PendingSince)
	}
	m := p.LastMerge
	if m.From == 0 {
		if len(m.PGs) > 0 {
			return fmt.Errorf("pool %d: merged PGs without the pg_num they merged from", p.ID)
		}
		return nil
	}
	if m.From > MaxPGNum || m.From <= p.PGNum {
		return fmt.Errorf("pool %d: last merge from pg_num %d, not above pg_num %d", p.ID, m.From, p.PGNum)
	}
	for i, g := range m.PGs {
		if g.Source < p.PGNum || g.Source >= m.From || i > 0 && m.PGs[i-1].Source >= g.Source {
			return fmt.Errorf("pool %d: merged PG seed %#x out of order or outside [%d, %d)", p.ID, g.Source, p.PGNum, m.From)
		}
	}
	return nil
}

// encodePoolMerge appends the merge fields (pool version 5):
// pg_num_pending and the epoch it was set, then the last merge's from
// pg_num, its PG count and
// each PG's source seed and the two versions (epoch, counter each).
func encodePoolMerge(e *encoding.Encoder, p *Pool) {
	e.Uvarint(uint64(p.PGNumPending))
	e.Uvarint(uint64(p.PendingSince))
	e.Uvarint(uint64(p.LastMerge.From))
	e.Uvarint(uint64(len(p.LastMerge.PGs)))
	for _, g := range p.LastMerge.PGs {
		e.Uvarint(uint64(g.Source))
		for _, v := range []PGVersion{g.SourceVersion, g.TargetVersion} {
			e.Uvarint(v.Epoch)
			e.Uvarint(v.Counter)
		}
	}
}

func decodePoolMerge(d *encoding.Decoder, p *Pool) {
	p.PGNumPending = decodeU32(d)
	p.PendingSince = Epoch(decodeU32(d))
	p.LastMerge.From = decodeU32(d)
	n := d.Count(5)
	if n > 0 {
		p.LastMerge.PGs = make([]MergedPG, n)
		for i := range p.LastMerge.PGs {
			g := &p.LastMerge.PGs[i]
			g.Source = decodeU32(d)
			g.SourceVersion = PGVersion{Epoch: d.Uvarint(), Counter: d.Uvarint()}
			g.TargetVersion = PGVersion{Epoch: d.Uvarint(), Counter: d.Uvarint()}
		}
	}
}
