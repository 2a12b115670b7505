package auth

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestServiceHandshake(t *testing.T) {
	c := newCluster(t)
	tk := c.ticket(t, "client.rbd", "osd")
	sc := c.serviceClient(tk)
	ss := c.osd.NewHandshake().(*ServiceServer)
	if s, err := handshake(sc, ss); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	if ss.Peer() != name(t, "client.rbd") || ss.Caps()["osd"] != "allow rw pool=rbd" || ss.GlobalID() != tk.GlobalID {
		t.Errorf("peer %v caps %v global id %d", ss.Peer(), ss.Caps(), ss.GlobalID())
	}
	if len(sc.SessionKey()) != 32 || !bytes.Equal(sc.SessionKey(), ss.SessionKey()) {
		t.Fatalf("connection keys differ or are empty")
	}
	if bytes.Equal(sc.SessionKey(), tk.SessionKey[:]) {
		t.Error("connection key is the ticket's session key; want one derived per connection")
	}

	// Each connection with the same ticket gets its own key.
	sc2, ss2 := c.serviceClient(tk), c.osd.NewHandshake()
	if s, err := handshake(sc2, ss2); err != nil {
		t.Fatalf("second connection: %s: %v", s, err)
	}
	if bytes.Equal(sc.SessionKey(), sc2.SessionKey()) {
		t.Error("two connections share a key")
	}
	if c.osdCount.Authenticated() != 2 {
		t.Errorf("authenticated = %d", c.osdCount.Authenticated())
	}
	if _, _, err := ss.Step([]byte("x")); err == nil {
		t.Error("step after done succeeded")
	}
}

// present runs a handshake of a client holding tk against v and returns
// the server's error (the client must not fail first).
func present(t *testing.T, sc ClientHandshake, v *Verifier) error {
	t.Helper()
	s, err := handshake(sc, v.NewHandshake())
	if err != nil && s != serverSide {
		t.Fatalf("client failed first: %v", err)
	}
	return err
}

func TestServiceRefusesExpiredTicket(t *testing.T) {
	c := newCluster(t)
	tk := c.ticket(t, "client.rbd", "osd")
	c.clock.Advance(ttl)
	wantRefusal(t, present(t, c.serviceClient(tk), c.osd), ReasonExpired, &c.osdCount)
}

func TestServiceRefusesTicketNotYetValid(t *testing.T) {
	c := newCluster(t)
	tk := c.ticket(t, "client.rbd", "osd")
	// The osd's clock lags the monitor's by more than the allowed skew.
	lag := &fakeClock{now: c.clock.Now().Add(-10 * time.Minute)}
	v, err := NewVerifier(VerifierConfig{Service: "osd", Keys: keysOf(t, c, "osd"), Now: lag.Now})
	if err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, present(t, NewServiceClient(ServiceClientConfig{Ticket: tk, Now: lag.Now}), v), ReasonExpired, nil)
}

func TestServiceRefusesTicketForAnotherService(t *testing.T) {
	c := newCluster(t)
	mdsTicket := c.ticket(t, "client.admin", "mds")
	wantRefusal(t, present(t, c.serviceClient(mdsTicket), c.osd), ReasonWrongService, &c.osdCount)

	// Relabelled as an osd ticket, it names an osd key but does not open
	// under it.
	b, err := decodeTicketBlob(mdsTicket.Blob)
	if err != nil {
		t.Fatal(err)
	}
	b.service = "osd"
	mdsTicket.Blob = b.encode()
	err = present(t, c.serviceClient(mdsTicket), c.osd)
	wantRefusal(t, err, ReasonBadTicket, nil)
}

