// Package reserve decides recovery's reservations, as Ceph's
// AsyncReserver and its local and remote reservations do: before a PG
// recovers or backfills, its primary takes one of its own OSD's slots
// (osd_max_backfills, the local reservation) and then, one member at a
// time in OSD order, a slot on every member it will push to (the same
// option on that member: the remote reservation), so that however many
// primaries recover at once, no OSD receives more than its
// osd_max_backfills PGs' pushes.
//
// A Reserver is one OSD's set of slots: requests wait in priority order
// (higher first, then arrival), are granted while fewer than the limit
// are held, and are cancelled or released. Remote is a member's side of
// the protocol: requests named by PG and interval from the PG's primary,
// grants to send back, releases, and the pruning of reservations whose
// interval ended (a primary that died, or moved) when a new map
// arrives. Priority gives Ceph's order of urgency: log recovery before
// backfill, a degraded backfill before a misplaced one, an undersized PG
// before a whole one.
//
// The OSD drives it (internal/osd's reservations.go: the local reserver
// around the recoverer in missing.go, the remote one behind the wire's
// PGReserve messages). It must not know about the OSD's types, the
// messenger, the store or the clock, and does no I/O; it is a pure core
// (internal/archtest's pure_test.go). Nothing here is safe for
// concurrent use: the driver calls it under its own lock.
//
// Not done (Ceph does): preemption of a granted low-priority
// reservation by a higher-priority request, and a member refusing a
// backfill because it is too full (here the recovery plan skips
// backfillfull members instead, backfill_toofull).
package reserve
