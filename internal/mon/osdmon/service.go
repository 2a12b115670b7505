package osdmon

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/osdmap"
)

// ServiceName is the service's name and key space in the monitor store,
// and the name subscribers ask for.
const ServiceName = "osdmap"

// keyMeta holds the metaTable.
const keyMeta = "meta"

// ErrNoOptions is returned by New without Options.
var ErrNoOptions = errors.New("osdmon: Config.Options is required")

// Config configures a Service.
type Config struct {
	// Options gives the option values (configmon's View("mon")). Required.
	Options Options
	// Logger receives the service's messages, as given (the caller adds
	// any group). Default: discard.
	Logger *slog.Logger
}

// Service is the OSD-map service. Create it with New.
type Service struct {
	opts Options
	log  *slog.Logger
	st   *monstore.Store // the store Load read, for older epochs

	m    *osdmap.Map // the applied map; nil until "osdmap create"
	meta metaTable
	// failures holds the leader's pending failure reports (not
	// replicated; see the package documentation): target -> reporter ->
	// its report.
	failures map[int32]map[int32]failureReport
	// pgStats are the PG statistics the pgp_num stepping reads
	// (SetPGStats); nil: none.
	pgStats PGStats
}

var _ moncmd.Service = (*Service)(nil)

// New returns a service with no map; Load reads it from the store.
func New(cfg Config) (*Service, error) {
	if cfg.Options == nil {
		return nil, ErrNoOptions
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{opts: cfg.Options, log: log, meta: metaTable{},
		failures: map[int32]map[int32]failureReport{}}, nil
}

// Name implements moncmd.Service.
func (s *Service) Name() string { return ServiceName }

// Map returns the applied map, or nil before "osdmap create".
func (s *Service) Map() *osdmap.Map { return s.m }

// Load implements moncmd.Service: it reads the newest full map and the
// meta table. An empty store leaves the service waiting for "osdmap
// create". Pending failure reports are dropped.
func (s *Service) Load(st *monstore.Store) error {
	s.st, s.m, s.meta = st, nil, metaTable{}
	s.failures = map[int32]map[int32]failureReport{}
	_, last, err := st.Epochs(ServiceName)
	if err != nil {
		return fmt.Errorf("osdmon: load: %w", err)
	}
	if last == 0 {
		return nil
	}
	full, err := st.Full(ServiceName, last)
	if err != nil {
		return fmt.Errorf("osdmon: load epoch %d: %w", last, err)
	}
	m, err := osdmap.UnmarshalMap(full)
	if err != nil {
		return fmt.Errorf("osdmon: load epoch %d: %w", last, err)
	}
	if uint64(m.Epoch()) != last {
		return fmt.Errorf("osdmon: load: %w: full map under epoch %d is epoch %d", monstore.ErrCorrupt, last, m.Epoch())
	}
	meta := metaTable{}
	if v, err := st.Get(ServiceName, []byte(keyMeta)); err == nil {
		if meta, err = decodeMeta(v); err != nil {
			return fmt.Errorf("osdmon: load: %w", err)
		}
	} else if !errors.Is(err, monstore.ErrNotFound) {
		return fmt.Errorf("osdmon: load meta: %w", err)
	}
	s.m, s.meta = m, meta
	return nil
}

// Handles implements moncmd.Service.
func (s *Service) Handles(prefix string) (ok, write bool) {
	c, ok := commands()[prefix]
	return ok, c.prepare != nil
}

// Prefixes returns every command prefix the service handles, sorted.
func Prefixes() []string { return slices.Sorted(maps.Keys(commands())) }

// Query implements moncmd.Service.
func (s *Service) Query(c moncmd.Command) moncmd.Reply {
	h, ok := commands()[c.Prefix]
	if !ok || h.query == nil {
		return moncmd.Errorf(moncmd.EINVAL, "osdmon: %q is not a read command", c.Prefix)
	}
	if s.m == nil {
		return errNoMap()
	}
	return h.query(s, c)
}

// Prepare implements moncmd.Service. It reads the applied map only; the
// one thing it changes is the leader's table of failure reports.
func (s *Service) Prepare(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	h, ok := commands()[c.Prefix]
	if !ok || h.prepare == nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "osdmon: %q is not a write command", c.Prefix)
	}
	if s.m == nil && c.Prefix != "osdmap create" {
		return nil, errNoMap()
	}
	return h.prepare(s, c, now)
}

