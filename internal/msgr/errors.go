package msgr

import "errors"

// Errors the messenger returns or reports in Events, wrapped with the peer
// and the step concerned; test for them with errors.Is.
var (
	// ErrClosed: the Messenger is closed.
	ErrClosed = errors.New("msgr: messenger closed")
	// ErrSessionClosed: the Session was dropped (a lossy fault, a peer
	// restart seen on the accepting side, MarkDown or Close); its pending
	// messages were not delivered.
	ErrSessionClosed = errors.New("msgr: session closed")
	// ErrProtocol: the peer broke the protocol: bad magic or version, an
	// unknown frame kind or flag, a frame out of place, a sequence gap.
	ErrProtocol = errors.New("msgr: protocol error")
	// ErrCorrupt: a frame failed its crc32c or a payload did not decode.
	ErrCorrupt = errors.New("msgr: corrupt frame")
	// ErrBadSignature: a frame's signature did not verify, or a frame of a
	// signed session came unsigned.
	ErrBadSignature = errors.New("msgr: bad frame signature")
	// ErrFrameTooLarge: a frame's length exceeds the configured maximum.
	ErrFrameTooLarge = errors.New("msgr: frame too large")
	// ErrTruncated: the stream ended inside a frame.
	ErrTruncated = errors.New("msgr: truncated frame")
	// ErrRefused: the peer refused the handshake; the error carries the
	// reason the peer gave.
	ErrRefused = errors.New("msgr: refused by peer")
	// ErrHandshake: the local side gave up on the handshake (auth error,
	// too many steps, timeout, wrong peer).
	ErrHandshake = errors.New("msgr: handshake failed")
	// ErrPeerReset: the peer restarted or lost the session, so what was
	// queued for it was dropped (EventReset carries it).
	ErrPeerReset = errors.New("msgr: peer reset the session")
	// ErrWrongPeer: the entity at the address is not the one expected.
	ErrWrongPeer = errors.New("msgr: wrong peer")
)
