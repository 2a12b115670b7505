// Package admincmd holds the command families that administer a running
// cluster through its monitors and OSDs: mon (the monitor map), status
// and health, osd (the OSD map: OSDs, flags, pools, the CRUSH hierarchy,
// getmap), pg and df, auth, config, balancer, fs and mds (the MDS map),
// and tell (admin commands to one OSD).
// Each turns its arguments into a monitor command (most through
// [clusterconn.MonCommand]) or a daemon command sent through a rados
// connection, and prints the reply through a [cmdutil.Output].
//
// It does not know how the tree is assembled, how the cluster flags are
// registered, or how daemons are created and run: the root hands it the
// cluster flags, and the daemons' own commands (mon mkfs and run, osd
// mkfs and run) reach the mon and osd groups as commands the caller
// passes to [AddMonCommands] and [AddOSDCommands]. It imports
// internal/cli/clusterconn and internal/cli/cmdutil, never the root or
// another command family, and no daemon core or internal/daemon.
//
// # Concurrency
//
// The commands belong to one tree and run one at a time, as the tree
// does; they keep no state between runs beyond their flag values. Each
// run makes its own monitor client or connection and closes it.
package admincmd
