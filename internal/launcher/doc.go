// Package launcher runs a whole Cuttle cluster on one machine, one process
// per daemon, for development, demos and multi-process tests: it is what
// `cuttle cluster up|down|status` (and `make run`) call.
//
// # What it owns
//
// The launcher owns one directory (./.cuttle by default) and everything in
// it:
//
//	cluster.json     the cluster's record: fsid, and one [Daemon] per daemon
//	cuttle.conf      the cluster configuration file commands read
//	admin.keyring    client.admin's key (0600)
//	mon.a/ osd.0/ .. each daemon's data directory (an S3 gateway, s3.a, has none)
//	log/mon.a.log    each daemon's standard output and error
//	run/mon.a.pid    each running daemon's pid and process identity
//
// A cluster is a list of daemon specs ([Daemon]: kind, name, arguments,
// data directory, address, metrics address) that [Plan] builds once and
// cluster.json keeps. Creating, starting, stopping and listing daemons work
// on that list only, so a new kind of daemon (OSDs, MDSs, the S3 gateway) is new specs in [Plan]
// and a case in the Create hook, nothing else. Monitors are created
// before anything runs; the rest of a new cluster's creation (the Setup
// hook, then every other daemon, which registers with the monitors) is
// a list of pending steps in cluster.json that Up does with the monitors
// running, so that a creation that failed half-way resumes.
//
// # What it must not know about
//
// How a daemon makes its data directory, and how to ask the cluster about
// its health: both belong to the command tree (cuttle cluster, in
// internal/cli/daemoncmd), which passes them in as [Config.Create] and
// [Config.Probe]. Daemons are started by
// re-executing the cuttle binary ([Config.Exe]) with each spec's
// arguments, in a session of their own (setsid) so that they outlive the
// command that started them.
//
// # Process identity
//
// A pid file records the pid together with the process's start time and
// the machine's boot id (Linux: /proc/PID/stat and
// /proc/sys/kernel/random/boot_id). A daemon counts as running only while
// a process with that pid, start time and boot id exists, so `down` never
// signals an unrelated process that reused the pid after a crash or a
// reboot.
//
// # Concurrency
//
// A [Launcher] may be used by several goroutines, and several processes may
// run `up`, `down` and `status` against the same directory: Up and Down
// hold an exclusive lock on DIR/run/lock while they work.
//
// Start reading at [Launcher.Up].
package launcher
