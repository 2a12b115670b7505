package osd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/osd/peering"
	"github.com/cuttlestore/cuttle/internal/osd/split"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Past intervals need old maps: the acting sets of a PG between the
// last interval that went active and now. The OSD remembers the maps it
// applied and fetches the ones it missed (while down, or from before it
// existed) from the monitors, which keep mon_min_osdmap_epochs of them.

// historyMaps bounds the maps kept in memory; older ones are fetched
// again when needed.
const historyMaps = 256

// errTrimmed means the monitors no longer keep an epoch.
var errTrimmed = errors.New("epoch trimmed by the monitors")

// mapHistory holds recent maps by epoch.
type mapHistory struct {
	mu    sync.Mutex
	maps  map[uint64]*osdmap.Map
	fetch func(ctx context.Context, epoch uint64) (*osdmap.Map, error)
}

func newMapHistory(fetch func(context.Context, uint64) (*osdmap.Map, error)) *mapHistory {
	return &mapHistory{maps: map[uint64]*osdmap.Map{}, fetch: fetch}
}

// add remembers m, forgetting the oldest map beyond the bound.
func (h *mapHistory) add(m *osdmap.Map) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.maps[uint64(m.Epoch())] = m
	for len(h.maps) > historyMaps {
		delete(h.maps, slices.Min(slices.Collect(maps.Keys(h.maps))))
	}
}

// get returns the map of epoch, fetching it if it is not held.
func (h *mapHistory) get(ctx context.Context, epoch uint64) (*osdmap.Map, error) {
	h.mu.Lock()
	m := h.maps[epoch]
	h.mu.Unlock()
	if m != nil {
		return m, nil
	}
	m, err := h.fetch(ctx, epoch)
	if err != nil {
		return nil, err
	}
	h.add(m)
	return m, nil
}

// firstAvailable returns the oldest epoch in [lo, hi] the monitors still
// keep (hi is known to be kept), by bisection.
func (h *mapHistory) firstAvailable(ctx context.Context, lo, hi uint64) (uint64, error) {
	for lo < hi {
		mid := lo + (hi-lo)/2
		_, err := h.get(ctx, mid)
		switch {
		case errors.Is(err, errTrimmed):
			lo = mid + 1
		case err != nil:
			return 0, err
		default:
			hi = mid
		}
	}
	return lo, nil
}

// fetchMap asks the monitors for the full map of epoch.
func (o *OSD) fetchMap(ctx context.Context, epoch uint64) (*osdmap.Map, error) {
	cmd := wire.NewCommand("osd getmap")
	cmd.Args["epoch"] = strconv.FormatUint(epoch, 10)
	r, err := o.mon.Run(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("fetch map %d: %w", epoch, err)
	}
	if r.Code == wire.ENOENT {
		return nil, fmt.Errorf("map %d: %w", epoch, errTrimmed)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("fetch map %d: %w", epoch, err)
	}
	m, err := osdmap.UnmarshalMap(r.Data)
	if err != nil {
		return nil, fmt.Errorf("fetch map %d: %w", epoch, err)
	}
	if uint64(m.Epoch()) != epoch {
		return nil, fmt.Errorf("fetch map %d: the monitors sent epoch %d", epoch, m.Epoch())
	}
	return m, nil
}

// pastIntervals returns the PG's intervals from epoch since up to (not
// including) epoch until. Epochs the monitors have trimmed are skipped
// with a warning: what happened in them cannot be known any more.
func (o *OSD) pastIntervals(ctx context.Context, id osdmap.PG, since, until uint64) ([]peering.Interval, error) {
	since = max(since, 1)
	if since >= until {
		return nil, nil
	}
	firstKnown := true
	if _, err := o.history.get(ctx, since); errors.Is(err, errTrimmed) {
		first, err := o.history.firstAvailable(ctx, since, until)
		if err != nil {
			return nil, err
		}
		o.log.Warn("past intervals: the monitors trimmed old maps; peering without them", "pg", id.String(),
			"from", since, "to", first-1)
		since, firstKnown = first, false
	} else if err != nil {
		return nil, err
	}
	var s osdmap.Scratch
	ps := make([]peering.Placement, 0, until-since)
	for e := since; e < until; e++ {
		m, err := o.history.get(ctx, e)
		if err != nil {
			return nil, err
		}
		ps = append(ps, placementAt(m, id, &s))
	}
	return peering.BuildIntervals(ps, firstKnown), nil
}

// maxLookBack bounds the epochs intervalStart examines.
const maxLookBack = 500

// intervalStart returns the epoch at which the PG's placement in m began.
// Every OSD of an interval must agree on it, since peering messages name
// the interval by it. When the PG has seen the epoch before m's, a change
// in m starts the interval at m's epoch; but an OSD that skipped epochs
// (it was down, or caught up with a full map) looks back through the
// maps it missed for the first epoch with the same placement.
func (o *OSD) intervalStart(p *pg, m *osdmap.Map, ok bool) uint64 {
	epoch := uint64(m.Epoch())
	p.mu.Lock()
	seen := p.epoch
	p.mu.Unlock()
	if !ok || seen+1 >= epoch {
		return epoch
	}
	var s osdmap.Scratch
	cur := placementAt(m, p.id, &s)
	start := epoch
	for e := epoch - 1; e > seen && e >= 1 && epoch-e <= maxLookBack; e-- {
		ctx, cancel := context.WithTimeout(o.ctx, 10*time.Second)
		hm, err := o.history.get(ctx, e)
		cancel()
		if err != nil {
			o.log.Warn("cannot tell when a PG's interval began; taking the current epoch", "pg", p.id.String(), "epoch", e, "err", err)
			break
		}
		pl := placementAt(hm, p.id, &s)
		if !pl.Exists || pl.Primary != cur.Primary || !slices.Equal(pl.Acting, cur.Acting) || !slices.Equal(pl.UpFrom, cur.UpFrom) ||
			pl.PGNum != cur.PGNum || pl.HoldsWrites != cur.HoldsWrites {
			break
		}
		start = e
	}
	return start
}

// placementAt returns where PG id was in map m. Before a split made it,
// a PG's objects were its parent's: its placement is its parent's then
// (Ceph's children inherit their parent's past intervals).
func placementAt(m *osdmap.Map, id osdmap.PG, s *osdmap.Scratch) peering.Placement {
	pl := peering.Placement{Epoch: uint64(m.Epoch()), Primary: -1}
	pool := m.Pool(id.Pool)
	if pool == nil {
		return pl
	}
	id.Seed = split.Parent(id.Seed, pool.PGNum)
	pl.PGNum = pool.PGNum
	pl.HoldsWrites = pool.MergeParticipant(id.Seed)
	mp, err := m.PGToUpActing(id, s)
	if err != nil {
		return pl
	}
	pl.Exists, pl.MinSize, pl.AckPrimary = true, pool.MinSize, pool.Ack == osdmap.AckPrimary
	pl.Acting, pl.Primary = slices.Clone(mp.Acting), mp.ActingPrimary
	if mp.ActingPrimary >= 0 {
		po := m.OSD(mp.ActingPrimary)
		pl.PrimaryUpThru, pl.PrimaryUpFrom = uint64(po.UpThru), uint64(po.UpFrom)
	}
	pl.UpFrom = make([]uint32, len(mp.Acting))
	for i, x := range mp.Acting {
		if x >= 0 {
			pl.UpFrom[i] = uint32(m.OSD(x).UpFrom)
		}
	}
	return pl
}