func TestServiceRefusesRotatedOutKey(t *testing.T) {
	c := newCluster(t)
	tk := c.ticket(t, "client.rbd", "osd")

	// The osd's set still holds the key, but it has expired.
	c.clock.Advance(2 * ttl)
	wantRefusal(t, present(t, c.serviceClient(tk), c.osd), ReasonUnknownKey, &c.osdCount)

	// After rotation the key is gone from the set.
	c.rotate(t)
	if err := present(t, c.serviceClient(tk), c.osd); !errors.Is(err, ErrDenied) {
		t.Fatalf("got %v", err)
	} else if r, _ := ReasonOf(err); r != ReasonUnknownKey {
		t.Fatalf("reason %q, want %q", r, ReasonUnknownKey)
	}
	// And a verifier that never received any keys knows none.
	v, err := NewVerifier(VerifierConfig{Service: "osd", Now: c.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, present(t, c.serviceClient(tk), v), ReasonUnknownKey, nil)
}

// TestServiceAcceptsPreviousKey: tickets sealed under the previous
// rotating key stay valid after a rotation, and new tickets use the new
// key.
func TestServiceAcceptsPreviousKey(t *testing.T) {
	c := newCluster(t)
	c.clock.Advance(50 * time.Minute)
	old := c.ticket(t, "client.rbd", "osd")

	c.clock.Advance(20 * time.Minute) // into the next key's turn
	c.rotate(t)
	keys, _ := c.mon.ServiceKeys("osd")
	if n := len(keys.Keys()); n != 3 {
		t.Fatalf("%d keys after rotation, want previous, current, next", n)
	}
	if err := present(t, c.serviceClient(old), c.osd); err != nil {
		t.Fatalf("ticket under the previous key refused: %v", err)
	}
	fresh := c.ticket(t, "client.rbd", "osd")
	if keyID(t, fresh) == keyID(t, old) {
		t.Errorf("new ticket sealed under key %d, same as before rotation", keyID(t, fresh))
	}
	if err := present(t, c.serviceClient(fresh), c.osd); err != nil {
		t.Fatalf("ticket under the current key refused: %v", err)
	}
}

func TestServiceRefusesForgedTicket(t *testing.T) {
	c := newCluster(t)
	genuine := c.ticket(t, "client.rbd", "osd")
	id := keyID(t, genuine)

	// A ticket with admin caps, sealed under a key the forger made up
	// but labelled with the real key id.
	forged := ticket{entity: name(t, "client.admin"), globalID: 1, service: "osd", caps: AllCaps,
		sessionKey: NewSecret(), validFrom: c.clock.Now(), validUntil: c.clock.Now().Add(ttl)}
	tk := ServiceTicket{Service: "osd", GlobalID: 1, SessionKey: forged.sessionKey,
		Blob: sealTicket(&forged, ServiceKey{ID: id, Secret: NewSecret()})}
	wantRefusal(t, present(t, c.serviceClient(tk), c.osd), ReasonBadTicket, &c.osdCount)

	// A genuine ticket with one bit flipped in its sealed part.
	b, _ := decodeTicketBlob(genuine.Blob)
	b.box[len(b.box)/2] ^= 1
	genuine.Blob = b.encode()
	wantRefusal(t, present(t, c.serviceClient(genuine), c.osd), ReasonBadTicket, nil)
}

func TestServiceRefusesTamperedAuthorizer(t *testing.T) {
	c := newCluster(t)
	tk := c.ticket(t, "client.rbd", "osd")

	// A proof sealed with the wrong session key: someone who copied the
	// ticket off the wire but does not hold its session key.
	thief := tk
	thief.SessionKey = NewSecret()
	wantRefusal(t, present(t, c.serviceClient(thief), c.osd), ReasonBadProof, &c.osdCount)

	// A bit flipped in the sealed proof.
	out, _, _ := c.serviceClient(tk).Step(nil)
	a, _ := decodeAuthorizer(out)
	a.proofBox[len(a.proofBox)-1] ^= 1
	_, _, err := c.osd.NewHandshake().Step(a.encode())
	wantRefusal(t, err, ReasonBadProof, nil)
}

func TestServiceRefusesReplay(t *testing.T) {
	c := newCluster(t)
	tk := c.ticket(t, "client.rbd", "osd")
	out, _, _ := c.serviceClient(tk).Step(nil)
	if _, _, err := c.osd.NewHandshake().Step(out); err != nil {
		t.Fatal(err)
	}
	c.clock.Advance(time.Minute)
	_, _, err := c.osd.NewHandshake().Step(out)
	wantRefusal(t, err, ReasonReplay, &c.osdCount)

	// Once outside the window the copy is stale, still refused.
	c.clock.Advance(5 * time.Minute)
	_, _, err = c.osd.NewHandshake().Step(out)
	wantRefusal(t, err, ReasonStale, &c.osdCount)
}

func TestServiceRefusesStaleAuthorizer(t *testing.T) {
	c := newCluster(t)
	tk := c.ticket(t, "client.rbd", "osd")
	ahead := &fakeClock{now: c.clock.Now().Add(6 * time.Minute)}
	sc := NewServiceClient(ServiceClientConfig{Ticket: tk, Now: ahead.Now})
	wantRefusal(t, present(t, sc, c.osd), ReasonStale, &c.osdCount)
}

func TestServiceReplayCacheBound(t *testing.T) {
	c := newCluster(t)
	v, err := NewVerifier(VerifierConfig{Service: "osd", Keys: keysOf(t, c, "osd"), Now: c.clock.Now, MaxReplayEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	tk := c.ticket(t, "client.rbd", "osd")
	for i := range 2 {
		if err := present(t, c.serviceClient(tk), v); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	err = present(t, c.serviceClient(tk), v)
	wantRefusal(t, err, ReasonReplay, nil)
	// Entries leave once their timestamps are out of the window.
	c.clock.Advance(5*time.Minute + time.Second)
	if err := present(t, c.serviceClient(tk), v); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

// TestServiceClientRefusesImpostor: a daemon that cannot open the ticket
// cannot prove itself, and a reply recorded from another connection does
// not fit this one.
func TestServiceClientRefusesImpostor(t *testing.T) {
	c := newCluster(t)
	tk := c.ticket(t, "client.rbd", "osd")

	sc := c.serviceClient(tk)
	sc.Step(nil)
	fake := (&authorizerDone{box: seal(randKey(), purposeAuthReply, nil, tk.Blob)}).encode()
	_, _, err := sc.Step(fake)
	wantRefusal(t, err, ReasonBadProof, nil)

	first := c.serviceClient(tk)
	out, _, _ := first.Step(nil)
	reply, _, err := c.osd.NewHandshake().Step(out)
	if err != nil {
		t.Fatal(err)
	}
	second := c.serviceClient(tk)
	second.Step(nil)
	_, _, err = second.Step(reply)
	wantRefusal(t, err, ReasonBadProof, nil)
	if second.SessionKey() != nil {
		t.Error("session key set after a refusal")
	}
}

func TestServiceRefusesMalformed(t *testing.T) {
	c := newCluster(t)
	for _, in := range [][]byte{nil, {1, 1, 0, 0, 0, 0}, (&monHello{name: name(t, "client.a"), nonce: newNonce()}).encode()} {
		_, _, err := c.osd.NewHandshake().Step(in)
		if !errors.Is(err, ErrMalformed) || errors.Is(err, ErrDenied) {
			t.Errorf("Step(%x) = %v, want ErrMalformed", in, err)
		}
	}
}

func TestVerifierSetKeysChecksService(t *testing.T) {
	c := newCluster(t)
	if err := c.osd.SetKeys(keysOf(t, c, "mds")); err == nil {
		t.Error("osd verifier took mds keys")
	}
}

func keysOf(t *testing.T, c *cluster, service string) *RotatingKeys {
	t.Helper()
	k, ok := c.mon.ServiceKeys(service)
	if !ok {
		t.Fatalf("no %s keys", service)
	}
	return k
}

func keyID(t *testing.T, tk ServiceTicket) uint64 {
	t.Helper()
	b, err := decodeTicketBlob(tk.Blob)
	if err != nil {
		t.Fatal(err)
	}
	return b.keyID
}
