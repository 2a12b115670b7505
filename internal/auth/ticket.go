package auth

import (
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
)

// Tickets. A ticket tells a service who the holder is: entity, global id,
// caps, a session key and a validity window. The monitor seals it under
// the service's current rotating key, so only the service's daemons can
// read it, and hands it to the client together with the session key
// (sealed for the client). The client cannot read or alter the ticket; it
// proves it holds the session key when it presents the ticket.

const ticketVersion = 1

// ticket is a ticket's sealed content.
type ticket struct {
	entity     EntityName
	globalID   uint64
	service    string
	caps       Caps
	sessionKey Secret
	validFrom  time.Time
	validUntil time.Time
}

func (t *ticket) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(ticketVersion, 1)
	encodeName(&e, t.entity)
	e.Uint64(t.globalID)
	e.String(t.service)
	encodeCaps(&e, t.caps)
	encodeSecret(&e, t.sessionKey)
	encodeTime(&e, t.validFrom)
	encodeTime(&e, t.validUntil)
	e.End(m)
	return e.Data()
}

func decodeTicket(b []byte) (ticket, error) {
	d := encoding.NewDecoder(b)
	d.Begin(ticketVersion)
	t := ticket{entity: decodeName(d), globalID: d.Uint64(), service: decodeService(d),
		caps: decodeCaps(d), sessionKey: decodeSecret(d), validFrom: decodeTime(d), validUntil: decodeTime(d)}
	d.End()
	if err := d.Finish(); err != nil {
		return ticket{}, malformed("ticket", err)
	}
	return t, nil
}

// ticketBlob is a sealed ticket as it travels: which service and key id
// it is for, in the clear, and the sealed ticket, which binds them.
type ticketBlob struct {
	service string
	keyID   uint64
	box     []byte
}

func (b *ticketBlob) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(ticketVersion, 1)
	e.String(b.service)
	e.Uvarint(b.keyID)
	e.Bytes(b.box)
	e.End(m)
	return e.Data()
}

func decodeTicketBlob(b []byte) (ticketBlob, error) {
	d := encoding.NewDecoder(b)
	d.Begin(ticketVersion)
	t := ticketBlob{service: decodeService(d), keyID: d.Uvarint(), box: d.Bytes(maxBlob)}
	d.End()
	if err := d.Finish(); err != nil {
		return ticketBlob{}, malformed("ticket blob", err)
	}
	return t, nil
}

// ticketAD is the additional data binding a sealed ticket to its header.
func ticketAD(service string, keyID uint64) []byte {
	return fmt.Appendf(nil, "%s/%d", service, keyID)
}

// sealTicket seals t under key.
func sealTicket(t *ticket, key ServiceKey) []byte {
	blob := ticketBlob{service: t.service, keyID: key.ID}
	blob.box = seal(key.Secret[:], purposeTicket, t.encode(), ticketAD(t.service, key.ID))
	return blob.encode()
}

// ServiceTicket is the client's side of a ticket: what it presents (Blob)
// and the session key it proves it holds.
type ServiceTicket struct {
	Service    string
	GlobalID   uint64
	SessionKey Secret
	ValidUntil time.Time // as the monitor saw it; renew before
	Blob       []byte    // opaque to the client
}

// Expired reports whether the ticket is no longer valid at now.
func (t ServiceTicket) Expired(now time.Time) bool { return !now.Before(t.ValidUntil) }

const grantVersion = 1

// encodeGrant encodes tickets for the client: the plaintext of a ticket
// grant, which is sealed under the mon session key.
func encodeGrant(ts []ServiceTicket) []byte {
	var e encoding.Encoder
	m := e.Begin(grantVersion, 1)
	e.Uvarint(uint64(len(ts)))
	for _, t := range ts {
		e.String(t.Service)
		e.Uint64(t.GlobalID)
		encodeSecret(&e, t.SessionKey)
		encodeTime(&e, t.ValidUntil)
		e.Bytes(t.Blob)
	}
	e.End(m)
	return e.Data()
}

func decodeGrant(b []byte) ([]ServiceTicket, error) {
	d := encoding.NewDecoder(b)
	d.Begin(grantVersion)
	n := d.Count(SecretSize + 12)
	if n > maxServices {
		d.Fail(fmt.Errorf("%d tickets, limit %d", n, maxServices))
	}
	var ts []ServiceTicket
	for i := 0; i < n && d.Err() == nil; i++ {
		ts = append(ts, ServiceTicket{Service: decodeService(d), GlobalID: d.Uint64(),
			SessionKey: decodeSecret(d), ValidUntil: decodeTime(d), Blob: d.Bytes(maxBlob)})
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, malformed("ticket grant", err)
	}
	return ts, nil
}

// OpenTickets opens a ticket grant sealed under key (the mon session
// key): the handshake's grant, or a renewal the monitor sent over the
// session (Authority.IssueTickets). A grant that does not open is a
// Refusal with ReasonBadProof.
func OpenTickets(key, box []byte) ([]ServiceTicket, error) {
	pt, err := open(key, purposeTicketGrant, box, nil)
	if err != nil {
		return nil, &Refusal{Reason: ReasonBadProof, Detail: "ticket grant does not open under the session key"}
	}
	return decodeGrant(pt)
}
