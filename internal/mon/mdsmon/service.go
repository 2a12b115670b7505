package mdsmon

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/mdsmon/failover"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
	"github.com/cuttlestore/cuttle/osdmap"
)

// ServiceName is the service's name and key space in the monitor store.
const ServiceName = "mdsmap"

// keyMap is the key holding the encoded map; keyFences the fences not
// yet in the OSD map (fences.go).
const (
	keyMap    = "map"
	keyFences = "fences"
)

// Options gives the service its configuration; configmon.View("mon")
// implements it.
type Options interface {
	Duration(name string) time.Duration
}

// OptBeaconGrace is the option naming how long a daemon may be silent
// before the leader replaces it (declared in internal/config's schema).
const OptBeaconGrace = "mds_beacon_grace"

// DefaultBeaconGrace is mds_beacon_grace's default: 4 beacon intervals
// of 1 s. docs/MONITORS.md says why.
const DefaultBeaconGrace = 4 * time.Second

// OptionNames lists every option the service reads, with its type.
func OptionNames() map[string]string { return map[string]string{OptBeaconGrace: "secs"} }

// Config configures a Service.
type Config struct {
	// OSDMap returns the applied OSD map (osdmon's Service.Map), for the
	// pools; nil before the cluster is created.
	OSDMap func() *osdmap.Map
	// PoolObjects counts a pool's objects (pgmon's Service.PoolObjects).
	// Nil counts none.
	PoolObjects func(pool int64) int64
	// Options are the service's options. Nil uses the defaults.
	Options Options
	// Logger receives the service's messages. Default: discard.
	Logger *slog.Logger
}

// Service is the MDS-map service. Create it with New.
type Service struct {
	cfg  Config
	log  *slog.Logger
	m    *mdsmap.Map
	live *failover.Liveness
	// lastTick is when Tick last ran (the leader's), to tell a new
	// leadership.
	lastTick time.Time
	// fences are failed daemons' addresses not yet seen in the OSD map's
	// blocklist (fences.go), in the order they were decided: replicated
	// state, applied by every monitor and kept in the store, so a new
	// leader sends what its predecessor had not.
	fences []string
	// sent is when this monitor, as leader, last asked to blocklist each
	// fence (leader memory, not replicated).
	sent map[string]time.Time
	// reports are the rank holders' latest health reports, from their
	// beacons (leader memory, like liveness: health.go).
	reports map[mdsmap.GID]wire.MDSHealth
}

// FenceExpire is how long a failed MDS stays blocklisted (Ceph's
// mon_mds_blocklist_interval: a day).
const FenceExpire = 24 * time.Hour

var _ moncmd.Service = (*Service)(nil)

// New returns a service with an empty map; Load reads the stored one.
func New(cfg Config) *Service {
	if cfg.OSDMap == nil {
		cfg.OSDMap = func() *osdmap.Map { return nil }
	}
	if cfg.PoolObjects == nil {
		cfg.PoolObjects = func(int64) int64 { return 0 }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg, log: cfg.Logger, m: mdsmap.New(), live: failover.NewLiveness(), reports: map[mdsmap.GID]wire.MDSHealth{}}
}

// Name implements moncmd.Service.
func (s *Service) Name() string { return ServiceName }

// Map returns the applied map (immutable).
func (s *Service) Map() *mdsmap.Map { return s.m }

// Load implements moncmd.Service.
func (s *Service) Load(st *monstore.Store) error {
	m, err := monstore.Decode(st, ServiceName, []byte(keyMap), mdsmap.Unmarshal, mdsmap.New)
	if err != nil {
		return fmt.Errorf("mdsmon: load: %w", err)
	}
	s.m = m
	fences, err := monstore.Decode(st, ServiceName, []byte(keyFences), decodeFences, func() []string { return nil })
	if err != nil {
		return fmt.Errorf("mdsmon: load: %w", err)
	}
	s.fences = fences
	return nil
}

func (s *Service) grace() time.Duration {
	if s.cfg.Options != nil {
		if g := s.cfg.Options.Duration(OptBeaconGrace); g > 0 {
			return g
		}
	}
	return DefaultBeaconGrace
}

type command struct {
	query   func(s *Service, c moncmd.Command) moncmd.Reply
	prepare func(s *Service, c moncmd.Command, now time.Time) ([]byte, moncmd.Reply)
}

// commands lists the service's commands by prefix, with their arguments.
// docs/MONITOR-COMMANDS.md documents each.
func commands() map[string]command {
	return map[string]command{
		"fs ls":            {query: (*Service).queryLs},              // -
		"fs status":        {query: (*Service).queryStatus},          // [fs_name]
		"fs dump":          {query: (*Service).queryDump},            // -
		"fs get":           {query: (*Service).queryGet},             // fs_name
		"mds stat":         {query: (*Service).queryStat},            // -
		"fs new":           {prepare: (*Service).prepareNew},         // fs_name metadata data [force]
		"fs rm":            {prepare: (*Service).prepareRm},          // fs_name yes_i_really_mean_it
		"fs set":           {prepare: (*Service).prepareSet},         // fs_name var val
		"fs fail":          {prepare: (*Service).prepareFail},        // fs_name
		"fs add_data_pool": {prepare: (*Service).prepareAddDataPool}, // fs_name pool
		"fs rm_data_pool":  {prepare: (*Service).prepareRmDataPool},  // fs_name pool
		"mds fail":         {prepare: (*Service).prepareMDSFail},     // role_or_gid
		"mds repaired":     {prepare: (*Service).prepareRepaired},    // role
		"mds beacon":       {prepare: (*Service).prepareBeacon},      // beacon (base64 wire.MDSBeacon)
		"mds failover":     {prepare: (*Service).prepareFailover},    // laggy (gids, comma-separated): the leader's tick
		"mds fenced":       {prepare: (*Service).prepareFenced},      // addrs (comma-separated): the leader's tick
	}
}

