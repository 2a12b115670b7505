package auth

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// side says which end of a handshake failed.
type side string

const (
	clientSide side = "client"
	serverSide side = "server"
)

// handshake drives c and s against each other as the messenger does,
// passing each payload across, and returns the first error and its side.
func handshake(c ClientHandshake, s ServerHandshake) (side, error) {
	out, done, err := c.Step(nil)
	if err != nil {
		return clientSide, err
	}
	if done {
		return clientSide, fmt.Errorf("client done before the server spoke")
	}
	for range 16 {
		sout, sdone, err := s.Step(out)
		if err != nil {
			return serverSide, err
		}
		out, done, err = c.Step(sout)
		if err != nil {
			return clientSide, err
		}
		if done != sdone {
			return clientSide, fmt.Errorf("client done %v, server done %v", done, sdone)
		}
		if done {
			return "", nil
		}
	}
	return serverSide, fmt.Errorf("handshake did not end")
}

// cluster is a monitor authority and an osd and mds verifier sharing a
// fake clock, with a keyring of a few entities.
type cluster struct {
	clock    *fakeClock
	keyring  Keyring
	mon      *Authority
	osd, mds *Verifier
	monCount Counters
	osdCount Counters
	mdsCount Counters
}

const ttl = time.Hour

func newCluster(t testing.TB) *cluster {
	t.Helper()
	c := &cluster{clock: &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}}
	c.keyring = Keyring{
		name(t, "client.admin"): {Key: NewSecret(), Caps: Caps{"mon": "allow *", "osd": "allow *", "mds": "allow *"}},
		name(t, "client.rbd"):   {Key: NewSecret(), Caps: Caps{"mon": "profile client", "osd": "allow rw pool=rbd"}},
		name(t, "osd.0"):        {Key: NewSecret(), Caps: Caps{"mon": "profile osd", "osd": "profile osd"}},
	}
	var err error
	c.mon, err = NewAuthority(AuthorityConfig{Keys: c.keyring, Now: c.clock.Now, TicketTTL: ttl, Events: c.monCount.Events()})
	if err != nil {
		t.Fatal(err)
	}
	c.mon.Rotate(c.clock.Now())
	c.osd = c.newVerifier(t, "osd", &c.osdCount)
	c.mds = c.newVerifier(t, "mds", &c.mdsCount)
	return c
}

func (c *cluster) newVerifier(t testing.TB, service string, count *Counters) *Verifier {
	t.Helper()
	keys, _ := c.mon.ServiceKeys(service)
	v, err := NewVerifier(VerifierConfig{Service: service, Keys: keys, Now: c.clock.Now, Events: count.Events()})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// rotate rotates the monitor's keys and hands the new sets to the
// verifiers, as the monitor's distribution would.
func (c *cluster) rotate(t testing.TB) {
	t.Helper()
	c.mon.Rotate(c.clock.Now())
	for _, v := range []*Verifier{c.osd, c.mds} {
		keys, _ := c.mon.ServiceKeys(v.cfg.Service)
		if err := v.SetKeys(keys); err != nil {
			t.Fatal(err)
		}
	}
}

// login authenticates name with the monitor and returns its client side.
func (c *cluster) login(t testing.TB, who string, services ...string) (*MonClient, *MonServer) {
	t.Helper()
	n := name(t, who)
	mc := NewMonClient(MonClientConfig{Name: n, Secret: c.keyring[n].Key, Services: services})
	ms := c.mon.NewHandshake().(*MonServer)
	if s, err := handshake(mc, ms); err != nil {
		t.Fatalf("login %s: %s: %v", who, s, err)
	}
	return mc, ms
}

// ticket returns who's ticket for service.
func (c *cluster) ticket(t testing.TB, who, service string) ServiceTicket {
	t.Helper()
	mc, _ := c.login(t, who, service)
	for _, tk := range mc.Tickets() {
		if tk.Service == service {
			return tk
		}
	}
	t.Fatalf("no %s ticket for %s", service, who)
	return ServiceTicket{}
}

func (c *cluster) serviceClient(tk ServiceTicket) *ServiceClient {
	return NewServiceClient(ServiceClientConfig{Ticket: tk, Now: c.clock.Now})
}

func name(t testing.TB, s string) EntityName {
	t.Helper()
	n, err := ParseEntityName(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wantRefusal checks err is a refusal for reason, counted once in count.
func wantRefusal(t *testing.T, err error, reason Reason, count *Counters) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want refusal %q", reason)
	}
	got, ok := ReasonOf(err)
	if !ok || got != reason {
		t.Fatalf("error %v: reason %q, want %q", err, got, reason)
	}
	if reason != ReasonMalformed && !errors.Is(err, ErrDenied) {
		t.Fatalf("error %v does not wrap ErrDenied", err)
	}
	if count != nil {
		if n := count.Refusals()[reason]; n != 1 {
			t.Fatalf("refusals[%q] = %d, want 1 (all: %v)", reason, n, count.Refusals())
		}
	}
}

func randKey() []byte {
	s := NewSecret()
	return s[:]
}
