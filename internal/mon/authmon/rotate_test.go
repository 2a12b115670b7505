package authmon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

// handshake drives c and s against each other as the messenger does.
func handshake(c auth.ClientHandshake, s auth.ServerHandshake) error {
	out, done, err := c.Step(nil)
	for range 16 {
		if err != nil || done {
			return err
		}
		var sout []byte
		if sout, _, err = s.Step(out); err != nil {
			return fmt.Errorf("server: %w", err)
		}
		out, done, err = c.Step(sout)
	}
	return errors.New("handshake did not end")
}

// login authenticates who with monitor m's Authority and returns its
// tickets for services.
func login(m *testMon, who auth.EntityName, key auth.Secret, services ...string) ([]auth.ServiceTicket, error) {
	mc := auth.NewMonClient(auth.MonClientConfig{Name: who, Secret: key, Services: services})
	if err := handshake(mc, m.authority.NewHandshake()); err != nil {
		return nil, err
	}
	return mc.Tickets(), nil
}

// verify presents tk to an osd whose keys are monitor m's.
func verify(t *testing.T, m *testMon, tk auth.ServiceTicket) error {
	t.Helper()
	keys, _ := m.authority.ServiceKeys(tk.Service)
	v, err := auth.NewVerifier(auth.VerifierConfig{Service: tk.Service, Keys: keys, Now: func() time.Time { return m.now }})
	if err != nil {
		t.Fatal(err)
	}
	return handshake(auth.NewServiceClient(auth.ServiceClientConfig{Ticket: tk, Now: func() time.Time { return m.now }}), v.NewHandshake())
}

// replicate runs the leader's Tick and applies its proposals on every
// monitor, as Raft would.
func replicate(t *testing.T, leader *testMon, mons ...*testMon) []moncmd.Command {
	t.Helper()
	cmds := leader.svc.Tick(leader.now)
	for _, c := range cmds {
		p, r := leader.svc.Prepare(c, leader.now)
		if p == nil {
			t.Fatalf("%s: %s", c, r.Status)
		}
		for _, m := range mons {
			must(t, m.commit(p))
		}
	}
	return cmds
}

// TestRotation checks that rotation goes through Tick, Prepare and Apply
// and leaves every monitor's Authority with the same keys: a ticket one
// monitor seals opens under the keys another holds.
func TestRotation(t *testing.T) {
	a, b := newTestMon(t, nil), newTestMon(t, nil)
	p, _ := a.svc.Prepare(moncmd.New("auth add", "entity", "client.app", "caps.osd", "allow rw"), a.now)
	must(t, a.commit(p))
	must(t, b.commit(p))
	app := name("client.app")
	key, _, err := b.svc.KeyServer().Secret(app)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := login(a, app, key, "osd"); !errors.Is(err, auth.ErrNoServiceKey) {
		t.Fatalf("ticket before any rotation: %v", err)
	}

	cmds := replicate(t, a, a, b)
	if len(cmds) != 1 || cmds[0].Prefix != "auth rotate" {
		t.Fatalf("first tick: %v", cmds)
	}
	for _, svc := range []string{"mon", "osd", "mds", "mgr"} {
		ka, _ := a.authority.ServiceKeys(svc)
		kb, _ := b.authority.ServiceKeys(svc)
		if len(ka.Keys()) != 2 || !bytes.Equal(rotatingValue(ka), rotatingValue(kb)) {
			t.Errorf("%s: %d keys; monitors agree: %v", svc, len(ka.Keys()), bytes.Equal(rotatingValue(ka), rotatingValue(kb)))
		}
	}
	tks, err := login(a, app, key, "osd")
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(t, b, tks[0]); err != nil {
		t.Errorf("mon.a's ticket under mon.b's keys: %v", err)
	}
	if cmds := a.svc.Tick(a.now); len(cmds) != 0 {
		t.Errorf("keys just rotated, tick asks %v", cmds)
	}

	// One period on, the next key is due.
	for _, m := range []*testMon{a, b} {
		m.now = m.now.Add(time.Hour)
	}
	before, _ := a.authority.ServiceKeys("osd")
	if cmds := replicate(t, a, a, b); len(cmds) != 1 {
		t.Fatalf("tick a period on: %v", cmds)
	}
	after, _ := b.authority.ServiceKeys("osd")
	if last := after.Keys()[len(after.Keys())-1]; last.ID <= before.Keys()[len(before.Keys())-1].ID {
		t.Error("no new key after a period")
	}
	tks, err = login(b, app, key, "osd")
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(t, a, tks[0]); err != nil {
		t.Errorf("mon.b's ticket under mon.a's keys after rotation: %v", err)
	}
}

