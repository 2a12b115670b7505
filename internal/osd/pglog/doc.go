// Package pglog owns a placement group's log and info: the ordered record
// of recent writes (Entry: version, object, kind, the client's request id
// and result) that replicas compare when they peer, that recovery reads
// to learn what changed, and that the primary consults to answer a resent
// request once instead of applying it twice.
//
// Entries and Info persist as omap entries of the PG's meta object
// (MetaObject) and are written in the same object-store transaction as
// the data they describe (AppendTxn, SaveInfoTxn), so the log never
// disagrees with the objects. Load reads them back at startup.
//
// The package is pure: it knows objid, osdmap, wire and the objectstore
// types, does no I/O of its own but through a Store passed to Load, and
// is not safe for concurrent use (the PG serialises access).
//
// In builds with the invariants tag (make test), every Append and trim
// checks the ends of the packed log (version order, tail, string arena,
// request ids) and Load checks the whole log; a violation panics. See
// verify.go.
package pglog
