// Package merge is the logic of PG merging, pure: when a pool's pg_num
// shrinks, which PG each source merges into (its target: the inverse of a
// split, the same parent relation), and what the merged PG's log, info
// and statistics are on one OSD, given the copies of the source and
// target it held and what the map recorded of them.
//
// The rule that keeps peering honest: a merged copy is current only when
// every copy it was made of had exactly the last update the map recorded
// for it (the monitors record the versions the source's and target's
// primaries reported while both were active+clean and took no writes,
// osdmap's merge.go). A current copy's log holds every entry of the
// target and its sources, renumbered in a fixed order (so every OSD that
// merges the same copies builds the same log), after a tail at the merge
// epoch: resent requests still find their entry and answer, never apply
// twice. Any other copy (a stray's stale source, an OSD that skipped a
// merge step, a copy missing objects) is given last update zero and last
// epoch started zero: older than the merged log's tail, so peering
// backfills it and never takes it as the authority.
//
// It knows nothing of the store, the network or the OSD's locks; the
// OSD's merge.go reads the copies, asks this package, and applies the
// result in one transaction. Everything here is a plain function of its
// arguments, safe for concurrent use.
//
// Start reading at Merge.
package merge