// TestTickAsksOnce checks that the leader does not ask again while its
// request may be in flight, and asks again when it may have been lost.
func TestTickAsksOnce(t *testing.T) {
	m := newTestMon(t, seedKeyring())
	if got := m.svc.Tick(m.now); len(got) != 2 || got[0].Prefix != "auth import" || got[1].Prefix != "auth rotate" {
		t.Fatalf("first tick: %v", got)
	}
	m.now = m.now.Add(time.Second)
	if got := m.svc.Tick(m.now); len(got) != 0 {
		t.Fatalf("tick a second later: %v", got)
	}
	m.now = m.now.Add(askAgainAfter)
	got := m.svc.Tick(m.now)
	if len(got) != 2 {
		t.Fatalf("tick after the request may be lost: %v", got)
	}
	for _, c := range got {
		must(t, m.runCmd(c))
	}
	m.now = m.now.Add(askAgainAfter)
	if got := m.svc.Tick(m.now); len(got) != 0 {
		t.Fatalf("seeded and rotated, tick asks %v", got)
	}
}

// TestNoAuthorityNoRotation: with auth "none" there is no Authority, and
// Tick never asks for a rotation.
func TestNoAuthorityNoRotation(t *testing.T) {
	svc, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := svc.Tick(t0); len(got) != 0 {
		t.Errorf("tick without an Authority: %v", got)
	}
	if _, err := New(Config{Services: []string{"toaster"}}); err == nil {
		t.Error("unknown rotating service accepted")
	}
}

// A daemon gets its service's rotating keys sealed with its own secret;
// another service's keys, or another caller's, are refused.
func TestGetRotating(t *testing.T) {
	m := newTestMon(t, nil)
	must(t, m.run("auth add", "entity", "osd.3", "caps.mon", "profile osd"))
	must(t, m.run("auth add", "entity", "client.x", "caps.mon", "allow r"))
	if r := m.svc.Query(moncmd.New("auth get-rotating", "_caller", "osd.3")); r.Code != moncmd.ENOENT {
		t.Fatalf("before any rotation: %+v", r)
	}
	must(t, m.run("auth rotate"))
	r := m.svc.Query(moncmd.New("auth get-rotating", "_caller", "osd.3"))
	if r.Code != moncmd.OK {
		t.Fatalf("osd.3: %+v", r)
	}
	var got struct {
		Service string   `json:"service"`
		KeyIDs  []uint64 `json:"key_ids"`
		Sealed  []byte   `json:"sealed"`
	}
	if err := json.Unmarshal(r.Data, &got); err != nil {
		t.Fatal(err)
	}
	secret, _, err := m.svc.KeyServer().Secret(name("osd.3"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := auth.OpenRotatingKeys(secret[:], got.Sealed)
	if err != nil || keys.Service() != "osd" || len(keys.Keys()) != len(got.KeyIDs) {
		t.Fatalf("open sealed keys: %v, %+v", err, got)
	}
	for _, c := range []moncmd.Command{
		moncmd.New("auth get-rotating", "_caller", "client.x"),
		moncmd.New("auth get-rotating", "_caller", "osd.3", "service", "mds"),
		moncmd.New("auth get-rotating"),
	} {
		if r := m.svc.Query(c); r.Code != moncmd.EACCES {
			t.Errorf("%v: %+v, want EACCES", c, r)
		}
	}
}
