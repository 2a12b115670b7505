// Package server is the MDS daemon's server (docs/MDS.md, "The
// daemon"): everything between the messenger and the engine
// (internal/mds/mdcache). It owns
//
//   - the daemon's state in the MDS map, followed through its beacons
//     (MapSource: internal/mds/beacon's Sender): a standby waits, a
//     standby-replay daemon follows its rank's journal
//     (journal.Follower), and a daemon given a rank takes it over:
//     replay (fence the rank's previous holder and wait for the OSD map
//     that blocklists it, then open the engine, which replays the
//     journal), reconnect (the clients the session map names report
//     their caps, until all have or mds_reconnect_timeout), rejoin, and
//     active, each state reported and taken by the map before the next;
//   - the clients' sessions (Sessions, a pure table: open, renew, stale
//     after the file system's session timeout, autoclose after its
//     autoclose time), the session map in RADOS (sessionmap.go) that
//     tells the next holder whom to wait for, the check of a client
//     key's mds caps against its mount root, and the fencing of evicted
//     clients (osd blocklist add);
//   - routing: wire.ClientSession, ClientRequest (to Engine.Handle, on a
//     goroutine each; a request for another rank gets a
//     ClientRequestForward), ClientCaps (Engine.HandleCaps, in order per
//     client), ClientReconnect (Engine.Reconnect), and the engine's
//     messages back (the Outbox it is given).
//
// It knows the engine only through Engine and Opener, the seam
// docs/MDS.md describes; the daemon (internal/daemon) passes the real
// engine's Open. It must not know about flags, processes or signals:
// cancelling Run's context stops it (the engine closes, flushing its
// journal).
//
// Concurrency: Dispatch and HandleEvent are called by the messenger from
// many goroutines; Run from one. Server.mu guards the sessions, bindings
// and phase; the engine is never called with it held (it calls back
// through the Outbox).
//
// Start reading at server.go (Run, takeover), then dispatch.go.
package server
