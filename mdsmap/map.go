package mdsmap

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Epoch numbers the map's versions; every change is a new one.
type Epoch uint32

// GID identifies one incarnation of a daemon: the monitors give a new one
// to every daemon that boots, so a restarted daemon is a new gid under
// the same name.
type GID uint64

// FSID identifies a file system (Ceph's fscid); ids are never reused.
type FSID int32

// Rank is a share of a file system's namespace (rank 0 owns the root);
// NoRank marks a daemon without one.
type Rank int32

// NoRank is the rank of a standby.
const NoRank Rank = -1

// Limits the map and its decoder keep to.
const (
	MaxFS      = 256     // file systems
	MaxRanks   = 256     // max_mds
	MaxDaemons = 4096    // daemons
	MaxPools   = 256     // data pools of one file system
	MaxName    = 128     // bytes of a file system's or daemon's name
	MaxAddr    = 256     // bytes of an address
	MaxStandby = 1 << 10 // standby_count_wanted
)

// Defaults of a new file system (Ceph's).
const (
	DefaultSessionTimeout   = 60 * time.Second
	DefaultSessionAutoclose = 300 * time.Second
	DefaultStandbyWanted    = 1
)

// Flags of a file system.
type Flags uint32

const (
	// Joinable: daemons may take its ranks (cleared by "fs fail").
	Joinable Flags = 1 << iota
	// AllowStandbyReplay: standbys may follow its active ranks' journals.
	AllowStandbyReplay
	// Down: the operator took it down ("fs set NAME down true"): no rank
	// is assigned and the ranks are failed.
	Down
	knownFlags = Joinable | AllowStandbyReplay | Down
)

// Daemon is one MDS daemon the map knows.
type Daemon struct {
	GID  GID
	Name string // "a" for mds.a
	Addr string // where it serves clients and peers
	// Nonce is the incarnation's random number from its beacons: a
	// beacon with the same name and another nonce is a new incarnation.
	Nonce uint64
	// State: standby, standby-replay or a rank holder's state.
	State State
	// FS and Rank: the rank it holds (replay to stopping) or follows
	// (standby-replay); 0 and NoRank for a standby.
	FS   FSID
	Rank Rank
	// JoinFS names the file system it prefers to serve (mds_join_fs);
	// empty: any.
	JoinFS string
	// Since is the epoch it entered its state.
	Since Epoch
}

// FS is one file system.
type FS struct {
	ID           FSID
	Name         string
	MetadataPool int64
	DataPools    []int64 // the first is the default data pool
	// MaxMDS is the number of active ranks wanted (max_mds).
	MaxMDS int
	// StandbyWanted is standby_count_wanted: the standbys below which
	// MDS_INSUFFICIENT_STANDBY is raised.
	StandbyWanted int
	Flags         Flags
	// SessionTimeout: a client silent this long is stale; after
	// SessionAutoclose it is evicted.
	SessionTimeout, SessionAutoclose time.Duration
	Created, Modified                Epoch
	// In are the ranks that exist (0..n-1 while growing or shrinking
	// one at a time), sorted; Up maps those held to their daemon;
	// Damaged are ranks that are in but must not be given to a daemon
	// until repaired. A rank in In, not in Up and not damaged is failed.
	In      []Rank
	Up      map[Rank]GID
	Damaged []Rank
}

// Has reports whether fl are all set.
func (f *FS) Has(fl Flags) bool { return f.Flags&fl == fl }

// Failed lists the ranks that are in, held by no daemon and not damaged.
func (f *FS) Failed() []Rank {
	var out []Rank
	for _, r := range f.In {
		if _, up := f.Up[r]; !up && !slices.Contains(f.Damaged, r) {
			out = append(out, r)
		}
	}
	return out
}

// UsesPool reports whether pool is the metadata pool or a data pool.
func (f *FS) UsesPool(pool int64) bool {
	return f.MetadataPool == pool || slices.Contains(f.DataPools, pool)
}

