// Package alloc is the space allocator of blockstore: it decides which byte
// ranges of the data device hold new data and takes them back when data is
// deleted. It owns only the set of free extents; it knows nothing of
// objects, collections, transactions, Pebble or the device itself, so the
// engine must persist what it needs (the used extents in its metadata) and
// rebuild an Allocator at mount with New and MarkUsed.
//
// Space is handed out in units (a power of two such as 4 KiB or 64 KiB) and
// tracked as extents, never as per-block lists or bitmaps. Free extents are
// kept maximal (neighbours are merged on Release) in two ordered indexes: by
// offset, for merging and for allocating next to an object's previous
// extent, and by (size bin, offset), where bin = floor(log2(length/unit)),
// for best fit. Every operation costs O(log n) in the number n of free
// extents (times the number of extents it takes or returns).
//
// Allocate's policy, in order:
//
//  1. at the hint, if the free extent there has room for the whole request,
//     or else in the first of the next few free extents after the hint that
//     has room (keeps an object's data contiguous and in order);
//  2. best fit: the lowest-offset extent that fits in the lowest size bin
//     that has one (a few extents of the request's own bin are checked,
//     since not all of them are long enough, then the next bins, which all
//     are);
//  3. when no single free extent is found: several extents, largest bins
//     first, the last piece chosen by best fit.
//
// Errors are classified by the sentinels ErrNoSpace, ErrOverlap and
// ErrInvalid. A failed call changes nothing. No input makes the package
// panic. In builds with the invariants tag (make test), every call that
// changes the free space ends by verifying the whole structure (verify.go),
// and a broken invariant, which only a bug can cause, panics there.
//
// Concurrency: an Allocator is not safe for concurrent use; the engine
// serialises calls (it allocates while preparing a transaction and releases
// when the transaction is applied).
//
// Start reading at Allocator (alloc.go), then Allocate (allocate.go) and
// Release (release.go).
package alloc
