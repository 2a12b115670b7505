package mon

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// A client that gets no answer in time sends its command to another
// monitor, and a monitor whose proposal seems lost proposes it again, so
// one command can commit twice, the second copy after later commands of
// the same client. Applying it again would undo them ("set x 1" applied
// after "set x 2"). The command log is the replicated memory that
// prevents this: for each client (wire.MonCommand's Client) the outcome
// of each numbered command it may still resend. A copy of a command in
// the log is answered from it, unapplied; a copy of a command below the
// client's oldest awaited one is dropped.
//
// Like a service, the log changes only in apply, from committed entries
// and their proposers' clocks, so every monitor holds the same log; it
// is kept in the store under commandLogService and travels in snapshots.
const commandLogService = "_commands"

// Bounds of the command log.
const (
	// commandMemory is how long a silent client's outcomes are kept:
	// far beyond how long a client retries one command.
	commandMemory = 10 * time.Minute
	// expireEvery is how often (in Raft entries) the log forgets silent
	// clients.
	expireEvery = 256
	// maxClientOutcomes bounds the outcomes kept per client; beyond it
	// the oldest are forgotten and their late copies dropped.
	maxClientOutcomes = 1024
	// maxKeptReply is the largest reply kept whole; a larger one is kept
	// as its code and status.
	maxKeptReply = 64 << 10
)

// commandID numbers a client's command (see wire.MonCommand).
type commandID struct {
	Client string // the client's entity name and nonce; "" if not numbered
	Seq    uint64
	Oldest uint64
}

// clientKey names a client in the command log.
func clientKey(name string, nonce uint64) string {
	return fmt.Sprintf("%s/%016x", name, nonce)
}

// clientCommands is one client's part of the log.
type clientCommands struct {
	floor    uint64                  // commands below it are no longer awaited
	last     int64                   // time of its latest entry (Unix ns)
	outcomes map[uint64]moncmd.Reply // replies of applied commands at or above floor
}

// commandLog is every client's part of the log; the monitor's svcMu
// guards it.
type commandLog struct {
	clients map[string]*clientCommands
}

// load reads the log from the store.
func (l *commandLog) load(st *monstore.Store) error {
	l.clients = map[string]*clientCommands{}
	return st.Scan(commandLogService, nil, func(key, value []byte) error {
		cc, err := decodeClientCommands(value)
		if err != nil {
			return fmt.Errorf("command log of %q: %w", key, err)
		}
		l.clients[string(key)] = cc
		return nil
	})
}

// seen answers an entry's command from the log: the reply of its earlier
// application, or ETIMEDOUT for a command its client no longer awaits.
// It also advances the client's floor; the caller applies the entry only
// if seen returns false.
func (l *commandLog) seen(b *monstore.Batch, id commandID, at int64) (moncmd.Reply, bool, error) {
	cc := l.clients[id.Client]
	if cc == nil {
		cc = &clientCommands{outcomes: map[uint64]moncmd.Reply{}}
		l.clients[id.Client] = cc
	}
	cc.last = max(cc.last, at)
	cc.raiseFloor(id.Oldest)
	reply, done := cc.outcomes[id.Seq]
	switch {
	case done:
	case id.Seq < cc.floor:
		reply, done = moncmd.Errorf(moncmd.ETIMEDOUT, "command %d of %s arrived after its client stopped waiting for it; not applied", id.Seq, id.Client), true
	}
	return reply, done, l.store(b, id.Client, cc)
}

// record keeps the reply of an applied command. A refusal to retry
// (EAGAIN: prepared on stale state, nothing changed) is not an outcome:
// the command is prepared and proposed again under the same number.
func (l *commandLog) record(b *monstore.Batch, id commandID, reply moncmd.Reply) error {
	if reply.Code == moncmd.EAGAIN {
		return nil
	}
	cc := l.clients[id.Client]
	if len(reply.Data)+len(reply.Text) > maxKeptReply {
		reply = moncmd.Reply{Code: reply.Code, Status: reply.Status}
	}
	cc.outcomes[id.Seq] = reply
	if len(cc.outcomes) > maxClientOutcomes {
		seqs := slices.Sorted(maps.Keys(cc.outcomes))
		cc.raiseFloor(seqs[len(seqs)-maxClientOutcomes])
	}
	return l.store(b, id.Client, cc)
}

// expire forgets the clients silent since before cutoff (Unix ns).
func (l *commandLog) expire(b *monstore.Batch, cutoff int64) error {
	for key, cc := range l.clients {
		if cc.last < cutoff {
			delete(l.clients, key)
			if err := b.Delete(commandLogService, []byte(key)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *commandLog) store(b *monstore.Batch, key string, cc *clientCommands) error {
	return b.Put(commandLogService, []byte(key), cc.encode())
}

// raiseFloor forgets the outcomes below floor.
func (cc *clientCommands) raiseFloor(floor uint64) {
	if floor <= cc.floor {
		return
	}
	cc.floor = floor
	for seq := range cc.outcomes {
		if seq < floor {
			delete(cc.outcomes, seq)
		}
	}
}

// encode: version 1: floor uvarint, last u64 (two's complement), count
// uvarint, then per outcome in order of seq: seq uvarint, reply bytes
// (wire.Reply's encoding).
func (cc *clientCommands) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uvarint(cc.floor)
	e.Uint64(uint64(cc.last))
	e.Uvarint(uint64(len(cc.outcomes)))
	for _, seq := range slices.Sorted(maps.Keys(cc.outcomes)) {
		e.Uvarint(seq)
		e.Bytes(cc.outcomes[seq].Encode())
	}
	e.End(m)
	return e.Data()
}

func decodeClientCommands(b []byte) (*clientCommands, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	cc := &clientCommands{floor: d.Uvarint(), last: int64(d.Uint64()), outcomes: map[uint64]moncmd.Reply{}}
	n := d.Count(2)
	if n > maxClientOutcomes && d.Err() == nil {
		d.Fail(fmt.Errorf("%w: %d outcomes", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		seq := d.Uvarint()
		raw := d.Bytes(maxKeptReply + 1<<20)
		if d.Err() != nil {
			break
		}
		if _, dup := cc.outcomes[seq]; dup || seq < cc.floor {
			d.Fail(fmt.Errorf("%w: outcome of command %d (floor %d) repeated or below the floor", encoding.ErrCorrupt, seq, cc.floor))
			break
		}
		r, err := wire.DecodeReply(raw)
		if err != nil {
			d.Fail(err)
			break
		}
		cc.outcomes[seq] = r
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("mon: command log: %w", err)
	}
	return cc, nil
}
