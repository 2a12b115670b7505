// Package objclass is the contract between object classes and the OSD
// that runs them (Ceph's objclass.h): the Method a class registers, the
// Registry an OSD is given, the Context a method reads and writes its
// object through, and the errno Error both report failures with.
//
// An object class is a set of Go methods ("class.method") that a client
// calls with a `call` op; the primary OSD runs the method inside the
// request's execution, so a read-modify-write of one object is atomic
// without a round trip, as Ceph's cls modules are. A method sees the
// object only through its Context: the ops a client could send (read,
// write, stat, xattrs, omap, ...), applied within the same request and its
// one transaction. Read-only methods may not write (EPERM), and methods
// may not call methods.
//
// This package knows no class (internal/cls/lock, internal/cls/version
// and later ones register themselves into a Registry; internal/cls
// assembles the standard set) and nothing of the OSD: internal/osd/ops
// implements Context over its executor.
//
// Concurrency: register every method before the Registry is shared;
// Lookup, IsWrite and Call are then read-only and safe for concurrent use.
// A Context belongs to one running method.
//
// Start reading at objclass.go (Registry.Call), then context.go.
package objclass
