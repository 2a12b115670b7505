// Package auth owns identity and trust, after Ceph's cephx: entity names,
// secret keys and keyrings, capabilities and their grammar, the tickets
// the monitors issue, rotating service keys, and the handshakes the
// messenger runs before any other message (handshake.go defines that
// contract). docs/AUTH.md describes it for administrators, with the wire
// layouts.
//
// The pieces, by who uses them:
//
//   - Monitors: Authority (authority.go) authenticates entities against a
//     KeyServer (a Keyring, or the monitor's auth database) with
//     NewHandshake, issues and renews tickets (IssueTickets), and keeps
//     the RotatingKeys of each service (rotating.go).
//   - Daemons (osd, mds, mgr): Verifier (verifier.go) checks the
//     authorizers clients present, with the rotating keys the monitors
//     send (RotatingKeys.Seal / OpenRotatingKeys), and refuses replays.
//     CapChecker (capchecker.go) authorizes each request with the caps the
//     ticket carried.
//   - Clients and daemons connecting out: LoadKeyring (keyring_file.go)
//     for the secret, MonClient (monclient.go) to log in to a monitor and
//     get tickets, ServiceClient (serviceclient.go) to present one.
//   - The messenger: the handshakes' session keys, and Sign / Verify.
//
// Every refusal is a *Refusal wrapping ErrDenied with a Reason, reported
// through Events (Counters counts them); undecodable payloads wrap
// ErrMalformed instead. Every encoding is a versioned envelope of the
// encoding package, bounded and fuzzed.
//
// It must not know about the network, the cluster map or the messenger's
// framing, and has no clock and no randomness source of its own but
// crypto/rand: callers pass Now. It does no I/O but keyring files.
//
// Concurrency: Authority, Verifier, CapChecker, Grants and Counters are
// safe for concurrent use. Each handshake value serves one connection
// from one goroutine. RotatingKeys and Keyring are plain values: share
// them read-only or copy them.
//
// Start with handshake.go, then Example, then authority.go and
// verifier.go.
package auth
