package balancermon

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/balancer"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/osdmap"
)

// ServiceName is the service's name and key space in the monitor store.
const ServiceName = "balancer"

// keyState is the key holding the state.
const keyState = "state"

// Options gives the service its configuration; configmon.View("mon")
// implements it.
type Options interface {
	Int(name string) int64
	Float(name string) float64
	Duration(name string) time.Duration
}

// The options the service reads (declared in internal/config's schema).
const (
	// OptMaxDeviation: PG copies an OSD may be off its target.
	OptMaxDeviation = "balancer_upmap_max_deviation"
	// OptMaxOptimizations: PG copies one round moves at most.
	OptMaxOptimizations = "balancer_upmap_max_optimizations"
	// OptSleepInterval: time between automatic rounds.
	OptSleepInterval = "balancer_sleep_interval"
	// OptMaxMisplaced: share of object copies degraded or misplaced
	// above which no automatic round starts.
	OptMaxMisplaced = "balancer_target_max_misplaced_ratio"
)

// OptionNames lists every option the service reads, with its type, so
// the schema can be checked against it.
func OptionNames() map[string]string {
	return map[string]string{OptMaxDeviation: "int", OptMaxOptimizations: "int", OptSleepInterval: "secs",
		OptMaxMisplaced: "float"}
}

// Config configures a Service.
type Config struct {
	// Map returns the applied OSD map (osdmon's Service.Map), nil before
	// the cluster is created.
	Map func() *osdmap.Map
	// Options are the balancer's options. Nil uses the defaults.
	Options Options
	// Unclean returns the share (0 to 1) of object copies degraded or
	// misplaced (pgmon's Service.UncleanRatio). Nil means 0.
	Unclean func() float64
	// Logger receives the service's messages. Default: discard.
	Logger *slog.Logger
}

// Service is the balancer service. Create it with New.
type Service struct {
	cfg Config
	log *slog.Logger
	st  state
	// The leader's automatic rounds, in memory only.
	lastRound  time.Time
	lastResult string
}

var _ moncmd.Service = (*Service)(nil)

// New returns a service with the balancer off; Load reads its state.
func New(cfg Config) *Service {
	if cfg.Map == nil {
		cfg.Map = func() *osdmap.Map { return nil }
	}
	if cfg.Unclean == nil {
		cfg.Unclean = func() float64 { return 0 }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg, log: cfg.Logger, st: newState()}
}

// Name implements moncmd.Service.
func (s *Service) Name() string { return ServiceName }

// Load implements moncmd.Service.
func (s *Service) Load(st *monstore.Store) error {
	v, err := monstore.Decode(st, ServiceName, []byte(keyState), decodeStateBytes, newState)
	if err != nil {
		return fmt.Errorf("balancermon: load: %w", err)
	}
	s.st = v
	return nil
}

type command struct {
	query   func(s *Service, c moncmd.Command) moncmd.Reply
	prepare func(s *Service, c moncmd.Command) ([]byte, moncmd.Reply)
}

// commands lists the service's commands by prefix, with their arguments.
// docs/MONITOR-COMMANDS.md documents each.
func commands() map[string]command {
	return map[string]command{
		"balancer status":   {query: (*Service).queryStatus},       //
		"balancer eval":     {query: (*Service).queryEval},         // [pools] [plan]
		"balancer show":     {query: (*Service).queryShow},         // plan
		"balancer on":       {prepare: (*Service).prepareOn},       //
		"balancer off":      {prepare: (*Service).prepareOff},      //
		"balancer mode":     {prepare: (*Service).prepareMode},     // mode
		"balancer optimize": {prepare: (*Service).prepareOptimize}, // plan [pools]
		"balancer rm":       {prepare: (*Service).prepareRm},       // plan
	}
}

// Prefixes returns the command prefixes the service handles, sorted.
func Prefixes() []string { return slices.Sorted(maps.Keys(commands())) }

