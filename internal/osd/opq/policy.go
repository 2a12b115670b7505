package opq

// Policy decides when items may start. It sees the classes, their loads
// and the items' costs; never the work itself. It is the extension point
// for quality of service: a scheduler that shares the OSD between the
// classes by reservation, weight and limit (mClock, as Ceph's
// mclock_scheduler does) implements Policy and replaces Today, and the
// queues, the OSD's driver and the classes' costs stay as they are.
//
// The contract a stateful policy relies on:
//
//   - every item starts through Admit: an Admit that reports true
//     starts that item at once (the queue never asks without starting
//     what it is granted), so a policy advances its per-class tags or
//     counts there;
//   - every item that started ends through Done, with the class and
//     cost Admit saw;
//   - several queues (one per PG) share one Policy and call it
//     concurrently, each under its own PG's lock: a policy with state
//     locks it itself, and must never call back into a queue.
//
// An item Admit refuses waits in its queue and is asked again, oldest
// first within its class, whenever an item of that queue ends (Done) or
// the owner asks (Queue.Next). Today refuses only a PG's second scrub
// chunk, which its own Done releases; a policy that refuses for reasons
// outside the queue (another PG's load, a limit per second) needs its
// OSD to call Next on the queues with waiting items when it may admit
// again: see docs/OSD.md, "The op queue".
type Policy interface {
	// Admit reports whether an item of class c and cost may start now,
	// its queue having running of that class started already. True
	// starts the item.
	Admit(c Class, cost int64, running Load) bool
	// Done tells the policy that an item it admitted has ended.
	Done(c Class, cost int64)
	// Yields reports whether items of class c give way to an item of
	// class other on the same key: other, added behind items of c that
	// have not started, goes ahead of them (Queue.Add).
	Yields(c, other Class) bool
}

// Today is the policy the OSD has always had: client and replica work
// unlimited, recovery and snap trims giving way to client ops on the same
// object, one scrub chunk at a time in a PG. Recovery's own limits
// (osd_max_backfills PGs, internal/osd/reserve's; osd_recovery_max_active
// pushes each, a Limiter), the OSD's scrubs (osd_max_scrubs, a Limiter)
// and its trims (osd_pg_max_concurrent_snap_trims per PG, its trimmer's
// window) are taken before items enter a queue, changed at run time by
// the OSD's options. Today keeps no state.
type Today struct{}

// Admit admits every item but a second scrub chunk.
func (Today) Admit(c Class, _ int64, running Load) bool {
	return c != Scrub || running.Items < 1
}

// Done does nothing: Today counts nothing of its own.
func (Today) Done(Class, int64) {}

// Yields makes recovery and snap trims give way to client ops: a write
// pushes its object itself before it applies, so a push that has not
// started waits behind it; a trim decides from the snap set it finds when
// it runs, so it may run after the client's op as well as before.
func (Today) Yields(c, other Class) bool { return (c == Recovery || c == SnapTrim) && other == Client }
