// Package format is the blockstore's on-disk codec: the layout of the
// Pebble keys and the data file (format.go), the order-preserving key
// encoding (keys.go), the object record with its units, unit shards
// and attributes (record.go, attrs.go), the in-memory extent map whose
// chunks are the shards and which copies of a record share
// (unitmap.go), the allocated page spans
// (pages.go), and the superblock, counter, deferred-write and bitmap
// values (format.go). Every decoder refuses hostile input with an
// error wrapping objectstore.ErrCorrupt; the fuzz tests beside them
// hold them to it.
//
// It is pure: encoders and decoders of bytes and the record's value
// operations, no Store, no Pebble, no files and no locks. It must not
// know how the blockstore prepares, commits or reads (the parent
// package, which reads and writes these encodings), nor about placement
// groups or the network.
//
// Concurrency: everything here is plain data. A record (Onode) that
// has been published to readers is immutable by the blockstore's
// convention: change a Clone (its UnitMap copies a shared chunk before
// changing it).
package format
