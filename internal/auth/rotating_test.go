package auth

import (
	"errors"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
)

func TestRotatingKeysSchedule(t *testing.T) {
	const p = time.Hour
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r, err := NewRotatingKeys("osd", p)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Current(t0); ok {
		t.Fatal("empty set has a current key")
	}
	if !r.Rotate(t0) {
		t.Fatal("first Rotate reported no change")
	}
	ids := func() (out []uint64) {
		for _, k := range r.Keys() {
			out = append(out, k.ID)
		}
		return out
	}
	if got := ids(); len(got) != 2 {
		t.Fatalf("after first rotate: keys %v, want current and next", got)
	}
	cur, _ := r.Current(t0)
	if cur.ID != 1 || !cur.Expires.Equal(t0.Add(2*p)) {
		t.Fatalf("current %d expires %v", cur.ID, cur.Expires)
	}
	if r.Rotate(t0.Add(30 * time.Minute)) {
		t.Error("Rotate within a turn changed the set")
	}
	// Next turn: key 2 seals, key 1 is still accepted, key 3 is ready.
	r.Rotate(t0.Add(p))
	if got := ids(); len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Fatalf("after a period: keys %v", got)
	}
	if cur, _ := r.Current(t0.Add(p)); cur.ID != 2 {
		t.Fatalf("current = %d, want 2", cur.ID)
	}
	r.Rotate(t0.Add(2 * p))
	if got := ids(); got[0] != 2 {
		t.Fatalf("key 1 kept after it expired: %v", got)
	}
	if _, ok := r.Lookup(1); ok {
		t.Error("Lookup found an expired key")
	}
	// A long gap: Rotate catches up without keeping stale keys.
	r.Rotate(t0.Add(100 * p))
	cur, ok := r.Current(t0.Add(100 * p))
	if !ok || len(r.Keys()) != 2 || cur.ID <= 4 {
		t.Fatalf("after a gap: keys %v, current %d %v", ids(), cur.ID, ok)
	}
	if _, err := NewRotatingKeys("nfs", p); err == nil {
		t.Error("unknown service accepted")
	}
	if _, err := NewRotatingKeys("osd", 0); err == nil {
		t.Error("zero period accepted")
	}
}

func TestRotatingKeysCodec(t *testing.T) {
	r, _ := NewRotatingKeys("mds", time.Hour)
	r.Rotate(time.Unix(1e9, 5))
	var e encoding.Encoder
	r.Encode(&e)
	d := encoding.NewDecoder(e.Data())
	got, err := DecodeRotatingKeys(d)
	if err != nil || d.Finish() != nil {
		t.Fatal(err, d.Finish())
	}
	if got.Service() != "mds" || got.Period() != time.Hour || got.nextID != r.nextID || len(got.Keys()) != 2 {
		t.Fatalf("decoded %+v", got)
	}
	for i, k := range got.Keys() {
		if want := r.Keys()[i]; k.ID != want.ID || k.Secret != want.Secret || !k.Expires.Equal(want.Expires) {
			t.Errorf("key %d differs", i)
		}
	}

	session := randKey()
	box := r.Seal(session)
	opened, err := OpenRotatingKeys(session, box)
	if err != nil || len(opened.Keys()) != 2 {
		t.Fatalf("OpenRotatingKeys: %v", err)
	}
	if _, err := OpenRotatingKeys(randKey(), box); !errors.Is(err, ErrDenied) {
		t.Errorf("open under another key: %v", err)
	}
}

func TestSignVerify(t *testing.T) {
	key := randKey()
	sig := Sign(key, []byte("ab"), []byte("c"))
	if len(sig) != SignatureSize || !Verify(key, sig, []byte("ab"), []byte("c")) {
		t.Fatal("signature does not verify")
	}
	for _, bad := range []struct {
		key  []byte
		sig  []byte
		data [][]byte
	}{
		{key, sig, [][]byte{[]byte("a"), []byte("bc")}}, // parts are length-prefixed
		{key, sig, [][]byte{[]byte("abc")}},
		{randKey(), sig, [][]byte{[]byte("ab"), []byte("c")}},
		{key, sig[:31], [][]byte{[]byte("ab"), []byte("c")}},
	} {
		if Verify(bad.key, bad.sig, bad.data...) {
			t.Errorf("Verify accepted %q", bad.data)
		}
	}
}

func TestSealBindsPurposeAndData(t *testing.T) {
	key := randKey()
	box := seal(key, purposeTicket, []byte("x"), []byte("ad"))
	if pt, err := open(key, purposeTicket, box, []byte("ad")); err != nil || string(pt) != "x" {
		t.Fatalf("open: %q, %v", pt, err)
	}
	for name, err := range map[string]error{
		"purpose": errOf(open(key, purposeAuthorizer, box, []byte("ad"))),
		"ad":      errOf(open(key, purposeTicket, box, []byte("AD"))),
		"key":     errOf(open(randKey(), purposeTicket, box, []byte("ad"))),
		"short":   errOf(open(key, purposeTicket, box[:10], []byte("ad"))),
	} {
		if err == nil {
			t.Errorf("opened with a different %s", name)
		}
	}
}

func errOf(_ []byte, err error) error { return err }
