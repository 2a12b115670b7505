package merge

import (
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/osd/split"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Target returns the PG a source PG merges into when pg_num shrinks to
// pgNum: the PG that held its objects with pgNum PGs (split's parent).
func Target(source, pgNum uint32) uint32 { return split.Parent(source, pgNum) }

// Sources returns the PGs that merge into target when pg_num shrinks
// from from to to, in seed order (the children it would split into when
// growing back: split.Children).
func Sources(target, from, to uint32) []uint32 { return split.Children(target, to, from) }

// Copy is one OSD's copy of a PG before a merge: the pg_num its
// collection is laid out for, its info, its log's entries and how many
// objects it knows it is missing.
type Copy struct {
	Layout  uint32
	Info    pglog.Info
	Entries []pglog.Entry
	Missing int
}

// complete reports whether c holds every write up to its last update.
func (c *Copy) complete() bool {
	return c.Missing == 0 && c.Info.LastComplete == c.Info.LastUpdate
}

// Result is the merged PG on one OSD.
type Result struct {
	Info    pglog.Info
	Entries []pglog.Entry
	// Current is false when the copies were not the recorded ones: the
	// merged copy then has last update zero and is backfilled. Why says
	// why.
	Current bool
	Why     string
}

// Merge merges, at epoch (the map whose smaller pg_num starts the merge),
// the copies an OSD holds of PG target (nil if it holds none) and of its
// sources (by seed; absent when it holds none), for pool as that map has
// it. It fails only on arguments that cannot come from a real merge: a
// target not below pg_num, a source that does not merge into it, no copy
// at all, or a log out of order.
func Merge(pool *osdmap.Pool, target uint32, tgt *Copy, sources map[uint32]*Copy, epoch uint64) (Result, error) {
	if target >= pool.PGNum {
		return Result{}, fmt.Errorf("merge: pg %d.%x is not below pg_num %d", pool.ID, target, pool.PGNum)
	}
	from := pool.PGNum
	for s, c := range sources {
		if s < pool.PGNum || Target(s, pool.PGNum) != target {
			return Result{}, fmt.Errorf("merge: pg %d.%x does not merge into %d.%x with pg_num %d", pool.ID, s, pool.ID, target, pool.PGNum)
		}
		from = max(from, c.Layout)
	}
	if tgt != nil {
		from = max(from, tgt.Layout)
	}
	seeds := make([]uint32, 0, len(sources))
	for s := range sources {
		seeds = append(seeds, s)
	}
	slices.Sort(seeds)
	copies := make([]*Copy, 0, len(seeds)+1)
	if tgt != nil {
		copies = append(copies, tgt)
	}
	for _, s := range seeds {
		copies = append(copies, sources[s])
	}
	if len(copies) == 0 {
		return Result{}, fmt.Errorf("merge: no copy of pg %d.%x or its sources", pool.ID, target)
	}
	for _, c := range copies {
		if err := checkLog(c); err != nil {
			return Result{}, err
		}
	}
	info := mergedInfo(pool, target, copies, epoch)
	why := stale(pool, target, tgt, sources, from)
	if why != "" {
		// Not current: older than any current copy's log and activation,
		// so peering backfills it and never makes it the authority.
		info.LastUpdate, info.LastComplete, info.LogTail = wire.Version{}, wire.Version{}, wire.Version{}
		info.LastEpochStarted = 0
		return Result{Info: info, Why: why}, nil
	}
	// Current: every entry, renumbered after a tail at the merge epoch,
	// the target's first, then each source's in seed order.
	var entries []pglog.Entry
	for _, c := range copies {
		for _, e := range c.Entries {
			e.Version = wire.Version{Epoch: epoch, Counter: uint64(len(entries) + 1)}
			entries = append(entries, e)
		}
	}
	info.LogTail = wire.Version{Epoch: epoch}
	info.LastUpdate = info.LogTail
	if n := len(entries); n > 0 {
		info.LastUpdate = entries[n-1].Version
	}
	info.LastComplete = info.LastUpdate
	return Result{Info: info, Entries: entries, Current: true}, nil
}

// mergedInfo is the merged PG's info, its versions aside: the target's
// identity, the newest activation of its copies, the summed statistics
// and the older scrub stamps (the merged PG is as unscrubbed as its least
// scrubbed part), the snapshots every part has purged (a snapshot one part
// has not trimmed still has clones there), in a new interval at epoch.
func mergedInfo(pool *osdmap.Pool, target uint32, copies []*Copy, epoch uint64) pglog.Info {
	info := copies[0].Info
	info.PG = osdmap.PG{Pool: pool.ID, Seed: target}
	if info.PG != copies[0].Info.PG { // the OSD held no copy of the target
		info.EpochCreated = epoch
	}
	info.Stats = pglog.Stats{}
	for _, c := range copies {
		info.LastEpochStarted = max(info.LastEpochStarted, c.Info.LastEpochStarted)
		info.Stats.Objects += c.Info.Stats.Objects
		info.Stats.Bytes += c.Info.Stats.Bytes
		info.LastScrub = min(info.LastScrub, c.Info.LastScrub)
		info.LastDeepScrub = min(info.LastDeepScrub, c.Info.LastDeepScrub)
		info.PurgedSnaps = info.PurgedSnaps.Intersect(c.Info.PurgedSnaps)
	}
	info.SameIntervalSince = epoch
	return info
}

// stale says why the copies are not the ones the map recorded ("" when
// they are): the merge must be the pool's last step, from the pg_num
// every copy is laid out for, and every copy (an absent one counts as
// empty) complete at exactly its recorded last update.
func stale(pool *osdmap.Pool, target uint32, tgt *Copy, sources map[uint32]*Copy, from uint32) string {
	last := pool.LastMerge
	if last.From == 0 || from != last.From {
		return fmt.Sprintf("the copies are laid out for pg_num %d, the last merge was from %d", from, last.From)
	}
	srcs := Sources(target, last.From, pool.PGNum)
	if len(srcs) == 0 {
		return ""
	}
	version := func(c *Copy) (osdmap.PGVersion, bool) {
		if c == nil {
			return osdmap.PGVersion{}, true
		}
		if c.Layout != last.From {
			return osdmap.PGVersion{}, false
		}
		return osdmap.PGVersion{Epoch: c.Info.LastUpdate.Epoch, Counter: c.Info.LastUpdate.Counter}, c.complete()
	}
	for _, s := range srcs {
		rec, ok := pool.MergedVersions(s)
		if !ok {
			return fmt.Sprintf("the map recorded no versions for source %d.%x", pool.ID, s)
		}
		if v, ok := version(sources[s]); !ok || v != rec.SourceVersion {
			return fmt.Sprintf("source %d.%x is at %v (complete %v), the map recorded %v", pool.ID, s, v, ok, rec.SourceVersion)
		}
		if v, ok := version(tgt); !ok || v != rec.TargetVersion {
			return fmt.Sprintf("target %d.%x is at %v (complete %v), the map recorded %v", pool.ID, target, v, ok, rec.TargetVersion)
		}
	}
	return ""
}

// checkLog refuses a copy whose log is out of order or ahead of its info.
func checkLog(c *Copy) error {
	prev := c.Info.LogTail
	for _, e := range c.Entries {
		if !prev.Less(e.Version) {
			return fmt.Errorf("merge: pg %v: log entry %v not after %v", c.Info.PG, e.Version, prev)
		}
		prev = e.Version
	}
	if c.Info.LastUpdate.Less(prev) {
		return fmt.Errorf("merge: pg %v: log head %v beyond its last update %v", c.Info.PG, prev, c.Info.LastUpdate)
	}
	return nil
}
