// Package auth owns identity and trust: entity names, secret keys and
// keyrings, capabilities and their grammar, tickets the monitors issue,
// rotating service keys, and the handshakes the messenger runs before
// any other message (handshake.go defines that contract). It is pure
// code with no I/O but keyring files: no network, no clocks of its own
// (callers pass now). Start with handshake.go.
package auth
