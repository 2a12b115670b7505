package blockstore

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
)

// repair writes the fixes in one synced batch.
func (f *fsck) repair() error {
	safe := f.badRecords == 0
	if !safe {
		f.rep.RepairSkipped = fmt.Sprintf("%d object records do not decode, so the space and node ids they name are unknown: "+
			"no space freed, no omap entries deleted, no counters rewritten", f.badRecords)
	}
	b := f.db.NewBatch()
	defer b.Close()
	// Bitmap: exactly the owned units when every record decoded, else
	// the persisted bitmap plus the owned units.
	const wordsPerRegion = format.BitmapRegionUnits / 64
	target := slices.Clone(f.owned)
	if !safe {
		for i := range target {
			target[i] |= f.bitmap[i]
		}
	}
	nRegions := (uint64(len(target)) + wordsPerRegion - 1) / wordsPerRegion
	for r := uint64(0); r < nRegions; r++ {
		words := target[r*wordsPerRegion : min((r+1)*wordsPerRegion, uint64(len(target)))]
		v := format.EncodeBitmap(words)
		old, present := f.regions[r]
		if present && bytes.Equal(old, v) {
			continue
		}
		if !present && !slices.ContainsFunc(words, func(w uint64) bool { return w != 0 }) {
			continue
		}
		if !safe && present {
			if _, err := format.DecodeBitmap(old); err != nil {
				continue // unknown contents: leave it
			}
		}
		_ = b.Set(format.BitmapKey(r), v, nil)
	}
	fixed := map[ProblemKind]bool{ProblemOwnedFree: true}
	if safe {
		for r := range f.regions {
			if r >= nRegions {
				_ = b.Delete(format.BitmapKey(r), nil)
			}
		}
		for _, nid := range f.orphanNids {
			p := format.OmapPrefix(nid)
			_ = b.DeleteRange(p, format.PrefixEnd(p), nil)
		}
		for _, nid := range f.orphanUnits {
			lo, hi := format.UnitRange(nid)
			_ = b.DeleteRange(lo, hi, nil)
		}
		for _, nid := range f.orphanShards {
			lo, hi := format.ShardRange(nid)
			_ = b.DeleteRange(lo, hi, nil)
		}
		for p, want := range f.stored {
			if f.storedCounter[p] != want {
				_ = b.Set(format.PoolStatsKey(p), format.EncodeUvarint(want), nil)
			}
		}
		for p, got := range f.storedCounter {
			if _, ok := f.stored[p]; !ok && got != 0 {
				_ = b.Set(format.PoolStatsKey(p), format.EncodeUvarint(0), nil)
			}
		}
		fixed[ProblemLeaked] = true
		fixed[ProblemBitmapBeyond] = true
		fixed[ProblemOrphanOmap] = true
		fixed[ProblemOrphanUnits] = true
		fixed[ProblemPoolStats] = true
	}
	if b.Empty() {
		return nil
	}
	if err := f.db.Apply(b, pebble.Sync); err != nil {
		return err
	}
	for k := range fixed {
		f.rep.Repaired += f.rep.Counts[k]
	}
	for i := range f.rep.Problems {
		if fixed[f.rep.Problems[i].Kind] {
			f.rep.Problems[i].Repaired = true
		}
	}
	return nil
}
