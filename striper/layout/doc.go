// Package layout is the arithmetic of file layouts, as Ceph's
// file_layout_t and Striper define it: how the bytes of a file (or of a
// journal, or of a block image) are striped over RADOS objects.
//
// A Layout has an object size, a stripe unit and a stripe count. The file
// is cut into stripe units; consecutive units go round-robin to
// StripeCount objects (a stripe), and once each of those objects holds
// ObjectSize bytes the next StripeCount objects (the next object set)
// take over. FileToExtents maps a byte range of the file to the ranges of
// objects it covers; ObjectToFile is the reverse, for reads that assemble
// a file range from object reads; ObjectLen and ObjectCount say how long
// each object is, and how many objects hold data, for a file of a given
// size (truncate and remove). ObjectName names object n of inode ino as
// Ceph does: "<ino hex>.<n as %08x>".
//
// Everything here is pure: no I/O, no locks, no clock. The I/O over a
// RADOS pool is the parent package striper's; a layout's persistent
// encoding is here (Encode, Decode) so that the MDS journal and the
// directory objects carry layouts without importing rados. Start with
// Layout and FileToExtents.
package layout
