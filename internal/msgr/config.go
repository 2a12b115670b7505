package msgr

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
)

// Policy says what a session does when its connection fails.
type Policy int

const (
	// Lossless (between daemons): the connecting side reconnects with
	// backoff and both sides retransmit what the other has not
	// acknowledged, so every message is delivered once, in order, unless
	// the peer process restarts (then the session resets: EventReset).
	Lossless Policy = iota + 1
	// Lossy (clients and the daemons' sessions with clients): the first
	// fault closes the session and fails what it still held
	// (EventFailed); the client opens a new session itself.
	Lossy
)

func (p Policy) String() string {
	switch p {
	case Lossless:
		return "lossless"
	case Lossy:
		return "lossy"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// Limits that are not configurable: they bound what an unauthenticated
// peer can make this side hold.
const (
	// maxHandshakeFrame bounds every payload before authentication.
	maxHandshakeFrame = 64 << 10
	// maxAuthSteps bounds the auth frames one side sends.
	maxAuthSteps = 16
)

// Config configures a Messenger. Name, Network, Dispatcher and ClientAuth
// are required (ServerAuth too if the Messenger listens); every other
// field has a default, applied by New.
type Config struct {
	// Name is this entity, sent in the banner and checked by peers.
	Name auth.EntityName
	// Network dials and listens: TCP{} in daemons, memnet in tests.
	Network Network
	// Dispatcher receives messages and session events.
	Dispatcher Dispatcher
	// ClientAuth returns the handshake for a connection this side opens
	// to peer.
	ClientAuth func(peer auth.EntityName) auth.ClientHandshake
	// ServerAuth returns the handshake for an accepted connection.
	ServerAuth func() auth.ServerHandshake

	// Logger receives connection faults and session changes. Default:
	// discard.
	Logger *slog.Logger
	// Clock arms backoff and handshake timers. Default: clock.Real().
	Clock clock.Clock
	// Seed seeds the backoff jitter. Default 0 is a valid seed; tests
	// vary it to vary schedules.
	Seed uint64
	// Nonce identifies this incarnation of the process to peers; it
	// must differ between restarts. Default: random (crypto/rand).
	Nonce uint64
	// Port is the port this messenger tells peers it listens on (hello)
	// while it has no listener of its own: a daemon's client messenger
	// that shares the daemon's instance address (its listening
	// messenger's port and Nonce), so that a blocklist entry for that
	// address covers both. A listener's port takes precedence. Default 0.
	Port uint16
	// Policy chooses the policy of a session with peer. Both ends of a
	// session should agree. Default: DefaultPolicy(Name, peer).
	Policy func(peer auth.EntityName) Policy

	// MaxFrame bounds a message payload, sent or received. Default 64 MiB.
	MaxFrame uint32
	// HandshakeTimeout bounds dial plus handshake. Default 10 s.
	HandshakeTimeout time.Duration
	// BackoffMin and BackoffMax bound the lossless reconnect delay, which
	// doubles per failed attempt and is jittered down by up to half.
	// Defaults 200 ms and 15 s.
	BackoffMin, BackoffMax time.Duration
	// SendBytes and SendMessages bound, per session, the messages sent
	// but not yet acknowledged; Send blocks while they are used up.
	// Defaults 128 MiB and 16384. A message larger than SendBytes is
	// let through when nothing else is in flight.
	SendBytes    int64
	SendMessages int64
	// DispatchBytes and DispatchMessages bound, per Messenger, the
	// messages received but not yet dispatched; connections stop reading
	// while they are used up. Defaults 256 MiB and 65536.
	DispatchBytes    int64
	DispatchMessages int64
	// HugePayloads receives payloads of bufpool.HugePage and more into
	// buffers on huge pages (bufpool.Huge), for a daemon that writes them
	// to disk with O_DIRECT: the OSDs. Default false: a client's large
	// replies go to ordinary buffers.
	HugePayloads bool
}

// DefaultPolicy is lossy when either side is a client, lossless between
// daemons.
func DefaultPolicy(self, peer auth.EntityName) Policy {
	if self.Type == "client" || peer.Type == "client" {
		return Lossy
	}
	return Lossless
}

// withDefaults returns cfg with defaults filled in, or an error naming the
// first missing or invalid field.
func (cfg Config) withDefaults() (Config, error) {
	switch {
	case cfg.Name.IsZero():
		return cfg, errors.New("msgr: Config.Name is required")
	case cfg.Network == nil:
		return cfg, errors.New("msgr: Config.Network is required")
	case cfg.Dispatcher == nil:
		return cfg, errors.New("msgr: Config.Dispatcher is required")
	case cfg.ClientAuth == nil:
		return cfg, errors.New("msgr: Config.ClientAuth is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Policy == nil {
		self := cfg.Name
		cfg.Policy = func(peer auth.EntityName) Policy { return DefaultPolicy(self, peer) }
	}
	setDefault(&cfg.MaxFrame, 64<<20)
	setDefault(&cfg.HandshakeTimeout, 10*time.Second)
	setDefault(&cfg.BackoffMin, 200*time.Millisecond)
	setDefault(&cfg.BackoffMax, 15*time.Second)
	setDefault(&cfg.SendBytes, 128<<20)
	setDefault(&cfg.SendMessages, 16384)
	setDefault(&cfg.DispatchBytes, 256<<20)
	setDefault(&cfg.DispatchMessages, 65536)
	if cfg.BackoffMax < cfg.BackoffMin {
		return cfg, fmt.Errorf("msgr: BackoffMax %v < BackoffMin %v", cfg.BackoffMax, cfg.BackoffMin)
	}
	return cfg, nil
}

func setDefault[T int64 | uint32 | time.Duration](p *T, v T) {
	if *p <= 0 {
		*p = v
	}
}
