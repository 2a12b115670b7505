// Package captab is the file-system client's table of capabilities, one
// per inode it knows, as a pure state machine: events in (a cap from a
// reply, the MDS's grants, revocations and flush acks, opens and closes,
// dirty attributes, ticks, a recall, a lost session), actions out (send
// this cap message, stop using revoked bits then say so, the caps
// changed, a cap was dropped).
//
// It owns the client's side of docs/CAPABILITIES.md: issued, implemented
// and wanted bits with their seq and issue seq; a revocation is acked
// only after the driver has stopped using the revoked bits and flushed
// what they covered (RevokeDone); dirty attributes travel as flushes
// with a flush tid, acked by the MDS; the caps of files no longer open
// are released after a delay (or at once when the MDS recalls caps);
// after a failover the table reports every cap (Reconnect). It knows
// nothing of file data or the messenger: package fsclient's driver does
// the flushing and sending and fills in a flush's attribute values.
//
// Not safe for concurrent use: the driver serialises events. Pure: no
// goroutines, clock or I/O. Start with Table.Add and Table.Handle.
package captab
