package msgr

import (
	"errors"
	"hash/crc32"
	"syscall"
	"unsafe"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/crc32c"
)

// Message is what the messenger carries: a type and version the
// application interprets (internal/wire) and an opaque payload. The
// messenger assigns sequence numbers itself. A received Payload belongs to
// the Dispatcher, which may hand it back with Messenger.Release; a sent one must not be modified until the session
// acknowledges it (the messenger keeps it for retransmission).
type Message struct {
	Type    uint16
	Version uint16
	Payload []byte
	// Tail, if set, continues Payload on the wire: the peer receives
	// Payload and Tail's slices, in order, as one Payload. A sender puts
	// large data it holds already (an object read from the store) there
	// rather than copy it into Payload. Like Payload, it must not be
	// modified until the session acknowledges the message. Received
	// messages have none.
	Tail [][]byte
	// TailCRC, if set, returns the crc32c of a Tail slice the sender
	// knows already (ok false for the others), which Send then combines
	// instead of hashing the slice: a store derives the checksum of what
	// it read from the block checksums it verified. A wrong answer makes
	// the peer drop the frame as corrupt.
	TailCRC func(b []byte) (crc uint32, ok bool)
	// PieceCRCs, on a received message of 64 KiB or more, holds the
	// crc32c of each whole crc32c.PieceLen piece of Payload, computed
	// while checking the frame's: PieceCRCs[i] covers
	// Payload[i*PieceLen:(i+1)*PieceLen]. A store keeps object data with
	// such checksums, and takes them rather than hashing the data again.
	PieceCRCs []uint32
	// Done, if set, is called once the messenger is finished with a
	// message Send accepted: written, on a lossy session; acknowledged by
	// the peer or dropped, on a lossless one. Payload and Tail are the
	// sender's again from then (a reader recycles its buffers). It runs on
	// a messenger goroutine, possibly under the session's lock: it must
	// be quick and must not call into the session. It is not called when
	// Send returns an error.
	Done func()
}

// Len is the length of the payload on the wire: Payload and Tail.
func (m *Message) Len() int {
	n := len(m.Payload)
	for _, b := range m.Tail {
		n += len(b)
	}
	return n
}

// done calls Done if set.
func (m *Message) done() {
	if m.Done != nil {
		m.Done()
	}
}

// checksum returns the crc32c of the payload on the wire.
func (m *Message) checksum() uint32 {
	crc := crc32.Checksum(m.Payload, crcTable)
	for _, b := range m.Tail {
		if m.TailCRC != nil {
			if known, ok := m.TailCRC(b); ok {
				crc = crc32c.Combine(crc, known, uint64(len(b)))
				continue
			}
		}
		crc = crc32.Update(crc, crcTable, b)
	}
	return crc
}

// PieceCRCsOf returns the crc32c of each whole crc32c.PieceLen piece of
// b, if b lies in m's Payload starting at a piece boundary and m has
// PieceCRCs; else nil.
func (m *Message) PieceCRCsOf(b []byte) []uint32 {
	if len(b) < crc32c.PieceLen || len(m.PieceCRCs) == 0 {
		return nil
	}
	start := uintptr(unsafe.Pointer(&m.Payload[0]))
	at := uintptr(unsafe.Pointer(&b[0]))
	if at < start || at-start > uintptr(len(m.Payload)-len(b)) || (at-start)%crc32c.PieceLen != 0 {
		return nil
	}
	first := int(at-start) / crc32c.PieceLen
	n := len(b) / crc32c.PieceLen
	if first+n > len(m.PieceCRCs) {
		return nil
	}
	return m.PieceCRCs[first : first+n : first+n]
}

// Peer describes the sender of a dispatched message.
type Peer struct {
	// Name is the peer's entity name: authenticated by the auth handshake
	// on the accepting side, the name dialed on the connecting side.
	Name auth.EntityName
	// Caps are the capabilities auth granted the peer; set on the
	// accepting side only (the client contract carries no server caps).
	Caps auth.Caps
	// Session carries replies back to the peer.
	Session *Session
}

// EventKind classifies an Event.
type EventKind int

const (
	// EventConnected: a connection of the session completed its handshake
	// (the first one, or a reconnect that resumed the session).
	EventConnected EventKind = iota + 1
	// EventReset: the peer restarted or lost the session; messages queued
	// for its old incarnation were dropped (Dropped counts them). On the
	// connecting side the Session lives on with fresh sequence numbers;
	// on the accepting side it is closed and a new one follows.
	EventReset
	// EventFailed: the session closed (a lossy fault, a refused
	// handshake, Session.Close, Messenger.Close); Dropped messages were
	// never acknowledged. Err says why.
	EventFailed
	// EventDialRefused: a (re)connect of an outgoing session found
	// nothing listening at Addr (connection refused, ECONNREFUSED): the
	// peer's process is gone, as opposed to slow or cut off, which time
	// out instead. A connection that breaks (the peer reset or closed it)
	// is dialled again after the first backoff, so a peer that died with
	// a connection open is found this way too. The session lives on and
	// keeps dialling, with a growing backoff, each refusal another event.
	EventDialRefused
)

func (k EventKind) String() string {
	switch k {
	case EventConnected:
		return "connected"
	case EventReset:
		return "reset"
	case EventFailed:
		return "failed"
	case EventDialRefused:
		return "dial refused"
	}
	return "EventKind(?)"
}

// Event reports a change of a session.
type Event struct {
	Kind    EventKind
	Peer    auth.EntityName
	Session *Session
	Dropped int    // messages dropped (EventReset, EventFailed)
	Err     error  // the cause (EventReset, EventFailed, EventDialRefused)
	Addr    string // the address dialled (EventDialRefused)
}

// ConnRefused reports whether err from a Network's Dial means that
// nothing listens at the address (ECONNREFUSED; memnet's refusal wraps
// it too), which a dead peer's host answers at once, unlike a timeout.
func ConnRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// Dispatcher receives what sessions deliver. Each session calls it from
// one goroutine, in order: its messages in sequence, its events between
// them where they happened. Different sessions call it concurrently.
// Dispatch should not block for long: messages waiting for it count
// against the dispatch throttle, and a full throttle stops every
// connection from reading.
type Dispatcher interface {
	Dispatch(from Peer, msg Message)
	HandleEvent(ev Event)
}
