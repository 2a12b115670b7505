// Package striper reads and writes files striped over RADOS objects, as
// Ceph's Filer and Striper do for CephFS, the MDS journal and (later)
// block images.
//
// The arithmetic (layouts, file ranges to object extents and back, object
// names) is the pure sub-package layout; this package carries it out over
// a rados.IOContext: a striped write, a read that assembles a file range
// from its objects (holes and short objects read as zeros, nothing past
// the file's size), a truncate that cuts the objects beyond the new size,
// and the removal of all the objects of a file. The object operations of
// one call run concurrently, at most Options.MaxInFlight at a time, and a
// call returns when they have all completed (writes: committed on every
// replica).
//
// The striper keeps no state about files: their sizes belong to the
// caller (the MDS's inodes, an image's header), which passes them in.
// A Striper is safe for concurrent use; concurrent writes to overlapping
// ranges of one file are ordered by nothing here (the caller's
// capabilities or locks order them). Start with New and Striper.WriteAt.
package striper