func errNoMap() moncmd.Reply {
	return moncmd.Errorf(moncmd.ENOENT, "no OSD map yet: the cluster was not created (osdmap create)")
}

// Apply implements moncmd.Service: it makes the proposal's epoch, or
// refuses a proposal prepared against another epoch with EAGAIN. It uses
// nothing but the proposal, the applied state and the options, so every
// monitor reaches the same state; now is not used.
func (s *Service) Apply(b *monstore.Batch, data []byte, _ time.Time) (moncmd.Reply, error) {
	p, err := decodeProposal(data)
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL), nil
	}
	var next *osdmap.Map
	var inc []byte
	switch p.kind {
	case kindCreate:
		if s.m != nil {
			return moncmd.Errorf(moncmd.EAGAIN, "osdmap: the map exists already (epoch %d)", s.m.Epoch()), nil
		}
		if next, err = osdmap.UnmarshalMap(p.body); err != nil {
			return moncmd.FromError(err, moncmd.EINVAL), nil
		}
	case kindInc:
		if s.m == nil || s.m.Epoch() != p.base {
			return moncmd.Errorf(moncmd.EAGAIN, "osdmap: proposal prepared at epoch %d, map is at %d", p.base, s.epoch()), nil
		}
		in, err := osdmap.UnmarshalIncremental(p.body)
		if err == nil {
			next, err = s.m.Apply(in)
		}
		if err != nil {
			return moncmd.FromError(fmt.Errorf("osdmap epoch %d: %w", p.base+1, err), moncmd.EINVAL), nil
		}
		inc = p.body
	}
	full, err := next.MarshalBinary()
	if err != nil {
		return moncmd.Reply{}, fmt.Errorf("osdmon: apply epoch %d: %w", next.Epoch(), err)
	}
	meta := s.meta.with(p.meta)
	epoch := uint64(next.Epoch())
	_ = b.PutEpoch(ServiceName, epoch, inc, full)
	_ = b.Put(ServiceName, []byte(keyMeta), meta.encode())
	if keep := uint64(max(s.opts.Int(OptHistory), 1)); epoch > keep {
		_ = b.Trim(ServiceName, epoch-keep+1)
	}
	if err := b.Err(); err != nil {
		return moncmd.Reply{}, fmt.Errorf("osdmon: apply epoch %d: %w", epoch, err)
	}
	s.forgetFailures(next)
	s.m, s.meta = next, meta
	s.log.Info("osdmap epoch", "epoch", epoch, "status", p.reply.Status)
	return p.reply, nil
}

func (s *Service) epoch() osdmap.Epoch {
	if s.m == nil {
		return 0
	}
	return s.m.Epoch()
}

// Tick implements moncmd.Service: it asks to mark down OSDs whose failure
// reports have become conclusive and to mark out OSDs down for longer
// than the down-out interval, steps pools' pgp_num toward their targets
// (pgstep.go) and takes merging pools' next merge step (pgmerge.go).
// Prepare checks each again.
func (s *Service) Tick(now time.Time) []moncmd.Command {
	if s.m == nil {
		return nil
	}
	var out []moncmd.Command
	for _, target := range slices.Sorted(maps.Keys(s.failures)) {
		if v := s.checkFailure(target, now); v.markDown {
			out = append(out, moncmd.New("osd failure", "target", fmt.Sprint(target)))
		}
	}
	if ids := s.dueOut(now); len(ids) > 0 {
		out = append(out, moncmd.New("osd out", "ids", joinIDs(ids), "auto", "true"))
	}
	out = append(out, s.pgpSteps()...)
	return append(out, s.mergeSteps()...)
}