func (f *FS) clone() *FS {
	c := *f
	c.DataPools = slices.Clone(f.DataPools)
	c.In = slices.Clone(f.In)
	c.Up = maps.Clone(f.Up)
	if c.Up == nil {
		c.Up = map[Rank]GID{}
	}
	c.Damaged = slices.Clone(f.Damaged)
	return &c
}

// Map is the MDS map. Build it with New and change it on a Clone.
type Map struct {
	Epoch Epoch
	// NextFSID and NextGID are the ids the next file system and the
	// next daemon get.
	NextFSID FSID
	NextGID  GID
	FS       map[FSID]*FS
	Daemons  map[GID]*Daemon
}

// New returns the empty map of epoch 1.
func New() *Map {
	return &Map{Epoch: 1, NextFSID: 1, NextGID: 1, FS: map[FSID]*FS{}, Daemons: map[GID]*Daemon{}}
}

// Clone returns a deep copy the caller may change.
func (m *Map) Clone() *Map {
	c := &Map{Epoch: m.Epoch, NextFSID: m.NextFSID, NextGID: m.NextGID,
		FS: make(map[FSID]*FS, len(m.FS)), Daemons: make(map[GID]*Daemon, len(m.Daemons))}
	for id, f := range m.FS {
		c.FS[id] = f.clone()
	}
	for g, d := range m.Daemons {
		dc := *d
		c.Daemons[g] = &dc
	}
	return c
}

// FSIDs returns the file systems' ids in order.
func (m *Map) FSIDs() []FSID { return slices.Sorted(maps.Keys(m.FS)) }

// GIDs returns the daemons' gids in order.
func (m *Map) GIDs() []GID { return slices.Sorted(maps.Keys(m.Daemons)) }

