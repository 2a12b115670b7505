// Package opq is the OSD's op queue: the one place that decides which
// piece of work runs next. Work enters it as items, each with a Class
// (client op, replica sub-op, recovery push, scrub chunk), a Cost (bytes,
// or 1 for an op without data) and an ordering key (the object it
// touches, or a sequence of the PG's own: its rep ops, its scrub
// chunks); a Policy decides when an item may start. Today's policy
// (Today) is the one the OSD always had, made explicit:
//
//   - items on one key run one at a time, in the order they entered
//     (one client's ops on one object apply in order; a replica applies
//     its primary's rep ops in the order they came);
//   - client and replica items are not limited;
//   - recovery yields to client ops: a client op added behind a push of
//     its object that has not started goes ahead of it (the write pushes
//     its object itself first, jumping the recovery queue); a push that
//     runs keeps the object, and the client op waits behind it;
//   - one scrub chunk at a time in a PG.
//
// Reservations taken before items enter have limits that change at run
// time: recovery is limited per OSD to osd_max_backfills PGs at once, as
// primary and as a member pushed to (internal/osd/reserve decides those,
// in priority order), each with osd_recovery_max_active pushes in flight
// (a Limiter), and an OSD runs osd_max_scrubs scrubs at a time (a
// Limiter).
//
// A QoS policy (mClock-like reservations, weights and limits per class)
// replaces Today behind the Policy interface, whose doc comment states
// the contract it may rely on; the costs it needs are carried with every
// item.
//
// Queue orders the items of one PG by key; Limiter counts the slots of a
// shared limit and grants waiters in arrival order. The OSD
// (internal/osd: opqueue.go, and primary.go, replica.go, missing.go,
// scrub.go for each class; internal/osd/slots for the Limiters) is the driver: it
// runs what these hand out, and blocks, wakes and spawns goroutines.
//
// It must not know about the OSD's types, the object store, the
// messenger or the clock, and does no I/O; it is a pure core
// (internal/archtest's pure_test.go).
//
// Concurrency: nothing here locks. A Queue and a Limiter are used by one
// goroutine at a time: their owner serialises calls (a Queue under its
// PG's lock, so that entering it costs a client op no lock of its own).
// A Policy's methods may be called concurrently by several queues.
//
// Start reading at Queue (queue.go), then Today (policy.go).
package opq
