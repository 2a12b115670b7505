package moncmd

import (
	"context"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/monstore"
)

// Service is one piece of replicated monitor state (Ceph's "paxos
// services"): the OSD map, the config database, the auth database. The
// driver calls every method from one goroutine, in this order of life:
// Load once; then any mix of Handles, Query, Prepare, Tick on the leader
// and Apply on every monitor, in the order Raft commits proposals.
//
// Prepare must not change the service's state: it validates a command
// against the state as applied and returns a proposal, an opaque encoding
// of the change. Apply decodes a committed proposal, changes the state
// and writes it to the batch, which the driver commits with the Raft
// index atomically. A proposal prepared against an older state (another
// proposal committed in between) must be refused by Apply with a Reply
// of code EAGAIN and no change; the driver prepares the command again.
// Apply must be deterministic: every monitor applies the same proposals
// to the same state and must reach the same state.
type Service interface {
	// Name is the service's key space in the monitor store.
	Name() string
	// Load reads the service's state from the store (at start and after
	// a snapshot replaced the store's contents).
	Load(st *monstore.Store) error
	// Handles reports whether the service owns the command prefix, and
	// whether it changes state (write) or only reads.
	Handles(prefix string) (ok, write bool)
	// Query answers a read-only command from the applied state.
	Query(cmd Command) Reply
	// Prepare turns a write command into a proposal. A nil proposal
	// means nothing to propose; reply is then the answer (an error, or
	// success when the change is already in place).
	Prepare(cmd Command, now time.Time) (proposal []byte, reply Reply)
	// Apply applies a committed proposal and writes the change to b.
	// The reply goes to the client that sent the command, if any. An
	// error means the store is unusable (it stops the monitor); a
	// proposal that no longer applies is a Reply with EAGAIN.
	Apply(b *monstore.Batch, proposal []byte, now time.Time) (Reply, error)
	// Tick returns commands the service wants proposed because time
	// passed (mark OSDs out after the down-out interval); the leader
	// calls it about once a second.
	Tick(now time.Time) []Command
}

// Runner sends commands to the cluster: the monitor client implements it
// for the CLI and daemons.
type Runner interface {
	Run(ctx context.Context, cmd Command) (Reply, error)
}

// LeaderOnly is implemented by a service some of whose commands only the
// leader may serve (MDS beacons: the leader alone judges the daemons'
// liveness by them). Another monitor answers them with EAGAIN "not
// ready: not the leader", on which the monitor client moves on to the
// next monitor until it reaches the leader.
type LeaderOnly interface {
	LeaderOnly(prefix string) bool
}
