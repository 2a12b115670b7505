package msgr

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/auth"
)

// Handshake payloads, each in an encoding envelope (version 1, compat 1).
// They are decoded from unauthenticated input and fuzzed.

const maxNameLen = 128 // bytes of an entity type or id

// hello is the banner each side sends first.
type hello struct {
	Name   auth.EntityName // the sender
	Nonce  uint64          // the sender's incarnation: new on every process start
	Target auth.EntityName // whom the connector expects (zero from the acceptor)
	// Port is the port the sender listens on, 0 if it does not listen (a
	// client): with the host its connection comes from and the nonce it
	// makes the sender's instance address, HOST:PORT/NONCE, which the
	// OSDs match against the blocklist (Session.PeerAddr). Version 2.
	Port uint16
}

func (h *hello) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(2, 1)
	encodeName(&e, h.Name)
	e.Uint64(h.Nonce)
	encodeName(&e, h.Target)
	e.Uint16(h.Port)
	e.End(m)
	return e.Data()
}

func decodeHello(b []byte) (hello, error) {
	var h hello
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	h.Name = decodeName(d)
	h.Nonce = d.Uint64()
	h.Target = decodeName(d)
	if v >= 2 {
		h.Port = d.Uint16()
	}
	d.End()
	if err := d.Finish(); err != nil {
		return hello{}, fmt.Errorf("%w: hello: %w", ErrCorrupt, err)
	}
	if h.Name.IsZero() {
		return hello{}, fmt.Errorf("%w: hello without a name", ErrProtocol)
	}
	return h, nil
}

func encodeName(e *encoding.Encoder, n auth.EntityName) {
	e.String(n.Type)
	e.String(n.ID)
}

func decodeName(d *encoding.Decoder) auth.EntityName {
	return auth.EntityName{Type: d.String(maxNameLen), ID: d.String(maxNameLen)}
}

// sessionReq is the connector's first signed frame: which session it
// resumes and how far it has received.
type sessionReq struct {
	ID         uint64 // chosen by the connector, unique within its incarnation
	ConnectSeq uint64 // 0 on the first connection of the session
	InSeq      uint64 // last sequence number the connector received
	Lossless   bool   // the connector's policy
}

func (s *sessionReq) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uint64(s.ID)
	e.Uint64(s.ConnectSeq)
	e.Uint64(s.InSeq)
	e.Bool(s.Lossless)
	e.End(m)
	return e.Data()
}

func decodeSessionReq(b []byte) (sessionReq, error) {
	var s sessionReq
	d := encoding.NewDecoder(b)
	d.Begin(1)
	s.ID = d.Uint64()
	s.ConnectSeq = d.Uint64()
	s.InSeq = d.Uint64()
	s.Lossless = d.Bool()
	d.End()
	if err := d.Finish(); err != nil {
		return sessionReq{}, fmt.Errorf("%w: session request: %w", ErrCorrupt, err)
	}
	return s, nil
}

// sessionOK is the acceptor's answer.
type sessionOK struct {
	InSeq uint64 // last sequence number the acceptor received
	Reset bool   // the acceptor holds no state for the session: start over
}

func (s *sessionOK) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uint64(s.InSeq)
	e.Bool(s.Reset)
	e.End(m)
	return e.Data()
}

func decodeSessionOK(b []byte) (sessionOK, error) {
	var s sessionOK
	d := encoding.NewDecoder(b)
	d.Begin(1)
	s.InSeq = d.Uint64()
	s.Reset = d.Bool()
	d.End()
	if err := d.Finish(); err != nil {
		return sessionOK{}, fmt.Errorf("%w: session reply: %w", ErrCorrupt, err)
	}
	return s, nil
}

// maxReasonLen bounds the text of an error frame.
const maxReasonLen = 1024

// reasonText makes a refusal reason printable and bounded.
func reasonText(b []byte) string {
	if len(b) > maxReasonLen {
		b = b[:maxReasonLen]
	}
	return fmt.Sprintf("%q", b)
}
