package authmon

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
)

// ServiceName is the service's name and key space in the monitor store.
const ServiceName = "auth"

// Config configures a Service.
type Config struct {
	// Logger receives changes (never secrets). Nil discards.
	Logger *slog.Logger
	// Keys is the view the service publishes the applied entities to,
	// the one the Authority was built with. Nil: a new one without a
	// fallback (see KeyServer).
	Keys *KeyServer
	// Authority receives every applied set of rotating keys. Nil (auth
	// "none"): the service keeps entities but never rotates keys.
	Authority *auth.Authority
	// Seed is the keyring the first leader imports into an empty
	// database (the one the monitors were made with). Nil: no bootstrap.
	Seed auth.Keyring
	// Services are the services rotating keys are kept for. Default
	// mon, osd, mds, mgr.
	Services []string
	// RotationPeriod is how long each new rotating key seals tickets.
	// Default 1 h, the Authority's default.
	RotationPeriod time.Duration
	// NewSecret draws entities' keys in Prepare. Default auth.NewSecret.
	NewSecret func() auth.Secret
}

// Service is the auth database service. Create it with New.
type Service struct {
	cfg  Config
	log  *slog.Logger
	keys *KeyServer
	db   db

	// asked remembers, per Tick command, the database version and time
	// it was last asked for, so the leader does not ask again every
	// second while it is in flight. Leader-local, not replicated.
	asked map[string]askedAt
}

type askedAt struct {
	version uint64
	at      time.Time
}

var _ moncmd.Service = (*Service)(nil)

// New returns a service with an empty database; Load fills it from the
// store.
func New(cfg Config) (*Service, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Keys == nil {
		cfg.Keys = NewKeyServer(nil)
	}
	if cfg.Services == nil {
		cfg.Services = []string{"mon", "osd", "mds", "mgr"}
	}
	if cfg.RotationPeriod == 0 {
		cfg.RotationPeriod = time.Hour
	}
	if cfg.NewSecret == nil {
		cfg.NewSecret = auth.NewSecret
	}
	cfg.Services = slices.Compact(slices.Sorted(slices.Values(cfg.Services)))
	for _, s := range cfg.Services {
		// Checks the service and the period once, so Prepare cannot fail.
		if _, err := auth.NewRotatingKeys(s, cfg.RotationPeriod); err != nil {
			return nil, fmt.Errorf("authmon: %w", err)
		}
	}
	if cfg.Seed != nil {
		if _, err := cfg.Seed.Marshal(); err != nil {
			return nil, fmt.Errorf("authmon: seed keyring: %w", err)
		}
	}
	s := &Service{cfg: cfg, log: cfg.Logger.WithGroup(ServiceName), keys: cfg.Keys, db: newDB(), asked: map[string]askedAt{}}
	s.keys.publish(&s.db)
	return s, nil
}

// Name implements moncmd.Service.
func (s *Service) Name() string { return ServiceName }

// KeyServer returns the view of the applied entities.
func (s *Service) KeyServer() *KeyServer { return s.keys }

// Version returns the number of changes applied to the database.
func (s *Service) Version() uint64 { return s.db.version }

// Seeded reports whether the bootstrap import has applied.
func (s *Service) Seeded() bool { return s.db.seeded }

// Load implements moncmd.Service: it reads the database (or starts
// empty), publishes its entities and hands its rotating keys to the
// Authority.
func (s *Service) Load(st *monstore.Store) error {
	d, err := loadDB(st)
	if err != nil {
		return fmt.Errorf("authmon: load: %w", err)
	}
	s.install(d)
	return nil
}

func loadDB(st *monstore.Store) (db, error) {
	d := newDB()
	meta, err := st.Get(ServiceName, []byte(keyMeta))
	if errors.Is(err, monstore.ErrNotFound) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	if d.version, d.seeded, err = decodeMeta(meta); err != nil {
		return d, err
	}
	err = st.Scan(ServiceName, nil, func(key, value []byte) error {
		k := string(key)
		switch {
		case k == keyMeta:
			return nil
		case strings.HasPrefix(k, prefixEntity):
			name, err := parseName(k[len(prefixEntity):])
			if err != nil {
				return fmt.Errorf("%w: key %q: %w", monstore.ErrCorrupt, k, err)
			}
			e, err := decodeEntity(value)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			d.entities[name] = e
		case strings.HasPrefix(k, prefixRotating):
			r, err := decodeRotating(k[len(prefixRotating):], value)
			if err != nil {
				return err
			}
			d.rotating[r.Service()] = r
		default:
			return fmt.Errorf("%w: unknown key %q", monstore.ErrCorrupt, k)
		}
		return nil
	})
	return d, err
}

// install makes d the applied database and tells the outputs.
func (s *Service) install(d db) {
	s.db = d
	s.keys.publish(&s.db)
	if s.cfg.Authority != nil {
		for _, svc := range slices.Sorted(maps.Keys(d.rotating)) {
			s.cfg.Authority.SetServiceKeys(d.rotating[svc])
		}
	}
}

// command is one command of the service.
type command struct {
	write   bool
	query   func(s *Service, c moncmd.Command) moncmd.Reply
	prepare func(s *Service, c moncmd.Command, now time.Time) ([]byte, moncmd.Reply)
}

