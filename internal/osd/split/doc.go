// Package split is the arithmetic of PG splitting, pure: when a pool's
// pg_num grows, which PGs a PG splits into (its children), which hash bits
// select each child's objects (the object store's SplitCollection), and
// how the parent's log, missing set, statistics and info divide among
// them. Objects map to PGs by Ceph's stable modulo (osdmap.StableMod), so
// growing pg_num only moves an object from its PG to one of that PG's
// children, never between unrelated PGs: a split is local to every OSD
// that holds the parent.
//
// It knows nothing of the store, the network or the OSD's locks; the OSD's
// split.go lists the parent's objects, asks this package what goes where,
// and applies the result in one transaction. Everything here is a plain
// function of its arguments, safe for concurrent use.
//
// Start reading at Plan.
package split
