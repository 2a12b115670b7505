// Package mdtypes defines the file system's metadata as it is stored in
// RADOS (docs/FORMATS.md, "File system namespace"): inodes, primary and
// remote directory entries, a directory fragment's header (its version and
// statistics), fragments and the hash that places a name in one, backtraces
// (an inode's chain of (parent, name) up to the root) and the inode table
// (the free inode numbers of one MDS rank), with their versioned encodings
// and the well-known inode numbers (the root 0x1, each rank's mdsdir and
// stray directories, journals) and object names.
//
// It is pure: values, encodings, validation and the inode table's
// arithmetic. It knows nothing of RADOS, the MDS's cache or its locks;
// internal/mds/mdstore reads and writes these values in objects. Every
// decoder validates what it reads (a time's nanoseconds, a mode's type, a
// name's bytes, a layout's rules) and fails with encoding.ErrCorrupt rather
// than return a value the MDS could not use; every decoder has a fuzz
// test. Values are plain data, not safe for concurrent mutation.
//
// Start with Inode (inode.go), Dentry (dentry.go) and Backtrace.
package mdtypes
