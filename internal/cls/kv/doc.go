// Package kv is the object class of the omap B-tree key-value store (the
// public kv package): the guarded operations clients run on the store's
// leaf objects and on its index object, so that every step of the store's
// protocols is one atomic operation on one object (docs/KV.md). It owns
// the methods, the stored form of a leaf's bounds (the "kv.leaf"
// attribute) and of an index entry (the index's omap values), and the
// encoding of every input and output:
//
//	kv.write   WriteRequest -> nothing: apply puts and removes to a leaf if
//	           it covers every key and keeps between k and 2k entries
//	kv.read    ReadRequest -> ReadReply: get keys, or scan from a key
//	kv.freeze  FreezeRequest -> FreezeReply: refuse the leaf's writes from
//	           now on (a split or merge is about to copy its entries);
//	           answer the leaf and, if asked, its entries
//	kv.thaw    FreezeRequest -> nothing: undo a freeze (a rollback)
//	kv.mark    MarkRequest -> nothing: mark index entries (one for a
//	           split, two for a merge or rebalance) with a pending
//	           operation, all or none: if each names the expected leaf
//	           and has no mark (or, to take an abandoned operation over,
//	           carries a given mark at least a given age by the OSD clock)
//	kv.swap    SwapRequest -> nothing: replace marked index entries by new
//	           ones, if every one still carries the mark
//	kv.unmark  UnmarkRequest -> nothing: clear a mark (a rollback)
//
// A failed guard is an errno the client recognises (Errno* below):
// EXDEV "not mine" (the leaf no longer covers a key; the client's index
// cache is stale), EFBIG "full" (split first), ERANGE "too small"
// (rebalance or merge first), EBUSY (the leaf is frozen, or the index
// entry is already marked), ECANCELED (a mark is not there any more),
// EEXIST (a swap would add an entry over one it does not remove).
// ENOENT is a leaf that no longer exists (also a stale cache), EIO a
// stored leaf or index entry that does not decode, EINVAL a bad request.
//
// The package knows objclass's contract and nothing of the OSD or of the
// client. Its methods keep no state between calls; Register before the
// registry is shared.
package kv
