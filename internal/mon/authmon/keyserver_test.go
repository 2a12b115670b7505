package authmon

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/cuttlestore/cuttle/internal/auth"
)

// TestKeyServer checks the view the Authority reads: the fallback answers
// until the bootstrap import applies, then only the database does; added
// entities are known at once and removed ones are unknown.
func TestKeyServer(t *testing.T) {
	seed := seedKeyring()
	fallback := maps.Clone(seed)
	fallback[name("client.onlyfile")] = auth.KeyEntry{Key: auth.NewSecret()}
	m := newTestMon(t, nil)
	keys := NewKeyServer(fallback)
	m.start(keys, seed)
	ks := m.svc.KeyServer()
	if ks != keys {
		t.Fatal("the service does not publish to the KeyServer it was given")
	}

	if s, _, err := ks.Secret(name("client.onlyfile")); err != nil || s != fallback[name("client.onlyfile")].Key {
		t.Errorf("before seeding, the fallback answers: %v", err)
	}
	if _, _, err := ks.Secret(name("client.ghost")); !errors.Is(err, auth.ErrUnknownEntity) {
		t.Errorf("unknown entity: %v", err)
	}
	must(t, m.run("auth add", "entity", "client.early", "caps.mon", "allow r"))
	if _, caps, err := ks.Secret(name("client.early")); err != nil || caps["mon"] != "allow r" {
		t.Errorf("entity added before seeding: %v %v", caps, err)
	}

	m.tick()
	if !ks.Seeded() {
		t.Fatal("not seeded after the leader's tick")
	}
	if _, _, err := ks.Secret(name("client.onlyfile")); !errors.Is(err, auth.ErrUnknownEntity) {
		t.Errorf("after seeding, the file is not the source: %v", err)
	}
	for n, e := range seed {
		if s, caps, err := ks.Secret(n); err != nil || s != e.Key || !capsEqual(caps, e.Caps) {
			t.Errorf("seeded %s: %v %v", n, caps, err)
		}
	}
	if _, _, err := ks.Secret(name("client.early")); err != nil {
		t.Errorf("entity added before seeding is lost: %v", err)
	}

	must(t, m.run("auth add", "entity", "client.app", "caps.mon", "allow r"))
	_, caps, err := ks.Secret(name("client.app"))
	if err != nil || caps["mon"] != "allow r" {
		t.Fatalf("added entity: %v %v", caps, err)
	}
	caps["mon"] = "allow *"
	if _, again, _ := ks.Secret(name("client.app")); again["mon"] != "allow r" {
		t.Error("a caller's change of the returned caps reached the database")
	}
	must(t, m.run("auth rm", "entity", "client.app"))
	if _, _, err := ks.Secret(name("client.app")); !errors.Is(err, auth.ErrUnknownEntity) {
		t.Errorf("after rm: %v", err)
	}
}

// TestKeyServerConcurrent reads the KeyServer from several goroutines
// while entities are added and removed (run with -race): every answer is
// a whole entity or ErrUnknownEntity.
func TestKeyServerConcurrent(t *testing.T) {
	m := newTestMon(t, nil)
	ks := m.svc.KeyServer()
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				s, caps, err := ks.Secret(name(fmt.Sprintf("client.c%d", (i+r)%8)))
				if err == nil && (s.IsZero() || caps["mon"] != "allow r") {
					errs <- fmt.Errorf("partial entity: %v", caps)
					return
				}
				if err != nil && !errors.Is(err, auth.ErrUnknownEntity) {
					errs <- err
					return
				}
			}
		})
	}
	for i := range 40 {
		n := fmt.Sprintf("client.c%d", i%8)
		if i%16 < 8 {
			must(t, m.run("auth add", "entity", n, "caps.mon", "allow r"))
		} else {
			must(t, m.run("auth rm", "entity", n))
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
