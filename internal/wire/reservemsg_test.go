package wire

import (
	"errors"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/osdmap"
)

func reserveSamples() []PGReserve {
	h := PGInterval{PG: osdmap.PG{Pool: 3, Seed: 17}, Epoch: 42, IntervalStart: 40}
	return []PGReserve{
		{PGInterval: h, Op: ReserveRequest, Priority: 181},
		{PGInterval: h, Op: ReserveRequest, Priority: 140, Backfill: true},
		{PGInterval: h, Op: ReserveGrant},
		{PGInterval: h, Op: ReserveRelease, Priority: -1},
	}
}

func TestPGReserveRoundTrip(t *testing.T) {
	for _, m := range reserveSamples() {
		b := m.Encode()
		got, err := DecodePGReserve(b)
		if err != nil || got != m {
			t.Fatalf("%v: got %+v, %v; want %+v", m.Op, got, err, m)
		}
		for n := range len(b) {
			if _, err := DecodePGReserve(b[:n]); err == nil {
				t.Fatalf("%v truncated to %d bytes decoded", m.Op, n)
			}
		}
	}
}

func TestPGReserveRefusesUnknownOps(t *testing.T) {
	for _, op := range []ReserveOp{0, 4, 255} {
		m := reserveSamples()[0]
		m.Op = op
		if _, err := DecodePGReserve(m.Encode()); !errors.Is(err, encoding.ErrCorrupt) {
			t.Errorf("op %d: err %v, want ErrCorrupt", op, err)
		}
	}
}

// FuzzPGReserve: the decoder never panics, fails only with the
// encoding's error classes, and what it accepts encodes back to the same
// message.
func FuzzPGReserve(f *testing.F) {
	for _, m := range reserveSamples() {
		f.Add(m.Encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodePGReserve(b)
		if err != nil {
			if !errors.Is(err, encoding.ErrCorrupt) && !errors.Is(err, encoding.ErrTruncated) && !errors.Is(err, encoding.ErrUnsupportedVersion) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		again, err := DecodePGReserve(m.Encode())
		if err != nil || again != m {
			t.Fatalf("%+v does not survive re-encoding: %+v, %v", m, again, err)
		}
	})
}
