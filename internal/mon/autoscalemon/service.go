package autoscalemon

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/autoscale"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/osdmap"
)

// ServiceName is the service's name (it stores nothing).
const ServiceName = "autoscale"

// Options gives the service its configuration; configmon.View("mon")
// implements it.
type Options interface {
	Int(name string) int64
	Float(name string) float64
	Duration(name string) time.Duration
}

// The options the service reads (declared in internal/config's schema).
const (
	// OptTargetPGPerOSD: PG copies per OSD a root's pools aim at.
	OptTargetPGPerOSD = "mon_target_pg_per_osd"
	// OptSleepInterval: time between the leader's rounds.
	OptSleepInterval = "pg_autoscaler_sleep_interval"
	// OptThreshold: how far off its ideal a pool's pg_num may be.
	OptThreshold = "pg_autoscaler_threshold"
	// OptPGNumMin: the least ideal pg_num.
	OptPGNumMin = "pg_autoscaler_pg_num_min"
)

// OptionNames lists every option the service reads, with its type, so
// the schema can be checked against it.
func OptionNames() map[string]string {
	return map[string]string{OptTargetPGPerOSD: "int", OptSleepInterval: "secs", OptThreshold: "float", OptPGNumMin: "int"}
}

// MaxPoolPGNum caps the ideal pg_num at the OSD-map service's limit per
// pool ("osd pool set pg_num").
const MaxPoolPGNum = 65536

// Config configures a Service.
type Config struct {
	// Map returns the applied OSD map (osdmon's Service.Map), nil before
	// the cluster is created.
	Map func() *osdmap.Map
	// Usage returns the pools' stored bytes and the OSDs' capacities
	// (pgmon's PoolStored and OSDCapacity). Nil means none known.
	Usage func() autoscale.Usage
	// Options are the autoscaler's options. Nil uses the defaults.
	Options Options
	// CanShrink says pg_num may shrink (the OSDs merge PGs). While it
	// is false a pool in mode on with too many PGs is warned about.
	CanShrink bool
	// Logger receives the service's messages. Default: discard.
	Logger *slog.Logger
}

// Service is the autoscaler service. Create it with New.
type Service struct {
	cfg Config
	log *slog.Logger
	// lastRound is when the leader last ran a round, in memory only.
	lastRound time.Time
}

var _ moncmd.Service = (*Service)(nil)

// New returns the service.
func New(cfg Config) *Service {
	if cfg.Map == nil {
		cfg.Map = func() *osdmap.Map { return nil }
	}
	if cfg.Usage == nil {
		cfg.Usage = func() autoscale.Usage { return autoscale.Usage{} }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg, log: cfg.Logger}
}

// Name implements moncmd.Service.
func (s *Service) Name() string { return ServiceName }

// Load implements moncmd.Service: there is no state to load.
func (s *Service) Load(*monstore.Store) error { return nil }

// commands lists the service's read commands by prefix; docs/MONITOR-COMMANDS.md
// documents each.
func commands() map[string]func(s *Service, c moncmd.Command) moncmd.Reply {
	return map[string]func(s *Service, c moncmd.Command) moncmd.Reply{
		"osd pool autoscale-status": (*Service).queryStatus, //
	}
}

// Prefixes returns the command prefixes the service handles, sorted.
func Prefixes() []string { return slices.Sorted(maps.Keys(commands())) }

// Handles implements moncmd.Service.
func (s *Service) Handles(prefix string) (ok, write bool) {
	_, ok = commands()[prefix]
	return ok, false
}

// Query implements moncmd.Service.
func (s *Service) Query(c moncmd.Command) moncmd.Reply {
	h, ok := commands()[c.Prefix]
	if !ok {
		return moncmd.Errorf(moncmd.EINVAL, "autoscalemon: %q is not a read command", c.Prefix)
	}
	return h(s, c)
}

// Prepare implements moncmd.Service: the service has no write commands.
func (s *Service) Prepare(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	return nil, moncmd.Errorf(moncmd.EINVAL, "autoscalemon: %q is not a write command", c.Prefix)
}

// Apply implements moncmd.Service: the service proposes nothing, so a
// proposal for it is refused.
func (s *Service) Apply(*monstore.Batch, []byte, time.Time) (moncmd.Reply, error) {
	return moncmd.Errorf(moncmd.EINVAL, "autoscalemon: it proposes no changes"), nil
}

// options returns the core's options from the service's.
func (s *Service) options() autoscale.Options {
	o := autoscale.Options{MaxPGs: MaxPoolPGNum}
	if s.cfg.Options != nil {
		o.TargetPGPerOSD = int(s.cfg.Options.Int(OptTargetPGPerOSD))
		o.MinPGs = uint32(min(max(s.cfg.Options.Int(OptPGNumMin), 1), MaxPoolPGNum))
		o.Threshold = s.cfg.Options.Float(OptThreshold)
	}
	return o
}

// statuses computes every pool's status on the applied map.
func (s *Service) statuses() (*osdmap.Map, []autoscale.Status) {
	m := s.cfg.Map()
	if m == nil {
		return nil, nil
	}
	return m, autoscale.Compute(m, s.cfg.Usage(), s.options())
}

// sureArg confirms the risky-copies guard of "osd pool set": the
// autoscaler changes no size, and a pool made with size 1 was confirmed
// then (as pgp_num's steps do).
const sureArg = "yes_i_really_mean_it"

// Tick implements moncmd.Service. On every call it raises the pgp_num
// target of each pool in mode on whose pg_num the autoscaler raised
// (pgp_num_target below pg_num, nothing else pending), so the split PGs
// move to their own placement; every pg_autoscaler_sleep_interval it
// runs a round: "osd pool set POOL pg_num N" for each pool in mode on to
// adjust, unless that pool is still moving from an earlier change
// (pgp_num not at pg_num).
func (s *Service) Tick(now time.Time) []moncmd.Command {
	m := s.cfg.Map()
	if m == nil {
		return nil
	}
	var out []moncmd.Command
	anyOn := false
	for _, p := range m.Pools() {
		if p.AutoscaleMode != osdmap.AutoscaleOn {
			continue
		}
		anyOn = true
		if pgNum, pgpNum := p.Targets(); pgNum == p.PGNum && pgpNum < p.PGNum {
			out = append(out, moncmd.New("osd pool set", "pool", p.Name, "var", "pgp_num", "val", fmt.Sprint(p.PGNum), sureArg, "true"))
		}
	}
	interval := time.Minute
	if s.cfg.Options != nil {
		interval = s.cfg.Options.Duration(OptSleepInterval)
	}
	if !anyOn || (!s.lastRound.IsZero() && now.Sub(s.lastRound) < interval) {
		return out
	}
	s.lastRound = now
	_, st := s.statuses()
	changes := autoscale.Changes(st, s.cfg.CanShrink)
	for _, c := range changes {
		p := m.Pool(c.Pool)
		if pgNum, pgpNum := p.Targets(); p.PGPNum != p.PGNum || pgNum != p.PGNum || pgpNum != p.PGNum {
			continue // an earlier change is still moving
		}
		s.log.Info("autoscaling pg_num", "pool", c.Name, "from", c.From, "to", c.To)
		out = append(out, moncmd.New("osd pool set", "pool", c.Name, "var", "pg_num", "val", fmt.Sprint(c.To), sureArg, "true"))
	}
	return out
}
