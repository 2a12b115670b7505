package auth

import (
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
)

// Fuzz targets for every binary decoder: none may panic, and each is
// seeded with a valid encoding.

func FuzzDecodeMessages(f *testing.F) {
	n := newNonce()
	f.Add((&monHello{name: EntityName{"client", "a"}, nonce: n}).encode())
	f.Add((&monChallenge{nonce: n}).encode())
	f.Add((&monAuth{proof: make([]byte, 32), services: []string{"osd", "mds"}}).encode())
	f.Add((&monGrant{globalID: 1, sessionBox: []byte{1}, ticketsBox: []byte{2}}).encode())
	f.Add((&authorizer{ticket: []byte{1}, proofBox: []byte{2}}).encode())
	f.Add((&authorizerDone{box: []byte{1}}).encode())
	f.Add((&authorizerProof{nonce: n, timestamp: 5, globalID: 6}).encode())
	f.Add((&authorizerReply{clientNonce: n, serverNonce: n}).encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeMonHello(b)
		decodeMonChallenge(b)
		decodeMonAuth(b)
		decodeMonGrant(b)
		decodeAuthorizer(b)
		decodeAuthorizerDone(b)
		decodeAuthorizerProof(b)
		decodeAuthorizerReply(b)
	})
}

func FuzzDecodeTicket(f *testing.F) {
	tk := ticket{entity: EntityName{"client", "a"}, globalID: 1, service: "osd", caps: Caps{"osd": "allow r"},
		sessionKey: NewSecret(), validFrom: time.Unix(1, 0), validUntil: time.Unix(2, 0)}
	f.Add(tk.encode())
	f.Add(sealTicket(&tk, ServiceKey{ID: 3, Secret: NewSecret()}))
	f.Add(encodeGrant([]ServiceTicket{{Service: "osd", GlobalID: 1, Blob: []byte{1, 2}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, err := decodeTicket(b); err == nil {
			if _, err := decodeTicket(got.encode()); err != nil {
				t.Fatalf("re-encoded ticket does not decode: %v", err)
			}
		}
		if got, err := decodeTicketBlob(b); err == nil {
			if _, err := decodeTicketBlob(got.encode()); err != nil {
				t.Fatalf("re-encoded blob does not decode: %v", err)
			}
		}
		decodeGrant(b)
	})
}

func FuzzDecodeRotatingKeys(f *testing.F) {
	r, _ := NewRotatingKeys("osd", time.Hour)
	r.Rotate(time.Unix(1e9, 0))
	var e encoding.Encoder
	r.Encode(&e)
	f.Add(e.Data())
	f.Fuzz(func(t *testing.T, b []byte) {
		d := encoding.NewDecoder(b)
		got, err := DecodeRotatingKeys(d)
		if err != nil {
			return
		}
		got.Rotate(time.Unix(2e9, 0)) // a decoded set is safe to use
	})
}

// FuzzServerStep feeds arbitrary first payloads to both server
// handshakes: they must refuse or reject, never panic or accept.
func FuzzServerStep(f *testing.F) {
	c := newCluster(f)
	tk := c.ticket(f, "client.rbd", "osd")
	out, _, _ := c.serviceClient(tk).Step(nil)
	f.Add(out)
	f.Add((&monHello{name: EntityName{"client", "admin"}, nonce: newNonce()}).encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, done, err := c.osd.NewHandshake().Step(b); err == nil && done {
			// Only the seed's genuine authorizer can pass, once.
			if string(b) != string(out) {
				t.Fatalf("osd accepted a made-up authorizer")
			}
		}
		s := c.mon.NewHandshake()
		if _, _, err := s.Step(b); err == nil {
			if _, _, err := s.Step(b); err == nil {
				t.Fatal("mon accepted a hello as proof")
			}
		}
	})
}
