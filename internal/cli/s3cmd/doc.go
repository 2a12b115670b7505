// Package s3cmd holds "cuttle s3": the S3 gateway (serve) and its users
// and keys (user create|ls|info|rm, key create|rm), over internal/s3gw
// and its records in RADOS (internal/s3gw/meta). docs/S3.md describes the
// gateway; docs/CLI.md the commands.
//
// It must not know how a connection is configured: internal/cli passes a
// DialFunc made from its cluster flags, so tests dial a simulated cluster
// instead. Results print through internal/cli/cmdutil's Output (plain, or
// --format json).
//
// # Concurrency
//
// The commands are used by one goroutine at a time, as the tree they
// belong to is; each opens its own connection and closes it before it
// returns (serve keeps it until its context ends).
package s3cmd
