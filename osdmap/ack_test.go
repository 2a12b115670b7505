package osdmap

import (
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
)

func TestPoolAckModeRoundTrip(t *testing.T) {
	p := replicatedPool(1, 8)
	data := encodedPool(&p)
	if data[0] != poolVersion || data[1] != 1 {
		t.Fatalf("pool in ack all: version %d compat %d, want %d and 1", data[0], data[1], poolVersion)
	}
	p.Ack = AckPrimary
	data = encodedPool(&p)
	if data[1] != 6 {
		t.Fatalf("pool in ack primary: compat %d, want 6 (older decoders must refuse it)", data[1])
	}
	d := encoding.NewDecoder(data)
	got := decodePool(d)
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	if got.Ack != AckPrimary || !got.Equal(&p) {
		t.Fatalf("decoded %+v, want %+v", got, p)
	}
	if s := got.String(); !strings.Contains(s, " ack primary") {
		t.Fatalf("String() = %q lacks the ack mode", s)
	}
}

func TestPoolAckModeValidated(t *testing.T) {
	checkPoolEdits(t, []poolEdit{
		{"all", func(p *Pool) {}, true},
		{"primary", func(p *Pool) { p.Ack = AckPrimary }, true},
		{"unknown", func(p *Pool) { p.Ack = 2 }, false},
		{"erasure", func(p *Pool) { p.Ack, p.Type = AckPrimary, PoolErasure }, false},
	})
}

// poolEdit is a change to a replicated pool and whether the pool stays
// valid.
type poolEdit struct {
	name string
	edit func(*Pool)
	ok   bool
}

// checkPoolEdits checks that validate accepts each edited pool as the
// case says, and that a decoder refuses what validate refuses.
func checkPoolEdits(t *testing.T, cases []poolEdit) {
	t.Helper()
	for _, c := range cases {
		p := replicatedPool(1, 8)
		c.edit(&p)
		if err := p.validate(); (err == nil) != c.ok {
			t.Errorf("%s: validate = %v, want ok %v", c.name, err, c.ok)
		}
		d := encoding.NewDecoder(encodedPool(&p))
		decodePool(d)
		if err := d.Finish(); (err == nil) != c.ok {
			t.Errorf("%s: decode = %v, want ok %v", c.name, err, c.ok)
		}
	}
}

func TestParseAckMode(t *testing.T) {
	for _, m := range []AckMode{AckAll, AckPrimary} {
		if got, err := ParseAckMode(m.String()); err != nil || got != m {
			t.Errorf("ParseAckMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseAckMode("one"); err == nil {
		t.Error("ParseAckMode(one) accepted")
	}
}
