// Package peering decides how the OSDs of a placement group agree on one
// history after its acting set changes: which member's log is
// authoritative, which objects each member must fetch to match it, and
// which members lack so much that only a full copy (backfill) will do;
// and it runs the protocol that gathers what it decides on.
//
// Two parts, both pure. The planning: PriorSet says whom to ask and which
// past intervals nobody up can vouch for, Plan picks the authority from
// every member's report, TempActing the temporary acting set a primary
// that must be backfilled asks for. The protocol: Machine, one interval's
// peering on its primary as a state machine (machine.go, where to start
// reading; complete.go holds its states that complete the primary's own
// copy): events in (the start of an interval, answers to queries, pulls
// and activations, an operator's mark_unfound_lost, timers, the answers
// to its own requests), actions out (messages to send, the map and the
// store to read, pushed objects and the adopted log to write, timers to
// arm, the PG to mark down, incomplete, active or waiting for pg_temp).
// The OSD (internal/osd, peerdriver.go) is the driver that carries the
// actions out and feeds the events back; tests drive the machine with
// sequences of events and compare the actions (machine_test.go, complete_test.go,
// revert_test.go).
//
// Acknowledged writes survive because a write is acknowledged only once
// every member of its interval's acting set has committed it, so some
// surviving member of any later acting set holds it, and the member with
// the newest last_update holds every write that any member holds, in
// order.
//
// It knows nothing of messages' encoding, the messenger, the object
// store, the monitors or the clock: the driver translates. It imports
// pglog (the log and info it plans over), wire (versions), objid and
// osdmap (snapshot id sets).
//
// Concurrency: the functions are pure; a Machine is stepped by one
// goroutine at a time.
package peering

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Member is what one OSD reports about the PG: its info, its log
// (oldest entry first), and the objects it has yet to receive to match
// its log (recovery was interrupted).
type Member struct {
	OSD     int32
	Info    pglog.Info
	Log     []pglog.Entry
	Missing []objid.ID
}

// Result is what peering decided.
type Result struct {
	// Auth is the member whose history every other member adopts.
	Auth int32
	// Log and Info are the authoritative log and info.
	Log  []pglog.Entry
	Info pglog.Info
	// Missing lists, for each member that differs from the authority
	// within the authoritative log's span, the objects it must make
	// equal to the authority's copy (fetch it, or delete its own if the
	// authority has none), in object order. It includes what each
	// member, the authority too, reported missing itself.
	Missing map[int32][]objid.ID
	// Backfill lists the members whose history ends before the
	// authoritative log begins: they need every object.
	Backfill []int32
}

// ErrNoMembers means there is no member to peer with.
var ErrNoMembers = errors.New("peering: no members")

// Plan chooses the authoritative member and works out what every member
// lacks. The authority is the member that went active most recently (the
// newest last_epoch_started: that activation gathered every write
// acknowledged before it), and among those the newest last_update; ties
// go to the earliest in members, where the primary comes first. A member
// with newer entries from an older interval holds writes that were never
// acknowledged (they reached too few OSDs): they are divergent and rolled
// back, as Ceph's find_best_info does.
func Plan(members []Member) (Result, error) {
	if len(members) == 0 {
		return Result{}, ErrNoMembers
	}
	for _, m := range members {
		if err := checkLog(m); err != nil {
			return Result{}, err
		}
	}
	auth := members[0]
	for _, m := range members[1:] {
		a, b := auth.Info, m.Info
		if a.LastEpochStarted < b.LastEpochStarted || a.LastEpochStarted == b.LastEpochStarted && a.LastUpdate.Less(b.LastUpdate) {
			auth = m
		}
	}
	res := Result{Auth: auth.OSD, Log: auth.Log, Info: auth.Info, Missing: map[int32][]objid.ID{}}
	res.Info.PurgedSnaps = purgedSnaps(auth, members)
	authByVersion := make(map[wire.Version]pglog.Entry, len(auth.Log))
	for _, e := range auth.Log {
		authByVersion[e.Version] = e
	}
	for _, m := range members {
		switch {
		case m.OSD == auth.OSD:
			if len(m.Missing) > 0 {
				res.Missing[m.OSD] = slices.SortedFunc(slices.Values(m.Missing), objid.Compare)
			}
		case m.Info.LastUpdate.Less(auth.Info.LogTail):
			res.Backfill = append(res.Backfill, m.OSD)
		default:
			if missing := missingFor(m, auth, authByVersion); len(missing) > 0 {
				res.Missing[m.OSD] = missing
			}
		}
	}
	return res, nil
}

// purgedSnaps returns the removed snapshots the PG may count as trimmed
// after peering (its info's purged_snaps): those that the authority and
// every other member with a history have recorded as trimmed, the
// intersection.
//
// Why the intersection is safe: a primary records a snapshot as purged
// only after every trim it needed has committed on every member of its
// acting set, so a member that recorded it (as that primary, or from a
// rep op or an activation that carried the record after those trims'
// log entries) holds the trims in its own history. After peering every
// member's objects become the authority's, so what counts is that the
// authority's history has the trims; the authority's own record says so,
// and requiring every member's too only trims more (a snapshot one of
// them has not recorded is trimmed again, which finds nothing to do or
// finishes what it left). A union would trust a member whose record came
// from a history peering did not choose. A member with no history (a new
// copy, LastUpdate zero) holds no objects and is left out: it takes all
// of the authority's. Ceph's primary takes the authoritative info's
// purged_snaps the same way (merge_log) and trims the pool's removed
// snaps less them.
func purgedSnaps(auth Member, members []Member) osdmap.SnapIntervals {
	out := auth.Info.PurgedSnaps
	for _, m := range members {
		if m.OSD != auth.OSD && m.Info.LastUpdate != (wire.Version{}) {
			out = out.Intersect(m.Info.PurgedSnaps)
		}
	}
	return out
}

// missingFor returns the objects m must take from auth: those written
// by auth's entries newer than m's last update, those of m's own
// entries that auth does not have (divergent writes, to be undone), and
// those m reported missing.
func missingFor(m, auth Member, authByVersion map[wire.Version]pglog.Entry) []objid.ID {
	set := map[objid.ID]bool{}
	for _, id := range m.Missing {
		set[id] = true
	}
	for _, e := range auth.Log {
		if m.Info.LastUpdate.Less(e.Version) {
			set[e.Object] = true
		}
	}
	for _, e := range m.Log {
		if a, ok := authByVersion[e.Version]; ok && a.Object == e.Object && a.Kind == e.Kind && a.Req == e.Req {
			continue
		}
		if !auth.Info.LogTail.Less(e.Version) {
			// Older than the authority's log: it cannot tell; the
			// entry is part of the shared history the logs no longer
			// cover.
			continue
		}
		set[e.Object] = true
	}
	return slices.SortedFunc(maps.Keys(set), objid.Compare)
}

// checkLog refuses a member whose log is out of order or whose info
// disagrees with its log: peering on it would copy garbage.
func checkLog(m Member) error {
	prev := m.Info.LogTail
	for i, e := range m.Log {
		if !prev.Less(e.Version) {
			return fmt.Errorf("peering: osd.%d log entry %d (%v) not after %v", m.OSD, i, e.Version, prev)
		}
		prev = e.Version
	}
	if len(m.Log) > 0 && prev != m.Info.LastUpdate {
		return fmt.Errorf("peering: osd.%d log head %v is not its last update %v", m.OSD, prev, m.Info.LastUpdate)
	}
	return nil
}
