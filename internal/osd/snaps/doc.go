// Package snaps is the arithmetic of object snapshots, pure: snap
// contexts (which snapshots a write must preserve) and their checks,
// snap sets (the clones of one object, the snapshots each covers, their
// sizes and what they share with the next newer version), the decisions
// a write, a read at a snapshot, a rollback and a trim make from them, the
// snap set's encoding, and the snap index (Ceph's SnapMapper: the keys
// that map each snapshot to the clones serving it, and the changes a snap
// set's change makes to them; index.go). docs/SNAPSHOTS.md describes the model, which
// is Ceph's (SnapContext, SnapSet, make_writeable, find_object_context).
//
// Start with SnapSet: MakeWriteable says which clone a write must make
// first, Resolve which version a read at a snapshot reads, Rollback what
// a rollback copies, Trim which clones no live snapshot needs. Context
// and ForWrite check and choose the snap context a write runs under.
//
// It must not know about the OSD's types, the object store, the
// messenger or the clock, and does no I/O; it is a pure core
// (internal/archtest's pure_test.go): the OSD reads and writes the snap
// set attribute and the clone objects and carries out what these
// functions decide. Values are not changed in place: every method returns
// a new SnapSet, so callers may keep the old one.
package snaps
