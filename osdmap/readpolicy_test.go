package osdmap

import (
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
)

func TestPoolReadPolicyRoundTrip(t *testing.T) {
	p := replicatedPool(1, 8)
	data := encodedPool(&p)
	if data[0] != poolVersion || data[1] != 1 {
		t.Fatalf("pool reading from primaries: version %d compat %d, want %d and 1", data[0], data[1], poolVersion)
	}
	for _, r := range []ReadPolicy{ReadBalance, ReadScore} {
		p.ReadPolicy = r
		data = encodedPool(&p)
		if data[1] != 7 {
			t.Fatalf("pool with read_policy %s: compat %d, want 7 (older OSDs must refuse it)", r, data[1])
		}
		d := encoding.NewDecoder(data)
		got := decodePool(d)
		if err := d.Finish(); err != nil {
			t.Fatal(err)
		}
		if got.ReadPolicy != r || !got.Equal(&p) {
			t.Fatalf("decoded %+v, want %+v", got, p)
		}
		if s := got.String(); !strings.Contains(s, " read_policy "+r.String()) {
			t.Fatalf("String() = %q lacks the read policy", s)
		}
	}
}

func TestPoolReadPolicyValidated(t *testing.T) {
	checkPoolEdits(t, []poolEdit{
		{"primary", func(p *Pool) {}, true},
		{"balance", func(p *Pool) { p.ReadPolicy = ReadBalance }, true},
		{"score with ack primary", func(p *Pool) { p.ReadPolicy, p.Ack = ReadScore, AckPrimary }, true},
		{"unknown", func(p *Pool) { p.ReadPolicy = 3 }, false},
		{"erasure", func(p *Pool) { p.ReadPolicy, p.Type = ReadBalance, PoolErasure }, false},
	})
}

func TestParseReadPolicy(t *testing.T) {
	for _, r := range []ReadPolicy{ReadPrimary, ReadBalance, ReadScore} {
		if got, err := ParseReadPolicy(r.String()); err != nil || got != r {
			t.Errorf("ParseReadPolicy(%q) = %v, %v", r.String(), got, err)
		}
	}
	if _, err := ParseReadPolicy("nearest"); err == nil {
		t.Error("ParseReadPolicy(nearest) accepted")
	}
}
