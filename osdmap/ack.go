package osdmap

import "fmt"

// AckMode is when a pool's primary answers a client's write: Ceph has
// only AckAll; AckPrimary trades durability for latency (docs/OSD.md,
// "Acknowledging on the primary").
type AckMode uint8

const (
	// AckAll answers once every member of the acting set has committed
	// the write: an acknowledged write survives while any of them does.
	// The default.
	AckAll AckMode = 0
	// AckPrimary answers once the primary has committed the write to
	// its own store; the replicas get it in the background. An
	// acknowledged write the replicas lack survives only on the
	// primary's disk.
	AckPrimary AckMode = 1
)

// String returns the mode as "osd pool set POOL ack" takes it.
func (m AckMode) String() string {
	switch m {
	case AckAll:
		return "all"
	case AckPrimary:
		return "primary"
	}
	return fmt.Sprintf("ack(%d)", uint8(m))
}

// ParseAckMode parses "all" or "primary".
func ParseAckMode(s string) (AckMode, error) {
	switch s {
	case "all":
		return AckAll, nil
	case "primary":
		return AckPrimary, nil
	}
	return 0, fmt.Errorf("osdmap: ack mode %q is not all or primary", s)
}

// validateAck checks the pool's ack mode: a known one, and AckPrimary
// only on replicated pools (an erasure pool's primary holds one shard,
// not the object).
func (p *Pool) validateAck() error {
	switch {
	case p.Ack > AckPrimary:
		return fmt.Errorf("pool %d: unknown ack mode %d", p.ID, p.Ack)
	case p.Ack == AckPrimary && p.Type != PoolReplicated:
		return fmt.Errorf("pool %d: ack primary needs a replicated pool", p.ID)
	}
	return nil
}
