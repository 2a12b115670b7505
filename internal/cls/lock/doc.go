// Package lock is the lock object class: advisory locks on an object,
// exclusive or shared, held by (entity, cookie) with an optional expiry —
// what rbd's exclusive lock and many applications' leader election build
// on (Ceph's cls_lock). It owns the methods and the encoding of their
// input and output, which clients use to call them:
//
//	lock.lock    Request -> nothing; EBUSY if held incompatibly
//	lock.unlock  Request (name, cookie) -> nothing; ENOENT if not held
//	lock.info    Request (name) -> State
//	lock.break_lock  BreakRequest (name, entity, cookie) -> nothing; ENOENT if not held so
//
// A holder is the calling entity with the request's cookie: locking again
// with the same type renews (a new expiry), and only that holder unlocks
// (but anyone may break a holder's lock, naming it: what a client does to
// a holder it found dead and fenced).
// Expired holders are dropped whenever the lock is read. A lock named N is
// stored in the user attribute "lock.N", so it is replicated, recovered
// and listed like any attribute.
//
// The package knows objclass's contract and nothing of the OSD. Its
// methods keep no state between calls; Register before the registry is
// shared.
package lock
