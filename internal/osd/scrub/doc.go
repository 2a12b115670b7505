// Package scrub holds the decisions of scrubbing a placement group, apart
// from the scrubbing itself: given the scrub maps the members of a PG
// sent for a chunk of its objects, which objects are inconsistent, why,
// which members hold the authoritative copy and which bad ones (Chunk,
// Compare, Misplaced); what a repair of one object must pull and push
// (PlanRepair); what a member's scrub map says of a copy (AttrsDigest,
// OmapDigest, DataDigest, so that every member digests alike); and which
// of an OSD's PGs is due a scrub next, light or deep (Next).
//
// The OSD (internal/osd, scrub.go and scrubsched.go) is the driver: it
// lists the chunks, reads its copies, asks the members for their maps
// (ScrubRequest, ScrubMap), notes which objects were written while a
// chunk was compared, hands the maps here, records what comes back in
// the PG's state, pushes and pulls the copies a repair needs, and runs
// one scrub at a time on its own loop.
//
// It must not know about the object store, the messenger, the OSD's PG
// type, the monitors or the clock: reads are the driver's, and the time
// is an argument. It imports wire (the scrub map's objects and versions),
// objid and osdmap (a pool's placement of names).
//
// Concurrency: every function is pure and safe for concurrent use; an
// OmapDigest is used by one goroutine at a time.
//
// Start reading at Chunk (compare.go), then Next (schedule.go).
package scrub
