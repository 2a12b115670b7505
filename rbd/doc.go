// Package rbd stores block images in RADOS, as Ceph's librbd does with its
// format 2: an image is a run of bytes of a fixed size, striped over data
// objects, with a header object that says how (size, object size, stripe
// unit and count, data pool, features) and keeps its snapshots.
//
// The objects of an image with id <id>, in its pool (docs/RBD.md,
// docs/FORMATS.md "Block images"):
//
//	rbd_directory               the pool's names and ids (omap name_<name>, id_<id>)
//	rbd_id.<name>               the image's id
//	rbd_header.<id>             the header (omap keys size, order, ..., snapshot_<id>)
//	rbd_data.<id>.<no %016x>    data object no, in the data pool
//	rbd_object_map.<id>[.<snap>] which data objects exist (objectmap.go)
//
// The header is changed only through the rbd object class
// (internal/cls/rbd), so that each change is one atomic update on the
// OSD. Data objects are read and written through the striper; an object
// never written reads as zeros, and no object exists for a range never
// written (or discarded whole).
//
// Snapshots are RADOS self-managed snapshots of the data pool: SnapCreate
// allocates an id from the monitors and records it in the header, and
// every later write carries the image's snap context, so the OSDs keep
// the data as it was for reads at the snapshot (Open with
// OpenOptions.Snap) and for SnapRollback.
//
// Clones (clone.go, flatten.go) are images whose header names a parent,
// a protected snapshot of another image: where a clone has no data
// object, it reads the parent's bytes (within its overlap); its first
// write to an object copies the parent's bytes of it up in the same
// rados operation. Flatten copies up the rest and detaches it.
//
// Start with NewPool, Pool.Create and Pool.Open, then Image.ReadAt and
// Image.WriteAt. A Pool and an Image are safe for concurrent use: I/O
// runs concurrently (each call at most Options.MaxInFlight object
// operations at once), and operations that change the image's size or
// snapshots wait for the I/O in progress and hold off new I/O until they
// are done. Two Images open on one image (in one process or two) are
// kept apart by the exclusive lock (exlock.go, docs/RBD.md): a writer
// takes a lock on the header before its first change and gives it up
// when another asks through a notify; a dead holder is fenced (its
// instance blocklisted in the OSD map) before its lock is broken. Header
// changes are notified to every opener, which refreshes before its next
// call. Close an Image when done.
//
// ReadAsync, WriteAsync, DiscardAsync and FlushAsync (aio.go) are the
// same calls returning a Completion at once, with librbd's ordering
// rules. OpenOptions.Cache turns on a client-side write-back cache
// (cache.go), off by default, written back by Flush, Close, snapshots,
// resizes and before the exclusive lock is handed over.
package rbd
