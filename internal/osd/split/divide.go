package split

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Object is one of a parent's objects and its logical size.
type Object struct {
	ID   objid.ID
	Size uint64
}

// Log divides a parent's log entries among the PGs their objects map to
// with pgNum PGs (the parent and its children), keeping their order: a
// request resent after the split finds its entry, and so its answer, in
// the PG that now holds its object, so it is never applied twice.
func Log(entries []pglog.Entry, pgNum uint32) map[uint32][]pglog.Entry {
	out := map[uint32][]pglog.Entry{}
	for _, e := range entries {
		s := Where(e.Object.Hash, pgNum)
		out[s] = append(out[s], e)
	}
	return out
}

// Missing divides a parent's missing set the same way.
func Missing(ids []objid.ID, pgNum uint32) map[uint32][]objid.ID {
	out := map[uint32][]objid.ID{}
	for _, id := range ids {
		s := Where(id.Hash, pgNum)
		out[s] = append(out[s], id)
	}
	return out
}

// Stats counts the objects and bytes each PG holds after the split.
func Stats(objs []Object, pgNum uint32) map[uint32]pglog.Stats {
	out := map[uint32]pglog.Stats{}
	for _, o := range objs {
		s := Where(o.ID.Hash, pgNum)
		out[s] = out[s].Add(false, true, 0, o.Size)
	}
	return out
}

// Info returns the info of PG seed, the parent's or one of its children's,
// after a split at epoch: the parent's history (its log's tail, the last
// epoch it went active, scrub stamps) with the PG's own share of the log,
// whose newest entry (else the tail) is its last update, and its own
// statistics. The split starts a new interval at epoch for every PG it
// touches, parent and children alike.
func Info(parent pglog.Info, seed uint32, entries []pglog.Entry, stats pglog.Stats, epoch uint64) (pglog.Info, error) {
	for i := range entries {
		if i > 0 && !entries[i-1].Version.Less(entries[i].Version) {
			return pglog.Info{}, fmt.Errorf("split: pg %v: log entries out of order at %v", parent.PG, entries[i].Version)
		}
		if !parent.LogTail.Less(entries[i].Version) {
			return pglog.Info{}, fmt.Errorf("split: pg %v: entry %v not after the tail %v", parent.PG, entries[i].Version, parent.LogTail)
		}
	}
	info := parent
	info.PG = osdmap.PG{Pool: parent.PG.Pool, Seed: seed}
	if seed != parent.PG.Seed {
		info.EpochCreated = epoch
	}
	last := parent.LogTail
	if n := len(entries); n > 0 {
		last = entries[n-1].Version
	}
	info.LastUpdate, info.LastComplete = last, last
	info.SameIntervalSince = epoch
	info.Stats = stats
	return info, nil
}