// Handles implements moncmd.Service.
func (s *Service) Handles(prefix string) (ok, write bool) {
	c, ok := commands()[prefix]
	return ok, c.prepare != nil
}

// Query implements moncmd.Service.
func (s *Service) Query(c moncmd.Command) moncmd.Reply {
	h, ok := commands()[c.Prefix]
	if !ok || h.query == nil {
		return moncmd.Errorf(moncmd.EINVAL, "balancermon: %q is not a read command", c.Prefix)
	}
	return h.query(s, c)
}

// Prepare implements moncmd.Service.
func (s *Service) Prepare(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	h, ok := commands()[c.Prefix]
	if !ok || h.prepare == nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "balancermon: %q is not a write command", c.Prefix)
	}
	return h.prepare(s, c)
}

// propose returns the proposal that makes next the state.
func (s *Service) propose(next state, status string) ([]byte, moncmd.Reply) {
	next.version = s.st.version + 1
	r := moncmd.Reply{Status: status}
	return proposal{base: s.st.version, next: next, status: status}.encode(), r
}

// Apply implements moncmd.Service.
func (s *Service) Apply(b *monstore.Batch, data []byte, _ time.Time) (moncmd.Reply, error) {
	p, err := decodeProposal(data)
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL), nil
	}
	if p.base != s.st.version || p.next.version != p.base+1 {
		return moncmd.Errorf(moncmd.EAGAIN, "balancermon: state changed (version %d, proposal for %d)", s.st.version, p.base), nil
	}
	if err := b.Put(ServiceName, []byte(keyState), encodeState(p.next)); err != nil {
		return moncmd.Reply{}, fmt.Errorf("balancermon: apply: %w", err)
	}
	s.st = p.next
	return moncmd.Reply{Status: p.status}, nil
}

// options returns the balancer's options, restricted to pools.
func (s *Service) options(pools []int64) balancer.Options {
	o := balancer.Options{Pools: pools}
	if s.cfg.Options != nil {
		o.MaxDeviation = int(s.cfg.Options.Int(OptMaxDeviation))
		o.MaxMoves = int(s.cfg.Options.Int(OptMaxOptimizations))
	}
	return o
}

// Tick implements moncmd.Service: while the balancer is on, once every
// balancer_sleep_interval, it proposes a round's plan, unless the
// cluster is still moving more than balancer_target_max_misplaced_ratio
// of its object copies.
func (s *Service) Tick(now time.Time) []moncmd.Command {
	if !s.st.active || s.st.mode != ModeUpmap {
		return nil
	}
	interval, maxUnclean := time.Minute, 0.05
	if s.cfg.Options != nil {
		interval, maxUnclean = s.cfg.Options.Duration(OptSleepInterval), s.cfg.Options.Float(OptMaxMisplaced)
	}
	if !s.lastRound.IsZero() && now.Sub(s.lastRound) < interval {
		return nil
	}
	s.lastRound = now
	m := s.cfg.Map()
	if m == nil {
		return nil
	}
	if u := s.cfg.Unclean(); u > maxUnclean {
		s.lastResult = fmt.Sprintf("waiting: %.1f%% of object copies degraded or misplaced (limit %.1f%%)", 100*u, 100*maxUnclean)
		return nil
	}
	plan := balancer.Optimize(m, s.options(nil))
	if plan.Empty() {
		s.lastResult = fmt.Sprintf("epoch %d: balanced, nothing to move", m.Epoch())
		return nil
	}
	s.lastResult = fmt.Sprintf("epoch %d: proposed %d moves", m.Epoch(), len(plan.Moves))
	s.log.Info("balancer round", "epoch", m.Epoch(), "moves", len(plan.Moves))
	items, rm := planArgs(plan)
	return []moncmd.Command{planCommand(plan.Epoch, items, rm)}
}

// planCommand is the command that executes a plan.
func planCommand(epoch osdmap.Epoch, items, rm string) moncmd.Command {
	return moncmd.New("osd pg-upmap-plan", "epoch", fmt.Sprint(epoch), "items", items, "rm", rm)
}
