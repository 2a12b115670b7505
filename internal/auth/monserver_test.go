package auth

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestMonHandshake(t *testing.T) {
	c := newCluster(t)
	mc, ms := c.login(t, "client.rbd", "osd", "mds")

	if ms.Peer() != name(t, "client.rbd") {
		t.Errorf("Peer = %v", ms.Peer())
	}
	if got := ms.Caps()["osd"]; got != "allow rw pool=rbd" {
		t.Errorf("Caps[osd] = %q", got)
	}
	if len(mc.SessionKey()) != SecretSize || !bytes.Equal(mc.SessionKey(), ms.SessionKey()) {
		t.Fatalf("session keys differ or are empty: client %x, server %x", mc.SessionKey(), ms.SessionKey())
	}
	if mc.GlobalID() == 0 || mc.GlobalID() != ms.GlobalID() {
		t.Errorf("global ids: client %d, server %d", mc.GlobalID(), ms.GlobalID())
	}
	tickets := mc.Tickets()
	if len(tickets) != 2 || tickets[0].Service != "mds" || tickets[1].Service != "osd" {
		t.Fatalf("tickets = %+v", tickets)
	}
	for _, tk := range tickets {
		if want := c.clock.Now().Add(ttl); !tk.ValidUntil.Equal(want) {
			t.Errorf("%s ticket valid until %v, want %v", tk.Service, tk.ValidUntil, want)
		}
		if tk.GlobalID != mc.GlobalID() {
			t.Errorf("%s ticket global id %d, want %d", tk.Service, tk.GlobalID, mc.GlobalID())
		}
	}
	if bytes.Equal(tickets[0].SessionKey[:], tickets[1].SessionKey[:]) {
		t.Error("two tickets share a session key")
	}
	if c.monCount.Authenticated() != 1 || len(c.monCount.Refusals()) != 0 {
		t.Errorf("counters: %d authenticated, refusals %v", c.monCount.Authenticated(), c.monCount.Refusals())
	}

	// A second login gets fresh keys.
	mc2, _ := c.login(t, "client.rbd")
	if bytes.Equal(mc.SessionKey(), mc2.SessionKey()) {
		t.Error("two logins share a session key")
	}
}

func TestMonRefusesUnknownEntity(t *testing.T) {
	c := newCluster(t)
	mc := NewMonClient(MonClientConfig{Name: name(t, "client.nobody"), Secret: NewSecret()})
	s, err := handshake(mc, c.mon.NewHandshake())
	if s != serverSide {
		t.Fatalf("%s failed: %v", s, err)
	}
	wantRefusal(t, err, ReasonUnknownEntity, &c.monCount)
}

func TestMonRefusesWrongKey(t *testing.T) {
	c := newCluster(t)
	mc := NewMonClient(MonClientConfig{Name: name(t, "client.admin"), Secret: NewSecret()})
	s, err := handshake(mc, c.mon.NewHandshake())
	if s != serverSide {
		t.Fatalf("%s failed: %v", s, err)
	}
	wantRefusal(t, err, ReasonBadProof, &c.monCount)
}

// TestMonClientRefusesImpostor: a "monitor" that does not know the
// client's secret cannot produce a grant the client accepts (mutual
// authentication), even by replaying a genuine grant from another login.
func TestMonClientRefusesImpostor(t *testing.T) {
	c := newCluster(t)
	admin := name(t, "client.admin")

	// A genuine grant from an earlier login.
	mc0 := NewMonClient(MonClientConfig{Name: admin, Secret: c.keyring[admin].Key})
	ms0 := c.mon.NewHandshake()
	out, _, _ := mc0.Step(nil)
	ch, _, _ := ms0.Step(out)
	out, _, _ = mc0.Step(ch)
	oldGrant, done, err := ms0.Step(out)
	if err != nil || !done {
		t.Fatal(done, err)
	}

	for _, tc := range []struct {
		name  string
		grant func(challenge []byte) []byte
	}{
		{"replayed grant", func([]byte) []byte { return oldGrant }},
		{"made-up grant", func([]byte) []byte {
			return (&monGrant{globalID: 7, sessionBox: seal(randKey(), purposeMonSession, make([]byte, 32), nil)}).encode()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var count Counters
			mc := NewMonClient(MonClientConfig{Name: admin, Secret: c.keyring[admin].Key, Events: count.Events()})
			if _, _, err := mc.Step(nil); err != nil {
				t.Fatal(err)
			}
			challenge := (&monChallenge{nonce: newNonce()}).encode()
			if _, _, err := mc.Step(challenge); err != nil {
				t.Fatal(err)
			}
			_, _, err := mc.Step(tc.grant(challenge))
			wantRefusal(t, err, ReasonBadProof, &count)
			if mc.SessionKey() != nil {
				t.Error("session key set after a refusal")
			}
		})
	}
}

func TestMonRefusesMalformed(t *testing.T) {
	c := newCluster(t)
	for _, in := range [][]byte{nil, []byte("none client.admin"), (&monChallenge{nonce: newNonce()}).encode()} {
		_, _, err := c.mon.NewHandshake().Step(in)
		if !errors.Is(err, ErrMalformed) || errors.Is(err, ErrDenied) {
			t.Errorf("Step(%q) = %v, want ErrMalformed and not ErrDenied", in, err)
		}
	}
	if n := c.monCount.Refusals()[ReasonMalformed]; n != 3 {
		t.Errorf("malformed count %d, want 3", n)
	}
}

func TestMonHandshakeStepAfterDone(t *testing.T) {
	c := newCluster(t)
	_, ms := c.login(t, "client.admin")
	if _, _, err := ms.Step([]byte("x")); err == nil {
		t.Error("server step after done succeeded")
	}
}

func TestIssueTicketsRenewal(t *testing.T) {
	c := newCluster(t)
	mc, ms := c.login(t, "client.rbd")
	c.clock.Advance(30 * time.Minute)
	box, err := c.mon.IssueTickets(ms.Peer(), ms.GlobalID(), []string{"osd"}, ms.SessionKey(), c.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	tickets, err := OpenTickets(mc.SessionKey(), box)
	if err != nil || len(tickets) != 1 || tickets[0].Service != "osd" {
		t.Fatalf("OpenTickets = %+v, %v", tickets, err)
	}
	if s, err := handshake(c.serviceClient(tickets[0]), c.osd.NewHandshake()); err != nil {
		t.Fatalf("renewed ticket refused by %s: %v", s, err)
	}
	if _, err := OpenTickets(randKey(), box); !errors.Is(err, ErrDenied) {
		t.Errorf("OpenTickets under a wrong key: %v", err)
	}

	// A deleted entity gets no more tickets.
	delete(c.keyring, ms.Peer())
	_, err = c.mon.IssueTickets(ms.Peer(), ms.GlobalID(), []string{"osd"}, ms.SessionKey(), c.clock.Now())
	wantRefusal(t, err, ReasonUnknownEntity, &c.monCount)
}

func TestIssueTicketsNeedsRotatedKeys(t *testing.T) {
	kr := Keyring{name(t, "client.a"): {Key: NewSecret()}}
	clock := &fakeClock{}
	a, err := NewAuthority(AuthorityConfig{Keys: kr, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.IssueTickets(name(t, "client.a"), 1, []string{"osd"}, make([]byte, 32), clock.Now())
	if !errors.Is(err, ErrNoServiceKey) {
		t.Fatalf("IssueTickets before Rotate: %v", err)
	}
}
