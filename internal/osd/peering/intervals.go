package peering

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// Interval is a stretch of map epochs during which a PG kept one acting
// set and primary (a past interval, in Ceph's terms).
type Interval struct {
	First, Last uint64
	Acting      []int32
	Primary     int32
	// Acted is set when enough OSDs acted (min_size, with a primary)
	// for the PG to go active in the interval. MaybeWentRW adds that the
	// primary may have gone active: the monitors recorded its up_thru at
	// or after the interval's first epoch (a primary asks for that, and
	// waits for the map that records it, before it activates), as Ceph's
	// maybe_went_rw. Only then may a write acknowledged in the interval
	// exist on its OSDs alone.
	Acted       bool
	MaybeWentRW bool
	// AckPrimary is set when the pool was in ack primary mode in some
	// epoch of the interval: its primary may have acknowledged writes
	// no other OSD holds, so its other members cannot vouch for it.
	AckPrimary bool
}

func (iv Interval) String() string {
	return fmt.Sprintf("[%d,%d] acting %v primary %d", iv.First, iv.Last, iv.Acting, iv.Primary)
}

// Skipped lists the intervals since epoch since in which enough OSDs
// acted but that never went read-write (their primary's up_thru never
// reached them): peering asks none of their OSDs and waits for none.
func Skipped(past []Interval, since uint64) []Interval {
	var out []Interval
	for _, iv := range past {
		if iv.Last >= since && iv.Acted && !iv.MaybeWentRW {
			out = append(out, iv)
		}
	}
	return out
}

// Prior is what a primary must learn from the past before it may serve:
// whom to ask, and which intervals nobody can vouch for.
type Prior struct {
	// Probe lists the up OSDs of intervals that may have gone read-write;
	// every one must report its info and log.
	Probe []int32
	// Down lists the read-write intervals none of whose OSDs is up, and
	// those in ack primary mode whose primary is not up: a write may
	// have been acknowledged there that no reachable OSD holds, so the
	// PG must stay down until one of them (the primary, in ack primary
	// mode) returns.
	Down []Interval
	// BlockedBy lists the down OSDs whose return would end Down.
	BlockedBy []int32
}

// PriorSet works out whom to probe for past intervals since epoch since
// (intervals that ended before it are covered: some member of the
// interval that went active at since holds every write acknowledged
// before it). isUp reports whether an OSD is up now.
//
// An interval in ack primary mode needs its primary: the writes it
// acknowledged on its own commit may be on no other OSD, and none of
// the others can tell which (the primary tells nobody what it answered
// before it answers). Its log is the authority once it is back (it has
// the newest last_update of the interval); an OSD back under the same
// id with an empty store (its disk replaced) answers with no history,
// and the other members' logs decide, losing what only the old disk
// held (docs/OSD.md, "Acknowledging on the primary").
//
// lost (nil: none is) reports whether an operator declared an OSD lost
// after an interval's first epoch (`osd lost`, Ceph's lost_at): peering
// does not wait for it there, giving up what only it held.
func PriorSet(past []Interval, since uint64, isUp func(int32) bool, lost func(id int32, first uint64) bool) Prior {
	var pr Prior
	isLost := func(id int32, first uint64) bool { return lost != nil && lost(id, first) }
	for _, iv := range past {
		if iv.Last < since || !iv.MaybeWentRW {
			continue
		}
		anyUp := false
		var waitFor []int32
		for _, id := range iv.Acting {
			switch {
			case id < 0:
			case isUp(id):
				anyUp = true
				if !slices.Contains(pr.Probe, id) {
					pr.Probe = append(pr.Probe, id)
				}
			case !isLost(id, iv.First):
				waitFor = append(waitFor, id)
			}
		}
		switch {
		case !anyUp && len(waitFor) > 0:
			pr.Down = append(pr.Down, iv)
			for _, id := range waitFor {
				if !slices.Contains(pr.BlockedBy, id) {
					pr.BlockedBy = append(pr.BlockedBy, id)
				}
			}
		case !anyUp:
			// Every member was declared lost: nothing to wait for.
		case iv.AckPrimary && iv.Primary >= 0 && !isUp(iv.Primary) && !isLost(iv.Primary, iv.First):
			pr.Down = append(pr.Down, iv)
			if !slices.Contains(pr.BlockedBy, iv.Primary) {
				pr.BlockedBy = append(pr.BlockedBy, iv.Primary)
			}
		}
	}
	slices.Sort(pr.Probe)
	slices.Sort(pr.BlockedBy)
	return pr
}

// Reason says why a PG is down, for operators.
func (pr Prior) Reason() string {
	if len(pr.Down) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("no OSD of a past interval that may have accepted writes is up: ")
	for i, iv := range pr.Down {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(iv.String())
		if iv.AckPrimary {
			fmt.Fprintf(&b, " in ack primary mode, whose primary osd.%d alone may hold writes it acknowledged", iv.Primary)
		}
	}
	fmt.Fprintf(&b, " (waiting for one of osd %v)", pr.BlockedBy)
	return b.String()
}

