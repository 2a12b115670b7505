// Package rados is Cuttle's client library: what applications link to
// store objects in a cluster. It owns the client's side of RADOS: the
// session with the monitors and the OSD map it keeps current, placement
// (object -> PG -> acting primary, computed with CRUSH from the map, never
// looked up), the sending of object operations to primaries and their
// resending across map changes, the two acknowledgements of a write
// (applied and committed), and pool and namespace handles.
//
// # Using it
//
// Connect (or ConnectConf, from cuttle.conf) returns a Conn, which logs
// in to a monitor (cephx or none), subscribes to the OSD map and keeps
// sessions with the OSDs it uses. Conn.OpenIOContext gives an IOContext
// on one pool; SetNamespace and SetLocator choose the namespace and
// locator key of its objects. Object operations come as shortcuts
// (WriteFull, Read, Stat, SetOmap, ...) or as compound operations: a
// WriteOp or ReadOp collects operations that apply to one object
// atomically, run with IOContext.OperateWrite or OperateRead, or their
// Async forms, which return a Completion with Applied and Committed
// channels. ListObjects and Objects list a pool across its PGs with a
// resumable Cursor. Conn.MonCommand passes commands to the monitors;
// CreatePool, DeletePool and LookupPool wrap the pool commands.
//
// Every call takes a context.Context: its deadline and cancellation end
// the call (ErrTimedOut, context.Canceled). A write that ends so may
// still have been applied. Failures are errors of the classes in
// errors.go (errors.Is(err, ErrNotFound), ...), and *OpError carries the
// errno.
//
// # What the caller does not see
//
// Each op goes to the acting primary of its PG in the client's newest
// map. When a new map moves the PG, when the OSD answers ESTALE (the op
// then waits until the client's map reaches the OSD's epoch) or when the
// session to the OSD fails, the op is sent again with the same request
// id, which OSDs use to apply it once; ops are resent in the order they
// were first sent, so one client's ops to one object keep their order.
// docs/RADOS.md describes the protocol and the guarantees.
//
// # Boundaries and concurrency
//
// The package knows nothing of the daemons' insides: it imports only the
// layers below the cores (wire, msgr, monc, auth, osdmap, objid, crush
// through osdmap) and never internal/osd or internal/mon. Conn,
// IOContext and Completion are safe for concurrent use. A WriteOp or
// ReadOp is a plain builder: build it in one goroutine; a ReadOp's
// steps are written when it completes.
//
// Start reading at Conn (conn.go) and IOContext (ioctx.go), then the
// objecter (objecter.go, events.go), which decides where ops go (with
// target.go) and when they go again.
package rados
