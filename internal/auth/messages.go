package auth

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// The handshake payloads. Each is an envelope{kind u8, fields}; layouts
// are in docs/AUTH.md.

const handshakeVersion = 1

// Payload kinds.
const (
	kindMonHello       uint8 = 1 // client -> mon: name, client nonce
	kindMonChallenge   uint8 = 2 // mon -> client: server nonce
	kindMonAuth        uint8 = 3 // client -> mon: proof, services wanted
	kindMonGrant       uint8 = 4 // mon -> client: global id, sealed session key, sealed tickets
	kindAuthorizer     uint8 = 5 // client -> service: ticket, sealed proof
	kindAuthorizerDone uint8 = 6 // service -> client: sealed reply
)

// nonceSize is the size of every handshake nonce.
const nonceSize = 32

type monHello struct {
	name  EntityName
	nonce []byte
}

type monChallenge struct{ nonce []byte }

type monAuth struct {
	proof    []byte
	services []string
}

type monGrant struct {
	globalID   uint64
	sessionBox []byte // mon session key, sealed under the client's secret
	ticketsBox []byte // ticket grant, sealed under the mon session key
}

type authorizer struct {
	ticket   []byte // ticketBlob
	proofBox []byte // authorizerProof, sealed under the ticket's session key
}

type authorizerDone struct{ box []byte } // authorizerReply, sealed likewise

// authorizerProof proves the client holds the ticket's session key, now.
type authorizerProof struct {
	nonce     []byte
	timestamp int64 // unix nanoseconds
	globalID  uint64
}

// authorizerReply proves the service opened the ticket.
type authorizerReply struct {
	clientNonce []byte
	serverNonce []byte
}

func encodeMsg(kind uint8, body func(e *encoding.Encoder)) []byte {
	var e encoding.Encoder
	m := e.Begin(handshakeVersion, 1)
	e.Uint8(kind)
	body(&e)
	e.End(m)
	return e.Data()
}

// decodeMsg decodes a payload of kind, reading its fields with body.
func decodeMsg(b []byte, kind uint8, body func(d *encoding.Decoder)) error {
	d := encoding.NewDecoder(b)
	d.Begin(handshakeVersion)
	if k := d.Uint8(); d.Err() == nil && k != kind {
		d.Fail(fmt.Errorf("payload kind %d, want %d", k, kind))
	}
	if d.Err() == nil {
		body(d)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return malformed(fmt.Sprintf("payload kind %d", kind), err)
	}
	return nil
}

// nonce reads a nonce of exactly nonceSize bytes.
func nonce(d *encoding.Decoder) []byte {
	b := d.Bytes(nonceSize)
	if d.Err() == nil && len(b) != nonceSize {
		d.Fail(fmt.Errorf("nonce of %d bytes, want %d", len(b), nonceSize))
	}
	return b
}

func (m *monHello) encode() []byte {
	return encodeMsg(kindMonHello, func(e *encoding.Encoder) { encodeName(e, m.name); e.Bytes(m.nonce) })
}

func decodeMonHello(b []byte) (m monHello, err error) {
	err = decodeMsg(b, kindMonHello, func(d *encoding.Decoder) { m.name = decodeName(d); m.nonce = nonce(d) })
	return m, err
}

func (m *monChallenge) encode() []byte {
	return encodeMsg(kindMonChallenge, func(e *encoding.Encoder) { e.Bytes(m.nonce) })
}

func decodeMonChallenge(b []byte) (m monChallenge, err error) {
	err = decodeMsg(b, kindMonChallenge, func(d *encoding.Decoder) { m.nonce = nonce(d) })
	return m, err
}

func (m *monAuth) encode() []byte {
	return encodeMsg(kindMonAuth, func(e *encoding.Encoder) {
		e.Bytes(m.proof)
		e.Uvarint(uint64(len(m.services)))
		for _, s := range m.services {
			e.String(s)
		}
	})
}

