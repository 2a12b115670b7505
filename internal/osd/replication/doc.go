// Package replication owns the primary's bookkeeping of one replicated
// write: which members of the acting set have yet to apply it and to
// commit it, the first failure one of them reported, and when the
// primary answers its clients: the applied reply (for a client that asked
// for one with FlagWantApplied) once every member has applied it and
// none failed, and the final reply, with the write's result, once every
// member has committed it. In a pool in ack primary mode (AnswerOn) the
// clients are answered once the primary has committed (Answer), and the
// write is tracked on until every member has, so that the primary knows
// which replicas lag (Committed).
//
// Acks is the tracker: the primary starts one per write with the acting
// set, feeds it its own apply and commit and its replicas' answers
// (Ack), and is told, on the ack that makes it so, that the write has
// applied everywhere or committed everywhere (Outcome). It keeps the
// members inline (up to 8; osdmap.MaxPoolSize bounds an acting set at
// 64, the most Acks takes) and so costs a write no allocation of its
// own.
//
// It must not know about the OSD's types, the wire format, the object
// store, the messenger or the clock, and does no I/O; it is a pure core
// (internal/archtest's pure_test.go). The OSD's primary.go is the driver:
// it sends the rep ops, turns the replicas' replies into acks and answers
// the clients.
//
// Concurrency: nothing here locks. An Acks is used by one goroutine at a
// time; the primary calls it under its PG's lock.
//
// Start reading at Acks (acks.go).
package replication
