// Package objid owns object identity: which object an operation names
// (pool, namespace, locator key, name, snapshot), the 32-bit hash Ceph
// places it by, and the order objects sort in within a placement group.
//
// The hash is Ceph's ceph_str_hash_rjenkins (Bob Jenkins' lookup2) over the
// locator, or over "namespace\x1f" + locator when the object has a
// namespace; the locator is the key when one is set and the name otherwise.
// The order is hobject_t's "bitwise" order: pool, then the hash with its
// bits reversed, then namespace, key, name and snapshot. Reversing the bits
// makes every placement group, at any pg_num, one contiguous range of the
// order, which PG splitting, backfill and scrub rely on.
//
// The package knows nothing of pools' settings, placement groups or OSDs:
// turning a hash into a PG belongs to package osdmap. It imports only the
// standard library; its codec takes package encoding's Encoder and Decoder
// through small interfaces (codec.go).
//
// IDs are plain values, safe to copy and to share between goroutines; no
// function here keeps state.
//
// Start reading at ID (id.go), then Compare (order.go).
package objid
