package configmon

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
)

// ServiceName is the service's name and key space in the monitor store.
const ServiceName = "config"

// keyDB is the key holding the database.
const keyDB = "db"

// Service is the central configuration service. Create it with New.
type Service struct {
	log *slog.Logger
	db  db
}

var _ moncmd.Service = (*Service)(nil)

// New returns a service with an empty database; Load fills it from the
// store. log receives its messages as given (the caller adds any group);
// nil discards.
func New(log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{log: log, db: newDB()}
}

// Name implements moncmd.Service.
func (s *Service) Name() string { return ServiceName }

// Load implements moncmd.Service: it reads the database, or starts empty.
func (s *Service) Load(st *monstore.Store) error {
	v, err := monstore.Decode(st, ServiceName, []byte(keyDB), decodeDB, newDB)
	if err != nil {
		return fmt.Errorf("configmon: load: %w", err)
	}
	s.db = v
	return nil
}

// command is one command of the service.
type command struct {
	write   bool
	query   func(s *Service, c moncmd.Command) moncmd.Reply
	prepare func(s *Service, c moncmd.Command) ([]byte, moncmd.Reply)
}

// commands lists the service's commands by prefix.
func commands() map[string]command {
	return map[string]command{
		"config set":  {write: true, prepare: (*Service).prepareSet},
		"config rm":   {write: true, prepare: (*Service).prepareRm},
		"config get":  {query: (*Service).queryGet},
		"config dump": {query: (*Service).queryDump},
		"config help": {query: (*Service).queryHelp},
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
		return moncmd.Errorf(moncmd.EINVAL, "config: %q is not a read command of this service", c.Prefix)
	}
	return h.query(s, c)
}

// Prepare implements moncmd.Service. It reads the applied database only.
func (s *Service) Prepare(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	h, ok := commands()[c.Prefix]
	if !ok || h.prepare == nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "config: %q is not a write command of this service", c.Prefix)
	}
	return h.prepare(s, c)
}

// Apply implements moncmd.Service: it applies one set or rm, if the
// database is still at the version the proposal was prepared against.
func (s *Service) Apply(b *monstore.Batch, data []byte, _ time.Time) (moncmd.Reply, error) {
	p, err := decodeProposal(data)
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL), nil
	}
	if p.base != s.db.version {
		return moncmd.Errorf(moncmd.EAGAIN, "config: proposal prepared at version %d, database is at %d", p.base, s.db.version), nil
	}
	next := newDB()
	next.version = s.db.version + 1
	for k, v := range s.db.values {
		next.values[k] = v
	}
	k := entryKey{p.section, p.name}
	var status string
	switch p.op {
	case opSet:
		next.values[k] = p.value
		status = fmt.Sprintf("set %s %s = %s", p.section, p.name, p.value)
		if o, ok := Lookup(p.name); ok && !o.Runtime {
			status += " (takes effect when the daemons restart)"
		}
	case opRm:
		delete(next.values, k)
		status = fmt.Sprintf("removed %s %s", p.section, p.name)
	}
	if err := b.Put(ServiceName, []byte(keyDB), next.encode()); err != nil {
		return moncmd.Reply{}, fmt.Errorf("configmon: apply: %w", err)
	}
	s.db = next
	s.log.Info("config changed", "section", p.section, "name", p.name, "op", p.op, "version", next.version)
	return moncmd.Reply{Status: status}, nil
}

// Tick implements moncmd.Service; time changes nothing here.
func (s *Service) Tick(time.Time) []moncmd.Command { return nil }

// Version returns the number of changes applied to the database.
func (s *Service) Version() uint64 { return s.db.version }
