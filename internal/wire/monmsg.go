package wire

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// MonCommand carries a command to a monitor; Tid matches the reply.
//
// Client, Seq and Oldest let the monitors apply a write command at most
// once although the client may send it to several monitors in turn: Client
// is a random number the client chose when it started, Seq numbers the
// client's commands (the same for every attempt of one command; 0: not
// numbered, the command is applied as often as it arrives), and Oldest is
// the lowest Seq the client still waits for, so that the monitors forget
// the outcomes of commands below it and drop their late copies.
type MonCommand struct {
	Tid    uint64
	Cmd    Command
	Client uint64
	Seq    uint64
	Oldest uint64
}

// MonCommandReply answers the MonCommand with the same Tid.
type MonCommandReply struct {
	Tid   uint64
	Reply Reply
}

// MonSubscribe asks a monitor to send the named map ("osdmap") from epoch
// Start on (0: the current full map), and every later epoch as it is
// committed unless OneShot.
type MonSubscribe struct {
	What    string
	Start   uint64
	OneShot bool
}

// OSDMapUpdate carries OSD map epochs: an optional full map (encoded
// osdmap.Map) at FullEpoch, then incrementals (encoded
// osdmap.Incremental) for the epochs after it or after the subscriber's
// last, in order. Newest is the newest epoch the monitor has.
type OSDMapUpdate struct {
	FullEpoch uint64
	Full      []byte
	Incs      [][]byte
	Newest    uint64
}

// MonRaft carries one Raft message (raftpb.Message, marshaled) between
// monitors.
type MonRaft struct {
	Data []byte
}

// MonPing is the monitors' heartbeat: the sender's name and clock (Unix
// nanoseconds), echoed back in the reply so the sender measures the
// round trip and the peer's clock offset.
type MonPing struct {
	From     string
	Sent     int64 // sender's clock when sent
	PeerTime int64 // replier's clock when replying (replies only)
	Reply    bool
}

// Limits on decoded monitor messages.
const (
	maxMapBytes = 256 << 20
	maxIncs     = 10000
	maxName     = 256
)

// Encode encodes m: version 1: tid u64, then the command's encoding;
// version 2 adds client u64, seq and oldest uvarints.
func (m MonCommand) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	e.Uint64(m.Tid)
	e.Bytes(m.Cmd.Encode())
	e.Uint64(m.Client)
	e.Uvarint(m.Seq)
	e.Uvarint(m.Oldest)
	e.End(mk)
	return e.Data()
}

// DecodeMonCommand decodes a MonCommand.
func DecodeMonCommand(b []byte) (MonCommand, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	m := MonCommand{Tid: d.Uint64()}
	inner := d.Bytes(maxArgs * maxArg)
	if v >= 2 {
		m.Client, m.Seq, m.Oldest = d.Uint64(), d.Uvarint(), d.Uvarint()
		if m.Oldest > m.Seq && d.Err() == nil {
			d.Fail(fmt.Errorf("%w: oldest command %d after command %d", encoding.ErrCorrupt, m.Oldest, m.Seq))
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return MonCommand{}, fmt.Errorf("wire: mon command: %w", err)
	}
	c, err := DecodeCommand(inner)
	if err != nil {
		return MonCommand{}, err
	}
	m.Cmd = c
	return m, nil
}

// Encode encodes m: version 1: tid u64, then the reply's encoding.
func (m MonCommandReply) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint64(m.Tid)
	e.Bytes(m.Reply.Encode())
	e.End(mk)
	return e.Data()
}

// DecodeMonCommandReply decodes a MonCommandReply.
func DecodeMonCommandReply(b []byte) (MonCommandReply, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := MonCommandReply{Tid: d.Uint64()}
	inner := d.Bytes(2*maxData + maxStatus + 64)
	d.End()
	if err := d.Finish(); err != nil {
		return MonCommandReply{}, fmt.Errorf("wire: mon command reply: %w", err)
	}
	r, err := DecodeReply(inner)
	if err != nil {
		return MonCommandReply{}, err
	}
	m.Reply = r
	return m, nil
}

// Encode encodes m: version 1: what string, start uvarint, one-shot bool.
func (m MonSubscribe) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(m.What)
	e.Uvarint(m.Start)
	e.Bool(m.OneShot)
	e.End(mk)
	return e.Data()
}

// DecodeMonSubscribe decodes a MonSubscribe.
func DecodeMonSubscribe(b []byte) (MonSubscribe, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := MonSubscribe{What: d.String(maxName), Start: d.Uvarint(), OneShot: d.Bool()}
	d.End()
	if err := d.Finish(); err != nil {
		return MonSubscribe{}, fmt.Errorf("wire: mon subscribe: %w", err)
	}
	return m, nil
}

// Encode encodes m: version 1: full epoch uvarint, full bytes, count,
// incrementals (bytes each), newest uvarint.
func (m OSDMapUpdate) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uvarint(m.FullEpoch)
	e.Bytes(m.Full)
	e.Uvarint(uint64(len(m.Incs)))
	for _, inc := range m.Incs {
		e.Bytes(inc)
	}
	e.Uvarint(m.Newest)
	e.End(mk)
	return e.Data()
}

// DecodeOSDMapUpdate decodes an OSDMapUpdate.
func DecodeOSDMapUpdate(b []byte) (OSDMapUpdate, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := OSDMapUpdate{FullEpoch: d.Uvarint(), Full: d.Bytes(maxMapBytes)}
	n := d.Count(1)
	if n > maxIncs {
		d.Fail(fmt.Errorf("%w: %d incrementals", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		m.Incs = append(m.Incs, d.Bytes(maxMapBytes))
	}
	m.Newest = d.Uvarint()
	d.End()
	if err := d.Finish(); err != nil {
		return OSDMapUpdate{}, fmt.Errorf("wire: osd map update: %w", err)
	}
	return m, nil
}

// Encode encodes m: version 1: the Raft message's bytes.
func (m MonRaft) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Bytes(m.Data)
	e.End(mk)
	return e.Data()
}

// DecodeMonRaft decodes a MonRaft.
func DecodeMonRaft(b []byte) (MonRaft, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := MonRaft{Data: d.Bytes(maxMapBytes)}
	d.End()
	if err := d.Finish(); err != nil {
		return MonRaft{}, fmt.Errorf("wire: mon raft: %w", err)
	}
	return m, nil
}

// Encode encodes m: version 1: from string, sent and peer time (u64 two's
// complement), reply bool.
func (m MonPing) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(m.From)
	e.Uint64(uint64(m.Sent))
	e.Uint64(uint64(m.PeerTime))
	e.Bool(m.Reply)
	e.End(mk)
	return e.Data()
}

// DecodeMonPing decodes a MonPing.
func DecodeMonPing(b []byte) (MonPing, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := MonPing{From: d.String(maxName), Sent: int64(d.Uint64()), PeerTime: int64(d.Uint64()), Reply: d.Bool()}
	d.End()
	if err := d.Finish(); err != nil {
		return MonPing{}, fmt.Errorf("wire: mon ping: %w", err)
	}
	return m, nil
}
