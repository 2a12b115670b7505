// Package session is the file-system client's session with the MDS rank
// that serves it, and the tracking of its metadata requests, as a pure
// state machine: events in (the MDS map's holder of the rank, session
// messages, replies, forwards, a lost connection, ticks with the time),
// actions out (connect, send this, report a reconnect, this request is
// done, safe or failed, caps are stale). Package fsclient drives it: it
// does the sends over the messenger, keeps the caps a reconnect reports,
// and wakes the callers.
//
// It owns the rules of docs/FSCLIENT.md's "Sessions and failover": a
// session is opened before the first request, and again on every new
// messenger connection (the MDS binds the session to it), and renewed
// every third of the session timeout; caps are valid until a renewal's timeout passes
// unanswered; a request keeps its tid across attempts, is done at its
// first reply (unsafe or safe) and forgotten at its safe one; after a
// failover (another daemon holds the rank) the client opens its session
// with the new daemon, reports its caps (ClientReconnect), replays the requests it had an unsafe reply for
// (RequestReplay) and, once the rank is active, resends those without
// any reply.
//
// Not safe for concurrent use: the driver serialises events. Pure: no
// goroutines, clock or I/O. Start with New, Session.Submit and
// Session.MapChanged.
package session
