// Package watch is the primary OSD's watch/notify state for one PG, as a
// pure state machine: events in (a watch registered or ended, a ping, a
// notify, an ack, a client session lost, an object deleted, the PG held
// from serving ops or released, the time passing), actions out (send a
// notify or an error to a watcher, complete a notify with its acks and
// the watchers that timed out, remove a persisted watch that expired). It follows Ceph's watch/notify
// (librados watch2/notify2, the OSD's Watch and Notify objects):
//
//   - a watch is a client entity, a cookie and a timeout; the OSD
//     persists it with the object (the driver's concern: an OpWatch is
//     a write), so a new primary loads it (Load) and gives the client the
//     timeout to reconnect;
//   - a watch expires when nothing is heard from its client (a watch op
//     or a ping) for its timeout; a connected watcher is told
//     (ActionSendError) and the driver removes its persisted record
//     (ActionRemoveWatch); no watch expires while the PG serves no ops
//     (Hold: the pings wait unanswered), and each has its timeout anew
//     when the PG serves them again (Release);
//   - a notify goes to every watcher of the object: at once to those
//     connected, on reconnect to those whose session is lost; it
//     completes when each has acked, or at its timeout with the others
//     listed as timed out (and with those whose watch expired meanwhile).
//
// It must not know about sessions, the store or the clock: the driver
// (internal/osd, watch.go) names sessions by ConnID, passes the time in,
// and arms a timer for Deadline. Concurrency: a State is not safe for
// concurrent use; the driver holds a lock around every call.
//
// Start reading at State (state.go).
package watch
