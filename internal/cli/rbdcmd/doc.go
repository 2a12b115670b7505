// Package rbdcmd holds "cuttle rbd", the block image commands (Ceph's rbd
// tool): create, ls, info, resize, rm, rename, cp, and snap create, ls,
// rm, rollback, protect and unprotect, through the rbd library
// (docs/RBD.md). It owns their flags, the parsing of image specs
// ("[pool/]image[@snap]") and how the CLI tells the library's errors
// (rbdFailure).
//
// It must not know how a connection is configured: internal/cli builds
// the tree and passes a DialFunc made from its cluster flags, so tests
// dial a simulated cluster instead. Results print through
// internal/cli/cmdutil's Output (plain, or --format json).
//
// # Concurrency
//
// The commands are used by one goroutine at a time, as the tree they
// belong to is; each opens its own connection and closes it before it
// returns.
package rbdcmd