// FSByName returns the file system named name, or nil.
func (m *Map) FSByName(name string) *FS {
	for _, f := range m.FS {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// DaemonByName returns the daemon named name, or nil (the newest gid if
// an old incarnation lingers).
func (m *Map) DaemonByName(name string) *Daemon {
	var out *Daemon
	for _, d := range m.Daemons {
		if d.Name == name && (out == nil || d.GID > out.GID) {
			out = d
		}
	}
	return out
}

// Standbys returns the daemons in state standby, by gid.
func (m *Map) Standbys() []*Daemon { return m.inState(StateStandby) }

// StandbyReplays returns the daemons in state standby-replay, by gid.
func (m *Map) StandbyReplays() []*Daemon { return m.inState(StateStandbyReplay) }

func (m *Map) inState(s State) []*Daemon {
	var out []*Daemon
	for _, g := range m.GIDs() {
		if d := m.Daemons[g]; d.State == s {
			out = append(out, d)
		}
	}
	return out
}

// Holder returns the daemon holding rank r of fs, or nil.
func (m *Map) Holder(fs FSID, r Rank) *Daemon {
	f := m.FS[fs]
	if f == nil {
		return nil
	}
	g, ok := f.Up[r]
	if !ok {
		return nil
	}
	return m.Daemons[g]
}

// Follower returns the standby-replay daemon following rank r of fs, or
// nil.
func (m *Map) Follower(fs FSID, r Rank) *Daemon {
	for _, d := range m.StandbyReplays() {
		if d.FS == fs && d.Rank == r {
			return d
		}
	}
	return nil
}

// PoolUser returns the file system using pool, or nil.
func (m *Map) PoolUser(pool int64) *FS {
	for _, id := range m.FSIDs() {
		if f := m.FS[id]; f.UsesPool(pool) {
			return f
		}
	}
	return nil
}

// Check verifies the map's invariants: names unique and bounded, ranks
// in range and sorted, every held rank's daemon in a rank-holding state
// and naming it, every such daemon held, standbys without a rank, ids
// below the next ones. A decoded map is checked; a changer may check
// what it built.
func (m *Map) Check() error {
	if len(m.FS) > MaxFS || len(m.Daemons) > MaxDaemons {
		return fmt.Errorf("mdsmap: %d file systems, %d daemons: too many", len(m.FS), len(m.Daemons))
	}
	names := map[string]bool{}
	for id, f := range m.FS {
		if err := m.checkFS(id, f, names); err != nil {
			return err
		}
	}
	for g, d := range m.Daemons {
		if err := m.checkDaemon(g, d); err != nil {
			return err
		}
	}
	return nil
}

func (m *Map) checkFS(id FSID, f *FS, names map[string]bool) error {
	switch {
	case f == nil || f.ID != id || id <= 0 || id >= m.NextFSID:
		return fmt.Errorf("mdsmap: file system id %d misfiled", id)
	case f.Name == "" || len(f.Name) > MaxName || names[f.Name]:
		return fmt.Errorf("mdsmap: fs %d: name %q empty, too long or not unique", id, f.Name)
	case len(f.DataPools) == 0 || len(f.DataPools) > MaxPools:
		return fmt.Errorf("mdsmap: fs %s: %d data pools", f.Name, len(f.DataPools))
	case f.MaxMDS < 1 || f.MaxMDS > MaxRanks || f.StandbyWanted < 0 || f.StandbyWanted > MaxStandby:
		return fmt.Errorf("mdsmap: fs %s: max_mds %d, standby_count_wanted %d out of range", f.Name, f.MaxMDS, f.StandbyWanted)
	case f.Flags&^knownFlags != 0 || f.SessionTimeout <= 0 || f.SessionAutoclose <= 0:
		return fmt.Errorf("mdsmap: fs %s: flags %#x or session timeouts invalid", f.Name, f.Flags)
	case len(f.In) > MaxRanks || !slices.IsSorted(f.In) || len(slices.Compact(slices.Clone(f.In))) != len(f.In):
		return fmt.Errorf("mdsmap: fs %s: ranks in %v not sorted and unique", f.Name, f.In)
	}
	names[f.Name] = true
	for _, r := range f.In {
		if r < 0 || int(r) >= MaxRanks {
			return fmt.Errorf("mdsmap: fs %s: rank %d out of range", f.Name, r)
		}
	}
	for r, g := range f.Up {
		d := m.Daemons[g]
		if !slices.Contains(f.In, r) || d == nil || d.FS != id || d.Rank != r || !d.State.HoldsRank() {
			return fmt.Errorf("mdsmap: fs %s: rank %d held by gid %d, which does not hold it", f.Name, r, g)
		}
	}
	for _, r := range f.Damaged {
		if !slices.Contains(f.In, r) {
			return fmt.Errorf("mdsmap: fs %s: damaged rank %d is not in", f.Name, r)
		}
		if _, up := f.Up[r]; up {
			return fmt.Errorf("mdsmap: fs %s: damaged rank %d is held", f.Name, r)
		}
	}
	return nil
}

func (m *Map) checkDaemon(g GID, d *Daemon) error {
	switch {
	case d == nil || d.GID != g || g == 0 || g >= m.NextGID:
		return fmt.Errorf("mdsmap: daemon gid %d misfiled", g)
	case d.Name == "" || len(d.Name) > MaxName || len(d.Addr) > MaxAddr || len(d.JoinFS) > MaxName:
		return fmt.Errorf("mdsmap: gid %d: name or address invalid", g)
	case !d.State.InMap():
		return fmt.Errorf("mdsmap: mds.%s: state %s not kept in the map", d.Name, d.State)
	case d.State == StateStandby && (d.FS != 0 || d.Rank != NoRank):
		return fmt.Errorf("mdsmap: mds.%s: standby with a rank", d.Name)
	}
	if d.State == StateStandby {
		return nil
	}
	f := m.FS[d.FS]
	if f == nil || !slices.Contains(f.In, d.Rank) {
		return fmt.Errorf("mdsmap: mds.%s: rank %d:%d does not exist", d.Name, d.FS, d.Rank)
	}
	if d.State.HoldsRank() && f.Up[d.Rank] != g {
		return fmt.Errorf("mdsmap: mds.%s: holds rank %d:%d, which the file system gives to gid %d", d.Name, d.FS, d.Rank, f.Up[d.Rank])
	}
	return nil
}
