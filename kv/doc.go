// Package kv is a key-value store whose data lives in the omaps of RADOS
// objects, as a two-level B-tree (docs/KV.md): a store named N in a pool
// is an index object that maps the upper bound of each leaf's key range
// to the leaf, and leaf objects that each hold between k and 2k of the
// store's entries. There is no server: clients coordinate through atomic
// operations on one object at a time, guarded by the kv object class
// (internal/cls/kv).
//
// A Store keeps a cache of the index. Get reads the key's leaf; if the
// leaf no longer covers the key (another client split it) the store
// re-reads the index and retries. Put and Remove are one guarded write on
// one leaf; a Put into a full leaf first splits it: the index entry is
// marked with the split (only if no other operation has marked it), the
// leaf frozen, its entries copied into two new leaves, the index entry
// swapped for theirs in one operation, and the old leaf removed. A
// Remove that would leave a leaf under k entries first joins it with a
// neighbour the same way: both entries marked, both leaves frozen, then
// merged into one leaf or rebalanced into two. List scans a key range
// leaf by leaf.
//
// A writer that meets a leaf busy with another client's operation waits
// for a notify on the index, which that client sends once its swap has
// landed (wake.go); a backoff is the fallback.
//
// An operation whose client died leaves its mark and frozen leaves: a
// client that meets them busy for longer than Config.MarkTimeout (by the
// OSD's clock) takes the operation over and rolls it forward or back
// (cleanup.go, the decision in kv/plan's Recover).
//
// It knows rados and the kv class's encodings; the decisions (which leaf
// covers a key, how leaves split, merge and rebalance) are in kv/plan. A
// Store is safe for concurrent use. Start reading at store.go (Open,
// Put), then split.go, join.go and scan.go.
package kv
