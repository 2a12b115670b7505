// Package storetest is the conformance suite every objectstore.Store engine
// must pass, and a differential tester that runs one random transaction
// stream on two engines and compares every read. It is imported only by
// _test.go files (archtest enforces this).
//
// Run(t, open) runs the suite, one subtest per behaviour; open must return
// a new, empty store (no collections) for each subtest, and the suite
// closes it when the subtest ends. Differential(t, seed, steps, a, b)
// drives a Generator's transactions into two stores and compares them
// after every step; on a mismatch it prints the seed and the op log.
//
// The interface documents most behaviour. Where it leaves a choice open,
// the suite fixes it, and every engine is held to these rules:
//
// Objects and collections
//   - A new store has no collections. ListCollections' order is unspecified.
//   - CreateCollection of an existing collection is ErrExists;
//     RemoveCollection of a missing one is ErrCollectionNotFound, of one
//     holding objects ErrNotEmpty. A transaction may remove a collection
//     and create it again; it is then empty.
//   - Any operation or read on an object of a missing collection is
//     ErrCollectionNotFound (it wins over ErrNotFound).
//   - Touch, Write, Zero, SetAttrs, OmapSetKeys, OmapSetHeader and the
//     destination of CloneRange create a missing object (even with no
//     data, attributes or keys). Truncate, Remove, RmAttr, OmapRmKeys,
//     OmapRmKeyRange, OmapClear, and the source of Clone, CloneRange and
//     Move require it: ErrNotFound, and the whole transaction fails.
//   - RmAttr of a missing attribute and OmapRmKeys of missing keys succeed.
//     OmapRmKeyRange(first, last) with first >= last removes nothing.
//   - OmapClear removes the header too. A header of zero length reads as
//     empty (nil or empty; the suite does not tell them apart).
//   - Clone replaces the destination wholesale (data, attributes, omap,
//     header); Move does the same into the destination collection, which
//     must exist, and removes the source. Cloning or moving an object onto
//     itself changes nothing.
//   - objid.Max() names no object: Transaction.Validate rejects it.
//
// Data and allocation
//   - Write and Zero set the size to at least offset+length, even when the
//     length is 0. Truncate extends with zeros. Read past the end returns no
//     bytes and no error; Read with length 0 reads to the end; holes read
//     as zeros.
//   - Allocation is tracked in 4096-byte pages of the object's logical
//     space (PageSize). Write allocates every page it touches (with no
//     detection of zeros). Zero frees the pages it covers whole; pages it
//     covers partly keep their state. Truncate frees the pages wholly past
//     the new size. ExtentMap returns maximal runs of allocated pages,
//     clipped to the requested range and the object's size.
//     ObjectInfo.Allocated is the total length of ExtentMap over the whole
//     object. This is logical allocation: an engine may allocate its device
//     differently, but it must report this.
//   - CloneRange(src, srcOff, length, dst, dstOff) requires the source
//     range to lie within src's size (ErrInvalid otherwise). It acts as
//     Zero(dst, dstOff, length) followed by a Write, for each allocated
//     extent of src in the range, of that extent's bytes at the matching
//     destination offset; the source is read first, so overlapping copies
//     within one object behave as memmove.
//
// Listing and iteration
//   - ListObjects returns objects at or after start in objid.Compare order;
//     next is the first object not returned, or objid.Max() when none
//     remain (even if the last page was exactly limit long). The zero
//     objid.ID starts at the beginning, before objects of negative pools.
//     A limit <= 0 means no limit; so does it for OmapIterate.
//   - OmapIterate's more is true only if another matching key exists. An
//     after of "" starts at the first key, the empty key included.
//
// Transactions, space and lifecycle
//   - Queue returns validation and state errors (against the state left by
//     every transaction queued before) at once, and applies nothing; an
//     error may instead come from the completion. A transaction whose
//     operation fails leaves no effect of any earlier operation. An empty
//     transaction succeeds. Queue with a done context fails with the
//     context's error and applies nothing.
//   - FSStats.Stored is the sum of the objects' ObjectInfo.Allocated;
//     PoolStored sums it by the collection's pool for PG and temp
//     collections (meta is left out) and omits pools with nothing stored.
//     Allocated is the engine's own and at least Stored, and
//     Allocated+Available <= Total. A transaction that would need more
//     than Available fails with ErrNoSpace and applies nothing.
//   - Close waits for queued transactions; every later call, a second
//     Close included, returns ErrClosed.
//   - Returned slices and maps are the caller's: changing them does not
//     change the store, and neither does changing a transaction's buffers
//     once it has applied.
//
// Concurrency: Run's subtests do not run in parallel with each other; some
// start goroutines against one store to exercise the engine's locking.
// Generator is not safe for concurrent use.
//
// Start reading at Run (storetest.go), then Differential (differential.go).
package storetest
