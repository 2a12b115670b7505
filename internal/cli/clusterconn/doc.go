// Package clusterconn is how cuttle's commands reach a running cluster:
// the cluster flags ([Flags]: --conf, --mon-host, --name, --keyring,
// --timeout, --debug), the configuration file they name
// ([Flags.LoadConf]), the monitor client and the rados connection made
// from them ([Flags.MonClient], [Flags.Dial]), the monitor commands built
// on them ([MonCommand], [RunMon], [PrintReply]), and how the CLI names
// its errors ([Named], [Shown]).
//
// It does not know which commands exist or how the tree is assembled:
// internal/cli (the root) registers the flags once on the root command
// and hands the same [Flags] to every family that reaches a cluster. It
// imports internal/cli/cmdutil to print replies and never the root or a
// command family. It starts no daemon and reads no environment variable
// ($CUTTLE_CONF reaches it as --conf's default, through cmd/cuttle).
//
// # Concurrency
//
// A [Flags] belongs to one command tree and is used by one command at a
// time, as the tree is: [Flags.MonClient] fills in Keyring from the
// configuration file when no --keyring was given. Nothing else is kept
// between calls: every MonClient and Dial makes a new client or
// connection that its caller closes ([RunMon] closes its own).
package clusterconn
