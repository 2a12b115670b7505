// Package failover holds the monitors' MDS decisions, pure: what a
// beacon changes in the MDS map, which daemons are laggy, which standby
// takes a failed or vacant rank, and how ranks grow, shrink and move
// through their states. Maps and events (beacons, the time, the laggy
// daemons) come in; the next map, the reply and the addresses to fence
// come out. internal/mon/mdsmon carries the results through Raft.
//
// The rules, after Ceph's MDSMonitor:
//
//   - A daemon is one incarnation, named by its name and its beacons'
//     nonce. A new one becomes a standby; an older incarnation of the
//     same name is failed first (it restarted).
//   - A rank holder's beacons report its progress (replay, resolve,
//     reconnect, rejoin, clientreplay, active; creating for a new rank;
//     stopping, then stopped); the map takes a state only in that order
//     (mdsmap.CanAdvance). A beacon reporting damaged marks the rank
//     damaged and drops the daemon.
//   - A daemon not heard from for the grace (Liveness) is laggy. A laggy
//     standby or standby-replay daemon is removed; a laggy rank holder is
//     failed, and its address fenced, when a replacement exists (its
//     follower or a standby): without one it keeps the rank, as Ceph does,
//     since failing it could only make things worse.
//   - Assign fills failed ranks first (the rank's standby-replay
//     follower, else a standby wanting that file system, else one wanting
//     none, else any, oldest gid first) in replay; then grows a file
//     system whose ranks are all active towards max_mds one rank at a
//     time (in creating); stops the highest active rank while there are
//     more than max_mds (or the file system is down); and gives active
//     ranks standby-replay followers where the file system allows them.
//
// Nothing here reads a clock, locks or does I/O: time is an argument.
// Liveness is the leader's memory of beacons, owned by one goroutine.
package failover
