// Package moncmd is the contract between the monitor and its services:
// the Service interface each piece of monitor state (OSD map, config,
// auth) implements, and, as aliases of internal/wire's types, the Command
// and Reply a client sends and gets back and the error codes. It owns no state and
// does no I/O. The monitor's driver (internal/mon) routes commands to
// services, runs their proposals through Raft and hands committed ones to
// Apply; services (internal/mon/osdmon, configmon, authmon) never see Raft
// or the network.
//
// Commands are named by a prefix of words, as Ceph's are ("osd pool
// create"), with string arguments; every service formats its own replies
// both as JSON (Reply.Data) for tools and as text (Reply.Text) for people.
//
// Columns lays out the text tables services print (osd tree, df).
//
// Concurrency: the package is types, interfaces and pure functions. Service's
// contract has the driver call each service from one goroutine, so a
// service needs no lock for the driver's calls.
package moncmd
