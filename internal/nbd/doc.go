// Package nbd is Cuttle's NBD server: it exports block images (or any
// Backend) to clients that speak the Network Block Device protocol —
// qemu and qemu-img, libnbd's nbdcopy, nbdinfo and nbdfuse, the Linux
// kernel's nbd driver.
//
// It owns the connection: the fixed newstyle handshake with its options
// (export name, GO and INFO, LIST, structured replies, the
// base:allocation meta context, STARTTLS — TLS required or optional,
// Config.TLS; tls.go loads the PEM files), then the transmission phase's commands
// (READ, WRITE with FUA, FLUSH, TRIM, WRITE_ZEROES, BLOCK_STATUS, DISC),
// run concurrently — up to Config.MaxInFlight per connection and
// Config.MaxInFlightBytes of their data, replies
// sent as each finishes, so out of order — and the translation of a
// backend's errors to the protocol's (errno.go, one table). The bytes on
// the wire are the proto sub-package's pure encoders and decoders; what
// the exports hold is a Backend's (RBD over an *rbd.Image). It knows
// nothing of the CLI: internal/cli/nbdcmd builds the exports and the
// listeners.
//
// A malformed request never stops the server: a request the protocol can
// answer gets an error reply, one that loses the framing (a bad magic, an
// oversized option) closes its connection only. Shutdown stops accepting,
// lets the requests in progress finish, flushes every export and closes
// the connections. Start with NewServer and Server.Serve.
package nbd
