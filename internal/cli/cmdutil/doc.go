// Package cmdutil holds what the cuttle command families share: [Output],
// which prints a command's result as plain text or JSON (--format, whose
// value is a [FormatFlag]), and the parsing and printing of byte counts
// ([ParseSize], [FormatSize]) that size flags take.
//
// It is a leaf of the command tree: internal/cli (the root) and every
// package under it (radoscmd, mapcmd, toolcmd, clusterconn) import it, and it imports
// none of them and no cluster, library or daemon package. It does not know
// which commands exist, how they reach a cluster, or how their errors are
// named; those belong to the root and internal/cli/clusterconn.
//
// # Concurrency
//
// An [Output] is used by one command at a time, as the tree it belongs to
// is; the functions keep no state.
package cmdutil
