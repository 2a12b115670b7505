package pgmon

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/osdmap"
)

// ServiceName is the service's name and key space in the monitor store.
const ServiceName = "pgmap"

// Config configures a Service.
type Config struct {
	// Map returns the applied OSD map (osdmon's Service.Map), nil before
	// the cluster is created. The driver calls both services from one
	// goroutine, so the map is the one applied at the same point of the
	// log. Nil means no map: every query shows no PGs.
	Map func() *osdmap.Map
	// Now tells the time for what queries print relative to it (a PG's
	// SINCE, the recovery rate). Apply never calls it. Default time.Now.
	Now func() time.Time
	// Logger receives the service's messages, as given (the caller adds
	// any group). Default: discard.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Map == nil {
		c.Map = func() *osdmap.Map { return nil }
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Service is the PG statistics service. Create it with New.
type Service struct {
	cfg   Config
	log   *slog.Logger
	st    state     // applied, replicated
	prog  progress  // recovery samples, in memory only
	cache viewCache // derived states of the current map and state
	// loadsAsked is when Tick last asked osdmon to publish loads
	// (loads.go), in memory only.
	loadsAsked time.Time
}

var _ moncmd.Service = (*Service)(nil)

// New returns a service with no statistics; Load reads them from the
// store.
func New(cfg Config) *Service {
	cfg = cfg.withDefaults()
	return &Service{cfg: cfg, log: cfg.Logger, st: newState()}
}

// Name implements moncmd.Service.
func (s *Service) Name() string { return ServiceName }

// Load implements moncmd.Service: it reads every PG's and OSD's record.
// The recovery progress starts again.
func (s *Service) Load(st *monstore.Store) error {
	next := newState()
	err := st.Scan(ServiceName, nil, func(k, v []byte) error { return next.load(string(k), v) })
	if err != nil {
		return fmt.Errorf("pgmon: load: %w", err)
	}
	next.version = s.st.version + 1
	s.st, s.prog = next, progress{}
	return nil
}

// command is one command of the service: a read has query, a write has
// prepare.
type command struct {
	query   func(s *Service, c moncmd.Command) moncmd.Reply
	prepare func(s *Service, c moncmd.Command) ([]byte, moncmd.Reply)
}

// commands lists the service's commands by prefix, with their arguments
// (Command.Args names; [optional]). docs/MONITOR-COMMANDS.md documents
// each.
func commands() map[string]command {
	return map[string]command{
		"pg report":    {prepare: (*Service).prepareReport}, // report (wire.PGStatsReport encoded)
		"pg stat":      {query: (*Service).queryStat},       //
		"pg dump":      {query: (*Service).queryDump},       //
		"pg query":     {query: (*Service).queryPG},         // pgid
		"pg ls":        {query: (*Service).queryLs},         // [states]
		"pg ls-by-osd": {query: (*Service).queryLsByOSD},    // osd
		"df":           {query: (*Service).queryDF},         //
		"osd df":       {query: (*Service).queryOSDDF},      //
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
		return moncmd.Errorf(moncmd.EINVAL, "pgmon: %q is not a read command", c.Prefix)
	}
	return h.query(s, c)
}

// Prepare implements moncmd.Service. It reads the applied state and map
// only.
func (s *Service) Prepare(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	h, ok := commands()[c.Prefix]
	if !ok || h.prepare == nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "pgmon: %q is not a write command", c.Prefix)
	}
	return h.prepare(s, c)
}

// Apply implements moncmd.Service. It uses the proposal, the applied
// state, the applied map and now (the entry's time), so every monitor
// reaches the same state.
func (s *Service) Apply(b *monstore.Batch, data []byte, now time.Time) (moncmd.Reply, error) {
	p, err := decodeProposal(data)
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL), nil
	}
	return s.applyReport(b, p.report, now)
}

// errNoMap is the reply before the cluster is created.
func errNoMap() moncmd.Reply {
	return moncmd.Errorf(moncmd.ENOENT, "no OSD map yet: the cluster was not created (osdmap create)")
}
