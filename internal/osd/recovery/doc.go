// Package recovery plans the primary's recovery behind client I/O: once
// a PG is active, which object copies each member still lacks, in what
// order the primary pushes them, which pushes are under way, and which
// backfill targets wait because the map marks them backfillfull (Ceph's
// backfill_toofull). A Plan is built per interval from what peering found
// each member lacks, and grows when a member's store refuses a write
// within the interval (AddMissing); the driver asks it for the next object to push and
// its targets (Next), or, for a client write to an object some member
// lacks, claims that object first (Urgent), and tells it what each push
// recovered (Finish).
//
// The OSD's missing.go is the driver: it holds the recovery slots, sends
// the pushes, waits for acknowledgements and wakes the recoverer; it
// also knows which objects client ops or an earlier interval's pushes
// hold, and passes that to Next.
//
// It must not know about the OSD's types, the object store, the
// messenger or the clock, and does no I/O; it is a pure core
// (internal/archtest's pure_test.go). A Plan is not safe for concurrent
// use: the driver calls it under the PG's lock. A nil *Plan has nothing
// to recover.
package recovery
