// Package opq is the OSD's op queue: the one place that decides which
// piece of work runs next. Work enters it as items, each with a Class
// (client op, replica sub-op, recovery push, scrub chunk), a Cost (bytes,
// or 1 for an op without data) and an ordering key (the object it
// touches); a Policy decides when an item may start. Today's policy
// (Today) is the one the OSD always had, made explicit:
//
//   - items on one key run one at a time, in the order they entered
//     (one client's ops on one object apply in order);
//   - client and replica items are not limited;
//   - recovery yields to client ops: a push waits while a client op
//     is queued on its object (an object a client writes to is pushed
//     first by the write itself, jumping the recovery queue);
//   - recovery is limited per OSD to osd_max_backfills PGs at once,
//     each with osd_recovery_max_active pushes in flight, both
//     changeable while PGs recover;
//   - one scrub at a time (osd_max_scrubs of 1).
//
// A QoS policy (mClock-like reservations, weights and limits per class)
// replaces Today behind the Policy interface; the costs it needs are
// already carried with every item.
//
// Queue orders the items of one PG by key; Limiter counts the slots of a
// shared limit (recovery's) and grants waiters in arrival order. The
// OSD (internal/osd: primary.go, missing.go, slots.go) is the driver: it
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
