// Package mdstore keeps a file system's namespace in RADOS, as CephFS does
// and as the Ceph paper describes (docs/FORMATS.md, "File system
// namespace"): each directory fragment is one object in the metadata pool,
// "<ino hex>.<frag hex>", with one omap entry per dentry ("<name>_head")
// and each primary dentry's inode embedded in its value, so one read
// brings a directory and its inodes into the MDS's cache; the fragment's
// header (version and statistics) is the omap header. Hard links are
// remote dentries, and every inode's backtrace (its path as (parent, name)
// pairs) is an xattr on its first object, which LookupIno follows
// (docs/NAMESPACE.md says why Cuttle chose this over the paper's anchor table).
// Each rank's free inode numbers are its inode table object.
//
// Store owns the reading and writing of these objects: Mkfs and CreateRank
// create a file system's first objects, idempotently; ReadFrag reads a
// whole fragment in batches that are one version of it, ReadDentry one
// entry; WriteBack writes a fragment's dirty and removed dentries and its
// header in one atomic operation, and RemoveFrag deletes a fragment, both
// refused (ErrStale) when the object holds a newer write than this MDS's
// (Stamp: the rank's incarnation and the object's version, compared by
// the OSD in the same operation); ReadBaseInode and WriteBaseInode keep
// the root's and the mdsdirs' inodes; LoadInoTable and SaveInoTable
// persist the inode table; SetBacktrace, ReadBacktrace and LookupIno
// write and follow backtraces. Objects whose contents do not decode are
// reported as *DamageError naming the pool, object and key (ErrDamaged),
// which the MDS turns into EIO on that directory; nothing here panics on
// what it reads.
//
// It knows nothing of the MDS's cache, locks, journal or clients: the
// MDS decides what is dirty and when to write it back (after journaling
// it), and what a version is. A Store is safe for concurrent use. Start
// with New and Store.ReadFrag.
package mdstore
