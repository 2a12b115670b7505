package mon

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
)

// entry is the payload of a normal Raft entry: a service's proposal,
// tagged with the monitor and request that proposed it so that the
// proposer can hand the service's reply back to its client.
type entry struct {
	Service  string
	Proposal []byte
	Origin   uint64 // Raft id of the proposing monitor
	Request  uint64 // its request number (0: nobody waits)
	// Time is the proposer's clock when it prepared the proposal (Unix
	// nanoseconds): every monitor applies with this time, never its own,
	// so that applying stays deterministic.
	Time int64
	// Command numbers a client's command so that it applies once (see
	// commandLog); its zero value means not numbered.
	Command commandID
}

// encode: version 1: service string, proposal bytes, origin and request
// uvarints, time (u64 two's complement); version 2 adds the command's
// client string, seq and oldest uvarints.
func (e entry) encode() []byte {
	var enc encoding.Encoder
	m := enc.Begin(2, 1)
	enc.String(e.Service)
	enc.Bytes(e.Proposal)
	enc.Uvarint(e.Origin)
	enc.Uvarint(e.Request)
	enc.Uint64(uint64(e.Time))
	enc.String(e.Command.Client)
	enc.Uvarint(e.Command.Seq)
	enc.Uvarint(e.Command.Oldest)
	enc.End(m)
	return enc.Data()
}

func decodeEntry(b []byte) (entry, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	e := entry{Service: d.String(64), Proposal: d.Bytes(64 << 20), Origin: d.Uvarint(), Request: d.Uvarint(), Time: int64(d.Uint64())}
	if v >= 2 {
		e.Command = commandID{Client: d.String(monstore.MaxKey), Seq: d.Uvarint(), Oldest: d.Uvarint()}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return entry{}, fmt.Errorf("mon: raft entry: %w", err)
	}
	return e, nil
}
