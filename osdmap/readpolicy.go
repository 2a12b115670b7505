package osdmap

import "fmt"

// ReadPolicy is where a pool's clients send reads (docs/OSD.md,
// "Reading from replicas"; issue 42's "multi-node reads"). A client may
// choose a policy of its own (rados.Config.ReadPolicy) that overrides
// the pool's.
type ReadPolicy uint8

const (
	// ReadPrimary sends every read to the acting primary: Ceph's
	// default, and the only policy under which reads of one object are
	// linearizable whatever the pool's ack mode.
	ReadPrimary ReadPolicy = 0
	// ReadBalance sends a read to an acting member chosen at random.
	ReadBalance ReadPolicy = 1
	// ReadScore sends a read to the acting member with the largest
	// P_i x Random_i, P_i scoring its network distance and its disk,
	// CPU and memory load (the OSDs' Load records).
	ReadScore ReadPolicy = 2
)

// String returns the policy as "osd pool set POOL read_policy" takes it.
func (r ReadPolicy) String() string {
	switch r {
	case ReadPrimary:
		return "primary"
	case ReadBalance:
		return "balance"
	case ReadScore:
		return "score"
	}
	return fmt.Sprintf("read_policy(%d)", uint8(r))
}

// ParseReadPolicy parses "primary", "balance" or "score".
func ParseReadPolicy(s string) (ReadPolicy, error) {
	for _, r := range []ReadPolicy{ReadPrimary, ReadBalance, ReadScore} {
		if s == r.String() {
			return r, nil
		}
	}
	return 0, fmt.Errorf("osdmap: read policy %q is not primary, balance or score", s)
}

// validateReadPolicy checks the pool's read policy: a known one, and
// replica reads only on replicated pools (an erasure pool's members
// hold shards, not the object).
func (p *Pool) validateReadPolicy() error {
	switch {
	case p.ReadPolicy > ReadScore:
		return fmt.Errorf("pool %d: unknown read policy %d", p.ID, p.ReadPolicy)
	case p.ReadPolicy != ReadPrimary && p.Type != PoolReplicated:
		return fmt.Errorf("pool %d: read policy %s needs a replicated pool", p.ID, p.ReadPolicy)
	}
	return nil
}
