// Package msgr is Cuttle's messenger: it moves framed messages between
// named entities (mon.a, osd.3, client.admin) over an injected Network,
// TCP in daemons and memnet in tests.
//
// It owns the byte stream: the preamble, frames with crc32c and optional
// AES-GMAC signatures, the auth handshake run before any message (through the
// contract in internal/auth), sessions that survive reconnects with
// sequence numbers and acks, reconnect backoff, and throttles. It is
// message-agnostic: a Message is a type, a version and opaque bytes, which
// internal/wire defines and decodes; msgr must not import wire. The wire
// format, policies and knobs are documented in docs/MESSENGER.md.
//
// # Using it
//
// New builds a Messenger from a Config; Listen accepts peers; Connect (or
// Send) opens a Session to a peer by name and address; Session.Send
// queues a message. Everything received arrives at the Config's
// Dispatcher with the sender's authenticated name and capabilities, and
// session changes (connected, reset because the peer restarted, failed)
// arrive as Events in order with the messages.
//
// Sessions are lossless between daemons (retransmitted across reconnects,
// delivered exactly once in order while both processes live) and lossy
// with clients (the first fault fails the session; the client opens a new
// one). Config.Policy chooses.
//
// # Concurrency
//
// A Messenger and its Sessions are safe for concurrent use. Each
// connection has a reader goroutine and a writer goroutine that batches
// queued frames into one writev; each session has a dispatch goroutine,
// and an outgoing session a goroutine that (re)connects it. Close stops
// them all and waits.
//
// Start reading at Messenger (messenger.go), Session (session.go) and the
// handshake (handshake.go); frame.go has the framing.
package msgr
