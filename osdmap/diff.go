package osdmap

import (
	"bytes"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/crush"
)

// Diff returns the incremental that turns old into new: old.Apply(Diff(old,
// new)) equals new when new's epoch is old's plus one and both maps are of
// the same cluster (Apply refuses the incremental otherwise).
func Diff(old, new *Map) *Incremental {
	inc := &Incremental{FSID: new.fsid, Epoch: new.epoch, Modified: new.modified}
	if old.flags != new.flags {
		f := new.flags
		inc.NewFlags = &f
	}
	if !sameCrush(old.crush, new.crush) {
		inc.NewCrush = new.crush
	}
	if old.poolMax != new.poolMax {
		n := new.poolMax
		inc.NewPoolMax = &n
	}
	ratio := func(a, b float32) *float32 {
		if a == b {
			return nil
		}
		return &b
	}
	inc.NewNearFullRatio = ratio(old.ratios.NearFull, new.ratios.NearFull)
	inc.NewBackfillFullRatio = ratio(old.ratios.BackfillFull, new.ratios.BackfillFull)
	inc.NewFullRatio = ratio(old.ratios.Full, new.ratios.Full)
	diffOSDs(inc, old, new)
	diffPools(inc, old, new)
	for a, exp := range new.blocklist {
		if prev, ok := old.blocklist[a]; !ok || !prev.Equal(exp) {
			if inc.NewBlocklist == nil {
				inc.NewBlocklist = map[string]time.Time{}
			}
			inc.NewBlocklist[a] = exp
		}
	}
	for _, a := range old.BlocklistAddrs() {
		if _, ok := new.blocklist[a]; !ok {
			inc.OldBlocklist = append(inc.OldBlocklist, a)
		}
	}
	inc.NewPGTemp = diffLists(old.pgTemp, new.pgTemp, func(PG) []int32 { return nil }, nil)
	for pg, osd := range new.primaryTemp {
		if prev, ok := old.primaryTemp[pg]; !ok || prev != osd {
			inc.NewPrimaryTemp = setEntry(inc.NewPrimaryTemp, pg, osd)
		}
	}
	for pg := range old.primaryTemp {
		if _, ok := new.primaryTemp[pg]; !ok {
			inc.NewPrimaryTemp = setEntry(inc.NewPrimaryTemp, pg, -1)
		}
	}
	var removed []PG
	inc.NewPGUpmap = diffLists(old.pgUpmap, new.pgUpmap, nil, &removed)
	inc.OldPGUpmap = removed
	removed = nil
	inc.NewPGUpmapItems = diffLists(old.pgUpmapItems, new.pgUpmapItems, nil, &removed)
	inc.OldPGUpmapItems = removed
	return inc
}

// sameCrush reports whether two CRUSH maps are the same map.
func sameCrush(a, b *crush.Map) bool {
	if a == b {
		return true
	}
	ab, errA := a.MarshalBinary()
	bb, errB := b.MarshalBinary()
	return errA == nil && errB == nil && bytes.Equal(ab, bb)
}

func diffOSDs(inc *Incremental, old, new *Map) {
	if len(old.osds) != len(new.osds) {
		n := int32(len(new.osds))
		inc.NewMaxOSD = &n
	}
	for id := range new.osds {
		var prev OSD
		if id < len(old.osds) {
			prev = old.osds[id]
		}
		if prev != new.osds[id] {
			inc.NewOSDs = setEntry(inc.NewOSDs, int32(id), new.osds[id])
		}
	}
}

func diffPools(inc *Incremental, old, new *Map) {
	for _, p := range new.pools {
		if prev := old.Pool(p.ID); prev == nil || !prev.Equal(&p) {
			inc.NewPools = append(inc.NewPools, p)
		}
	}
	for _, p := range old.pools {
		if new.Pool(p.ID) == nil {
			inc.OldPools = append(inc.OldPools, p.ID)
		}
	}
}

// diffLists returns the entries of new that are missing from old or
// differ. Entries of old missing from new are either set to tombstone(pg)
// in the result (pg_temp) or listed in *removed (upmaps).
func diffLists[T comparable](old, new map[PG][]T, tombstone func(PG) []T, removed *[]PG) map[PG][]T {
	var out map[PG][]T
	for _, pg := range sortedPGs(new) {
		if prev, ok := old[pg]; !ok || !slices.Equal(prev, new[pg]) {
			out = setEntry(out, pg, slices.Clone(new[pg]))
		}
	}
	for _, pg := range sortedPGs(old) {
		if _, ok := new[pg]; ok {
			continue
		}
		if removed != nil {
			*removed = append(*removed, pg)
		} else {
			out = setEntry(out, pg, tombstone(pg))
		}
	}
	return out
}

func setEntry[K comparable, V any](m map[K]V, k K, v V) map[K]V {
	if m == nil {
		m = map[K]V{}
	}
	m[k] = v
	return m
}
