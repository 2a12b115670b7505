// Package kvcmd holds "cuttle kv", the commands of the key-value store
// (the kv library, docs/KV.md): create, put, get, rm, ls, info, check and
// bench on a store named "POOL/NAME". It owns their flags, the parsing of store
// specs and how the CLI tells the library's errors (kvFailure).
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
package kvcmd