// commands lists the service's commands by prefix.
func commands() map[string]command {
	return map[string]command{
		"auth add":           {write: true, prepare: (*Service).prepareAdd},
		"auth get-or-create": {write: true, prepare: (*Service).prepareGetOrCreate},
		"auth caps":          {write: true, prepare: (*Service).prepareCaps},
		"auth rm":            {write: true, prepare: (*Service).prepareRm},
		"auth import":        {write: true, prepare: (*Service).prepareImport},
		"auth rotate":        {write: true, prepare: (*Service).prepareRotate},
		"auth get":           {query: (*Service).queryGet},
		"auth print-key":     {query: (*Service).queryPrintKey},
		"auth ls":            {query: (*Service).queryLs},
		"auth get-rotating":  {query: (*Service).queryGetRotating},
	}
}

// Prefixes returns the command prefixes the service handles, sorted.
func Prefixes() []string { return slices.Sorted(maps.Keys(commands())) }

// Handles implements moncmd.Service.
func (s *Service) Handles(prefix string) (ok, write bool) {
	c, ok := commands()[prefix]
	return ok, c.write
}

// Query implements moncmd.Service.
func (s *Service) Query(c moncmd.Command) moncmd.Reply {
	h, ok := commands()[c.Prefix]
	if !ok || h.query == nil {
		return moncmd.Errorf(moncmd.EINVAL, "auth: %q is not a read command of this service", c.Prefix)
	}
	return h.query(s, c)
}

// Prepare implements moncmd.Service. It reads the applied database only;
// it draws new keys, which the proposal carries.
func (s *Service) Prepare(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	h, ok := commands()[c.Prefix]
	if !ok || h.prepare == nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "auth: %q is not a write command of this service", c.Prefix)
	}
	return h.prepare(s, c, now)
}

// Apply implements moncmd.Service: it applies one change if the database
// is still at the version the proposal was prepared against.
func (s *Service) Apply(b *monstore.Batch, data []byte, _ time.Time) (moncmd.Reply, error) {
	p, err := decodeProposal(data)
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL), nil
	}
	if p.base != s.db.version {
		return moncmd.Errorf(moncmd.EAGAIN, "auth: proposal prepared at version %d, database is at %d", p.base, s.db.version), nil
	}
	next := s.db.next()
	reply, bad := next.apply(p)
	if bad {
		return reply, nil
	}
	if err := s.write(b, p, &next); err != nil {
		return moncmd.Reply{}, fmt.Errorf("authmon: apply: %w", err)
	}
	s.install(next)
	names := make([]string, 0, len(p.entities))
	for _, ne := range p.entities {
		names = append(names, ne.name.String())
	}
	s.log.Info("auth changed", "op", p.op.String(), "entities", names, "rotated", len(p.rotating), "version", next.version)
	return reply, nil
}

// write records in b the keys p changed in d (already applied).
func (s *Service) write(b *monstore.Batch, p *proposal, d *db) error {
	for _, ne := range p.entities {
		if e, ok := d.entities[ne.name]; ok {
			_ = b.Put(ServiceName, entityKey(ne.name), entityValue(e))
		} else {
			_ = b.Delete(ServiceName, entityKey(ne.name))
		}
	}
	for _, r := range p.rotating {
		_ = b.Put(ServiceName, rotatingKey(r.Service()), rotatingValue(r))
	}
	_ = b.Put(ServiceName, []byte(keyMeta), encodeMeta(d.version, d.seeded))
	return b.Err()
}

// apply changes d (a copy one version on) by p and returns the reply;
// bad means p does not apply to d and d must be dropped. Prepare checked
// the same against the same version, so bad is only for proposals that
// did not come from Prepare.
func (d *db) apply(p *proposal) (moncmd.Reply, bool) {
	switch p.op {
	case opAdd:
		ne := p.entities[0]
		d.entities[ne.name] = ne.entry
		if p.flags&flagShow != 0 {
			return entityReply(ne.name, ne.entry), false
		}
		return moncmd.Reply{Status: "added key for " + ne.name.String()}, false
	case opCaps:
		ne := p.entities[0]
		cur, ok := d.entities[ne.name]
		if !ok {
			return moncmd.Errorf(moncmd.ENOENT, "auth caps: unknown entity %s", ne.name), true
		}
		d.entities[ne.name] = auth.KeyEntry{Key: cur.Key, Caps: ne.entry.Caps}
		return moncmd.Reply{Status: "updated caps for " + ne.name.String()}, false
	case opRm:
		name := p.entities[0].name
		if _, ok := d.entities[name]; !ok {
			return moncmd.Errorf(moncmd.ENOENT, "auth rm: unknown entity %s", name), true
		}
		delete(d.entities, name)
		return moncmd.Reply{Status: "removed " + name.String()}, false
	case opImport:
		for _, ne := range p.entities {
			d.entities[ne.name] = ne.entry
		}
		if p.flags&flagBootstrap != 0 {
			d.seeded = true
			return moncmd.Reply{Status: fmt.Sprintf("seeded the auth database with %d entities", len(p.entities))}, false
		}
		return moncmd.Reply{Status: fmt.Sprintf("imported keyring (%d entities)", len(p.entities))}, false
	case opRotate:
		var names []string
		for _, r := range p.rotating {
			d.rotating[r.Service()] = r
			names = append(names, r.Service())
		}
		return moncmd.Reply{Status: "rotated the service keys of " + strings.Join(names, ", ")}, false
	}
	return moncmd.Errorf(moncmd.EINVAL, "auth: unknown op %s", p.op), true
}