func decodeMonAuth(b []byte) (m monAuth, err error) {
	err = decodeMsg(b, kindMonAuth, func(d *encoding.Decoder) {
		m.proof = d.Bytes(SignatureSize)
		n := d.Count(2)
		if n > maxServices {
			d.Fail(fmt.Errorf("%d services, limit %d", n, maxServices))
		}
		for i := 0; i < n && d.Err() == nil; i++ {
			m.services = append(m.services, decodeService(d))
		}
	})
	return m, err
}

func (m *monGrant) encode() []byte {
	return encodeMsg(kindMonGrant, func(e *encoding.Encoder) {
		e.Uint64(m.globalID)
		e.Bytes(m.sessionBox)
		e.Bytes(m.ticketsBox)
	})
}

func decodeMonGrant(b []byte) (m monGrant, err error) {
	err = decodeMsg(b, kindMonGrant, func(d *encoding.Decoder) {
		m.globalID, m.sessionBox, m.ticketsBox = d.Uint64(), d.Bytes(maxBlob), d.Bytes(maxServices*maxBlob)
	})
	return m, err
}

func (m *authorizer) encode() []byte {
	return encodeMsg(kindAuthorizer, func(e *encoding.Encoder) { e.Bytes(m.ticket); e.Bytes(m.proofBox) })
}

func decodeAuthorizer(b []byte) (m authorizer, err error) {
	err = decodeMsg(b, kindAuthorizer, func(d *encoding.Decoder) { m.ticket, m.proofBox = d.Bytes(maxBlob), d.Bytes(maxBlob) })
	return m, err
}

func (m *authorizerDone) encode() []byte {
	return encodeMsg(kindAuthorizerDone, func(e *encoding.Encoder) { e.Bytes(m.box) })
}

func decodeAuthorizerDone(b []byte) (m authorizerDone, err error) {
	err = decodeMsg(b, kindAuthorizerDone, func(d *encoding.Decoder) { m.box = d.Bytes(maxBlob) })
	return m, err
}

// The sealed plaintexts reuse the envelope without a kind.

func (p *authorizerProof) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(handshakeVersion, 1)
	e.Bytes(p.nonce)
	e.Int64(p.timestamp)
	e.Uint64(p.globalID)
	e.End(m)
	return e.Data()
}

func decodeAuthorizerProof(b []byte) (p authorizerProof, err error) {
	d := encoding.NewDecoder(b)
	d.Begin(handshakeVersion)
	p.nonce, p.timestamp, p.globalID = nonce(d), d.Int64(), d.Uint64()
	d.End()
	if err := d.Finish(); err != nil {
		return p, malformed("authorizer proof", err)
	}
	return p, nil
}

func (r *authorizerReply) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(handshakeVersion, 1)
	e.Bytes(r.clientNonce)
	e.Bytes(r.serverNonce)
	e.End(m)
	return e.Data()
}

func decodeAuthorizerReply(b []byte) (r authorizerReply, err error) {
	d := encoding.NewDecoder(b)
	d.Begin(handshakeVersion)
	r.clientNonce, r.serverNonce = nonce(d), nonce(d)
	d.End()
	if err := d.Finish(); err != nil {
		return r, malformed("authorizer reply", err)
	}
	return r, nil
}

// monTranscript is what the client's proof and the mon's sealed session
// key are bound to: who, and both nonces.
func monTranscript(name EntityName, clientNonce, serverNonce []byte) []byte {
	var e encoding.Encoder
	encodeName(&e, name)
	e.Bytes(clientNonce)
	e.Bytes(serverNonce)
	return e.Data()
}

// clientProof is the client's proof of its secret for a transcript.
func clientProof(secret Secret, transcript []byte) []byte {
	return Sign(deriveKey(secret[:], nil, purposeClientProof), transcript)
}

func newNonce() []byte {
	k := NewSecret()
	return k[:]
}
