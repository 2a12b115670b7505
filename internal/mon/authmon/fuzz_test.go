package authmon

import (
	"bytes"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
)

func FuzzDecodeProposal(f *testing.F) {
	key := auth.NewSecret()
	f.Add((&proposal{base: 3, op: opAdd, flags: flagShow, entities: []namedEntry{
		{name("client.app"), auth.KeyEntry{Key: key, Caps: auth.Caps{"mon": "allow r", "osd": "allow rw pool=rbd"}}}}}).encode())
	f.Add((&proposal{op: opCaps, entities: []namedEntry{{name("client.app"), auth.KeyEntry{Caps: auth.Caps{"mon": "allow *"}}}}}).encode())
	f.Add((&proposal{op: opRm, entities: []namedEntry{{name: name("client.app")}}}).encode())
	f.Add((&proposal{op: opImport, flags: flagBootstrap, entities: []namedEntry{
		{name("client.admin"), auth.KeyEntry{Key: key}}, {name("mon.*"), auth.KeyEntry{Key: key}}}}).encode())
	r, _ := auth.NewRotatingKeys("osd", time.Hour)
	r.Rotate(t0)
	f.Add((&proposal{op: opRotate, rotating: []*auth.RotatingKeys{r}}).encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeProposal(b)
		if err != nil {
			return
		}
		enc := p.encode()
		q, err := decodeProposal(enc)
		if err != nil || !bytes.Equal(q.encode(), enc) {
			t.Fatalf("round trip: %v", err)
		}
		// Whatever decodes applies to a database without panicking.
		d := newDB()
		d.apply(p)
	})
}

func FuzzDecodeEntity(f *testing.F) {
	f.Add(entityValue(auth.KeyEntry{Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow r", "mds": "allow rw path=/x"}}))
	f.Add(entityValue(auth.KeyEntry{Key: auth.NewSecret()}))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntity(b)
		if err != nil {
			return
		}
		again, err := decodeEntity(entityValue(e))
		if err != nil || again.Key != e.Key || len(again.Caps) != len(e.Caps) || !capsEqual(again.Caps, e.Caps) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzDecodeMeta(f *testing.F) {
	f.Add(encodeMeta(7, true))
	f.Add(encodeMeta(0, false))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, s, err := decodeMeta(b)
		if err != nil {
			return
		}
		if v2, s2, err := decodeMeta(encodeMeta(v, s)); err != nil || v2 != v || s2 != s {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzDecodeRotating(f *testing.F) {
	r, _ := auth.NewRotatingKeys("mds", time.Hour)
	r.Rotate(t0)
	f.Add("mds", rotatingValue(r))
	f.Fuzz(func(t *testing.T, service string, b []byte) {
		r, err := decodeRotating(service, b)
		if err != nil {
			return
		}
		if again, err := decodeRotating(service, rotatingValue(r)); err != nil || !bytes.Equal(rotatingValue(again), rotatingValue(r)) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