// Prefixes returns the command prefixes the service handles, sorted.
func Prefixes() []string { return slices.Sorted(maps.Keys(commands())) }

// Handles implements moncmd.Service.
func (s *Service) Handles(prefix string) (ok, write bool) {
	c, ok := commands()[prefix]
	return ok, c.prepare != nil
}

// LeaderOnly implements moncmd.LeaderOnly: beacons go to the leader,
// which alone judges liveness and keeps the ranks' health reports, and
// so does fs status, which shows them.
func (s *Service) LeaderOnly(prefix string) bool {
	return prefix == "mds beacon" || prefix == "fs status"
}

// Query implements moncmd.Service.
func (s *Service) Query(c moncmd.Command) moncmd.Reply {
	h, ok := commands()[c.Prefix]
	if !ok || h.query == nil {
		return moncmd.Errorf(moncmd.EINVAL, "mdsmon: %q is not a read command", c.Prefix)
	}
	return h.query(s, c)
}

// Prepare implements moncmd.Service.
func (s *Service) Prepare(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	h, ok := commands()[c.Prefix]
	if !ok || h.prepare == nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "mdsmon: %q is not a write command", c.Prefix)
	}
	return h.prepare(s, c, now)
}

// propose returns the proposal of a change, or, when it changed
// nothing, the reply done.
func (s *Service) propose(ch *failover.Change, status string, done moncmd.Reply) ([]byte, moncmd.Reply) {
	if !ch.Changed() {
		return nil, done
	}
	if err := ch.Map.Check(); err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "mdsmon: the change would break the map: %v", err)
	}
	b, err := ch.Map.MarshalBinary()
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "mdsmon: %v", err)
	}
	p := proposal{base: s.m.Epoch, next: b, status: status, events: ch.Events, fence: ch.Fence}
	return p.encode(), moncmd.Reply{Status: status}
}

// Apply implements moncmd.Service.
func (s *Service) Apply(b *monstore.Batch, data []byte, now time.Time) (moncmd.Reply, error) {
	p, err := decodeProposal(data)
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL), nil
	}
	if len(p.next) == 0 {
		return s.applyFenced(b, p) // fences.go
	}
	if p.base != s.m.Epoch {
		return moncmd.Errorf(moncmd.EAGAIN, "mdsmon: map changed (epoch %d, proposal for %d)", s.m.Epoch, p.base), nil
	}
	next, err := mdsmap.Unmarshal(p.next)
	if err != nil || next.Epoch != p.base+1 {
		return moncmd.Errorf(moncmd.EINVAL, "mdsmon: proposal's map: %v (epoch %d after %d)", err, epochOf(next), p.base), nil
	}
	if err := b.Put(ServiceName, []byte(keyMap), p.next); err != nil {
		return moncmd.Reply{}, fmt.Errorf("mdsmon: apply: %w", err)
	}
	s.m = next
	for _, e := range p.events {
		s.log.Info("mds map", "epoch", next.Epoch, "change", e)
	}
	if len(p.fence) > 0 {
		s.log.Info("fencing failed MDS daemons", "addrs", p.fence)
		if err := s.addFences(b, p.fence); err != nil { // fences.go
			return moncmd.Reply{}, err
		}
	}
	r := moncmd.Reply{Status: p.status}
	if p.beacon != nil {
		rep := failover.Reply(next, *p.beacon)
		s.live.Heard(rep.GID, now)
		r.Data = rep.Encode()
	}
	return r, nil
}

func epochOf(m *mdsmap.Map) mdsmap.Epoch {
	if m == nil {
		return 0
	}
	return m.Epoch
}

// newLeaderAfter is how long without a Tick means this monitor has just
// become the leader (Ticks come every second on the leader).
const newLeaderAfter = 3 * time.Second

// Tick implements moncmd.Service: it blocklists the failed daemons not
// yet in the OSD map's blocklist ("osd blocklist add ADDR/NONCE" for
// FenceExpire) and retires those that are ("mds fenced", fences.go), and
// proposes "mds failover" when a daemon is laggy or a rank can be
// assigned. A new leader first resets liveness, so no daemon is laggy
// for beacons its predecessor heard.
func (s *Service) Tick(now time.Time) []moncmd.Command {
	if s.lastTick.IsZero() || now.Sub(s.lastTick) > newLeaderAfter {
		s.live.Reset(s.m, now)
		clear(s.reports)
	}
	s.pruneReports()
	s.lastTick = now
	cmds := s.fenceCommands(now)
	if len(s.m.Daemons) == 0 {
		return cmds
	}
	laggy := s.live.Laggy(s.m, now, s.grace())
	if failover.Plan(s.m, laggy).Changed() {
		cmds = append(cmds, failoverCommand(laggy))
	}
	return cmds
}