// MaxStarted returns the newest last_epoch_started among members: the
// newest interval known to have gone active, whose members all hold
// every write acknowledged before it.
func MaxStarted(members []Member) uint64 {
	var les uint64
	for _, m := range members {
		les = max(les, m.Info.LastEpochStarted)
	}
	return les
}

// Placement is where a PG was in one map epoch.
type Placement struct {
	Epoch   uint64
	Acting  []int32
	Primary int32    // -1: none
	UpFrom  []uint32 // the acting OSDs' up_from epochs
	// PrimaryUpThru and PrimaryUpFrom are the primary's up_thru and
	// up_from in this epoch's map.
	PrimaryUpThru, PrimaryUpFrom uint64
	MinSize                      int
	// PGNum is the pool's pg_num: a change splits (or merges) PGs, which
	// starts a new interval even where the acting set stays.
	PGNum uint32
	// HoldsWrites is set while a merge the PG takes part in is pending
	// (osdmap's Pool.MergeParticipant): its start and its end each start
	// a new interval.
	HoldsWrites bool
	// Exists is false in epochs before the pool existed (or after it was
	// deleted): no interval.
	Exists bool
	// AckPrimary is set while the pool is in ack primary mode.
	AckPrimary bool
}

// BuildIntervals groups consecutive placements, oldest first, into
// intervals: a new one starts whenever the acting set, the primary, the
// pool's pg_num, whether a pending merge holds the PG's writes, or an
// acting OSD's up_from changes (an OSD that restarted
// lost what it had not committed), as the OSD starts a new interval on
// the same changes.
// An interval is in ack primary mode if the pool was in any of its epochs
// (a mode change does not start an interval).
// An interval may have gone read-write if enough OSDs acted and, in its
// last map, its primary's up_thru reaches the interval's first epoch
// (and the primary was up since then).
//
// With firstKnown false, the first placement may lie inside an interval
// that began earlier (the maps before it are gone): that interval's
// first epoch is unknown, so up_thru cannot tell, and it counts as
// possibly read-write whenever enough OSDs acted.
func BuildIntervals(ps []Placement, firstKnown bool) []Interval {
	var out []Interval
	var prev *Placement
	for i := range ps {
		p := &ps[i]
		if !p.Exists {
			prev = nil
			continue
		}
		same := prev != nil && prev.Epoch+1 == p.Epoch && slices.Equal(prev.Acting, p.Acting) &&
			prev.Primary == p.Primary && slices.Equal(prev.UpFrom, p.UpFrom) && prev.PGNum == p.PGNum &&
			prev.HoldsWrites == p.HoldsWrites
		if !same {
			out = append(out, Interval{First: p.Epoch, Acting: slices.Clone(p.Acting), Primary: p.Primary})
		}
		iv := &out[len(out)-1]
		iv.Last = p.Epoch
		iv.Acted = iv.Acted || acted(p)
		iv.AckPrimary = iv.AckPrimary || p.AckPrimary
		truncated := !firstKnown && len(out) == 1 && iv.First == ps[0].Epoch
		iv.MaybeWentRW = iv.Acted && (truncated || p.PrimaryUpThru >= iv.First && p.PrimaryUpFrom <= iv.First)
		prev = p
	}
	return out
}

// acted reports whether enough OSDs act in p for the PG to go active.
func acted(p *Placement) bool {
	n := 0
	for _, id := range p.Acting {
		if id >= 0 {
			n++
		}
	}
	return p.Primary >= 0 && n > 0 && n >= max(p.MinSize, 1)
}

// TempActing is the temporary acting set (pg_temp) to ask for when the
// primary, self, must be backfilled: the authority, the complete members
// (the replicas first, then the OSDs of past intervals that hold a
// history and are up, until the pool's size is reached), then the
// members to backfill.
func TempActing(plan Result, members []Member, replicas []int32, self int32, size int, up func(int32) bool) []int32 {
	complete := func(x int32) bool { return !slices.Contains(plan.Backfill, x) }
	temp := []int32{plan.Auth}
	for _, x := range replicas {
		if complete(x) && !slices.Contains(temp, x) {
			temp = append(temp, x)
		}
	}
	for _, mem := range members {
		x := mem.OSD
		if len(temp) >= size {
			break
		}
		if x != self && complete(x) && up(x) && mem.Info.LastUpdate != (wire.Version{}) && !slices.Contains(temp, x) {
			temp = append(temp, x)
		}
	}
	for _, x := range append([]int32{self}, replicas...) {
		if !complete(x) && !slices.Contains(temp, x) {
			temp = append(temp, x)
		}
	}
	return temp
}
