package wire

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// Recovery reservations between the OSDs of a PG (internal/osd's
// reservations.go), as Ceph's MRecoveryReserve and MBackfillReserve:
// before a PG recovers or backfills, its primary asks each member it will
// push to for one of that member's recovery slots (osd_max_backfills),
// one member at a time in OSD order; the member grants it when a slot is
// free, and the primary releases it when done. A member drops a
// reservation by itself when a map ends the interval it was made in.

// ReserveOp says what a PGReserve does.
type ReserveOp uint8

const (
	// ReserveRequest (primary -> member): reserve a slot for the PG's
	// pushes; repeated while no grant arrives.
	ReserveRequest ReserveOp = 1
	// ReserveGrant (member -> primary): the slot is the primary's.
	ReserveGrant ReserveOp = 2
	// ReserveRelease (primary -> member): done, or no longer wanted.
	ReserveRelease ReserveOp = 3
)

func (op ReserveOp) String() string {
	switch op {
	case ReserveRequest:
		return "request"
	case ReserveGrant:
		return "grant"
	case ReserveRelease:
		return "release"
	}
	return fmt.Sprintf("reserve-op-%d", uint8(op))
}

// PGReserve is one step of a recovery reservation of a PG in the
// interval its header names. Priority (a request's) orders the waiting
// requests on the member, higher first (internal/osd/reserve's
// Priority); Backfill says the primary backfills the member rather than
// recovering it from the log.
type PGReserve struct {
	PGInterval
	Op       ReserveOp
	Priority int32
	Backfill bool
}

// Encode encodes m (version 1).
func (m PGReserve) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	m.encode(&e)
	e.Uint8(uint8(m.Op))
	e.Varint(int64(m.Priority))
	e.Bool(m.Backfill)
	e.End(mk)
	return e.Data()
}

// DecodePGReserve decodes a PGReserve. An op it does not know is an
// error.
func DecodePGReserve(b []byte) (PGReserve, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := PGReserve{PGInterval: decodePGInterval(d), Op: ReserveOp(d.Uint8())}
	prio := d.Varint()
	m.Backfill = d.Bool()
	d.End()
	if err := d.Finish(); err != nil {
		return PGReserve{}, fmt.Errorf("wire: pg reserve: %w", err)
	}
	if m.Op < ReserveRequest || m.Op > ReserveRelease {
		return PGReserve{}, fmt.Errorf("wire: pg reserve: %w: op %d", encoding.ErrCorrupt, m.Op)
	}
	if prio < -1<<31 || prio > 1<<31-1 {
		return PGReserve{}, fmt.Errorf("wire: pg reserve: %w: priority %d", encoding.ErrCorrupt, prio)
	}
	m.Priority = int32(prio)
	return m, nil
}
