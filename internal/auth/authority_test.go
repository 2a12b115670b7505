package auth

import (
	"errors"
	"testing"
	"time"
)

// TestFollowerMonitorSealsWithSharedKeys: a second monitor that applied
// the leader's rotating keys (SetServiceKeys) issues tickets the osd
// accepts.
func TestFollowerMonitorSealsWithSharedKeys(t *testing.T) {
	c := newCluster(t)
	follower, err := NewAuthority(AuthorityConfig{Keys: c.keyring, Now: c.clock.Now, TicketTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := c.mon.ServiceKeys("osd")
	follower.SetServiceKeys(keys)
	c.mon = follower
	tk := c.ticket(t, "client.admin", "osd")
	if s, err := handshake(c.serviceClient(tk), c.osd.NewHandshake()); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
}

// TestTicketEndsWithItsKey: a ticket never outlives the rotating key it
// is sealed under, whatever the TTL.
func TestTicketEndsWithItsKey(t *testing.T) {
	c := newCluster(t)
	long, err := NewAuthority(AuthorityConfig{Keys: c.keyring, Now: c.clock.Now, TicketTTL: 10 * ttl, RotationPeriod: ttl})
	if err != nil {
		t.Fatal(err)
	}
	long.Rotate(c.clock.Now())
	c.mon = long
	tk := c.ticket(t, "client.admin", "osd")
	keys, _ := long.ServiceKeys("osd")
	cur, _ := keys.Current(c.clock.Now())
	if !tk.ValidUntil.Equal(cur.Expires) {
		t.Errorf("ticket valid until %v, key expires %v", tk.ValidUntil, cur.Expires)
	}
	if tk.Expired(c.clock.Now()) || !tk.Expired(cur.Expires) {
		t.Error("Expired wrong")
	}
}

type failingKeys struct{}

func (failingKeys) Secret(EntityName) (Secret, Caps, error) {
	return Secret{}, nil, errors.New("database unavailable")
}

// TestKeyServerFailureIsNotARefusal: a KeyServer outage is an error, not
// a refusal of the entity, and is not counted as one.
func TestKeyServerFailureIsNotARefusal(t *testing.T) {
	var count Counters
	clock := &fakeClock{}
	a, err := NewAuthority(AuthorityConfig{Keys: failingKeys{}, Now: clock.Now, Events: count.Events()})
	if err != nil {
		t.Fatal(err)
	}
	mc := NewMonClient(MonClientConfig{Name: name(t, "client.a"), Secret: NewSecret()})
	_, err = handshake(mc, a.NewHandshake())
	if err == nil || errors.Is(err, ErrDenied) || len(count.Refusals()) != 0 {
		t.Fatalf("err %v, refusals %v", err, count.Refusals())
	}
}

func TestConfigValidation(t *testing.T) {
	now := time.Now
	if _, err := NewAuthority(AuthorityConfig{Now: now}); err == nil {
		t.Error("Authority without Keys")
	}
	if _, err := NewAuthority(AuthorityConfig{Keys: Keyring{}}); err == nil {
		t.Error("Authority without Now")
	}
	if _, err := NewVerifier(VerifierConfig{Service: "osd"}); err == nil {
		t.Error("Verifier without Now")
	}
	if _, err := NewVerifier(VerifierConfig{Service: "nfs", Now: now}); err == nil {
		t.Error("Verifier for an unknown service")
	}
	if _, _, err := NewServiceClient(ServiceClientConfig{}).Step(nil); err == nil {
		t.Error("ServiceClient without Now")
	}
}

func TestReasonsAreDistinct(t *testing.T) {
	seen := map[Reason]bool{}
	for _, r := range Reasons() {
		if seen[r] {
			t.Errorf("reason %q twice", r)
		}
		seen[r] = true
	}
	if len(seen) != 10 {
		t.Errorf("%d reasons", len(seen))
	}
}

func TestNoneHandshake(t *testing.T) {
	s := &NoneServer{}
	if side, err := handshake(&NoneClient{Name: name(t, "osd.1")}, s); err != nil {
		t.Fatalf("%s: %v", side, err)
	}
	if s.Peer() != name(t, "osd.1") || s.SessionKey() != nil || s.Caps()["osd"] != "allow *" {
		t.Errorf("peer %v caps %v", s.Peer(), s.Caps())
	}
}
