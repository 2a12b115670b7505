package mdsmon

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/mdsmon/failover"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/mdsmap"
	"github.com/cuttlestore/cuttle/osdmap"
)

// validName: a file system's name is letters, digits, '-', '_' and '.'.
func validName(n string) bool {
	if n == "" || len(n) > mdsmap.MaxName {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// pool resolves a pool argument (name or id) in the OSD map.
func (s *Service) pool(c moncmd.Command, arg string) (*osdmap.Pool, *moncmd.Reply) {
	v, err := c.Str(arg)
	if err != nil {
		r := moncmd.FromError(err, moncmd.EINVAL)
		return nil, &r
	}
	om := s.cfg.OSDMap()
	if om == nil {
		r := moncmd.Errorf(moncmd.ENOENT, "no OSD map yet: the cluster was not created")
		return nil, &r
	}
	p := om.PoolByName(v)
	if p == nil {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil {
			p = om.Pool(id)
		}
	}
	if p == nil {
		r := moncmd.Errorf(moncmd.ENOENT, "pool '%s' does not exist (osd pool create makes one)", v)
		return nil, &r
	}
	return p, nil
}

// fs finds the file system argument fs_name.
func (s *Service) fs(c moncmd.Command) (*mdsmap.FS, *moncmd.Reply) {
	name, err := c.Str("fs_name")
	if err != nil {
		r := moncmd.FromError(err, moncmd.EINVAL)
		return nil, &r
	}
	f := s.m.FSByName(name)
	if f == nil {
		r := moncmd.Errorf(moncmd.ENOENT, "file system '%s' does not exist (fs ls lists them)", name)
		return nil, &r
	}
	return f, nil
}

// inUse refuses a pool another file system uses.
func (s *Service) inUse(p *osdmap.Pool, self mdsmap.FSID) *moncmd.Reply {
	if f := s.m.PoolUser(p.ID); f != nil && f.ID != self {
		r := moncmd.Errorf(moncmd.EINVAL, "pool '%s' (id %d) is already used by file system '%s'; give each file system its own pools", p.Name, p.ID, f.Name)
		return &r
	}
	return nil
}

// prepareNew handles "fs new fs_name metadata data [force]" with Ceph's
// checks: both pools exist and differ, neither is used by another file
// system, the metadata pool is replicated and (unless force) empty, the
// default data pool is replicated unless force.
func (s *Service) prepareNew(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	name, err := c.Str("fs_name")
	if err != nil {
		return nil, moncmd.FromError(err, moncmd.EINVAL)
	}
	if !validName(name) {
		return nil, moncmd.Errorf(moncmd.EINVAL, "file system name %q: use 1 to %d letters, digits, '-', '_' or '.'", name, mdsmap.MaxName)
	}
	meta, r := s.pool(c, "metadata")
	if r != nil {
		return nil, *r
	}
	data, r := s.pool(c, "data")
	if r != nil {
		return nil, *r
	}
	force, err := c.Bool("force")
	if err != nil {
		return nil, moncmd.FromError(err, moncmd.EINVAL)
	}
	if f := s.m.FSByName(name); f != nil {
		if f.MetadataPool == meta.ID && f.DataPools[0] == data.ID {
			return nil, moncmd.Reply{Status: fmt.Sprintf("file system '%s' already exists with these pools", name)}
		}
		return nil, moncmd.Errorf(moncmd.EEXIST, "file system '%s' already exists with other pools", name)
	}
	if meta.ID == data.ID {
		return nil, moncmd.Errorf(moncmd.EINVAL, "the metadata and data pools must differ (pool '%s')", meta.Name)
	}
	for _, p := range []*osdmap.Pool{meta, data} {
		if r := s.inUse(p, 0); r != nil {
			return nil, *r
		}
	}
	if meta.Type == osdmap.PoolErasure {
		return nil, moncmd.Errorf(moncmd.EINVAL, "pool '%s' is erasure-coded: the metadata pool must be replicated", meta.Name)
	}
	if data.Type == osdmap.PoolErasure && !force {
		return nil, moncmd.Errorf(moncmd.EINVAL, "pool '%s' is erasure-coded: the default data pool should be replicated (add an erasure-coded pool with fs add_data_pool, or pass --force)", data.Name)
	}
	if n := s.cfg.PoolObjects(meta.ID); n > 0 && !force {
		return nil, moncmd.Errorf(moncmd.EINVAL, "pool '%s' already contains %d objects: use an empty pool for metadata (or --force)", meta.Name, n)
	}
	if len(s.m.FS) >= mdsmap.MaxFS {
		return nil, moncmd.Errorf(moncmd.ENOSPC, "already %d file systems", mdsmap.MaxFS)
	}
	ch := failover.Begin(s.m)
	m := ch.Map
	f := &mdsmap.FS{ID: m.NextFSID, Name: name, MetadataPool: meta.ID, DataPools: []int64{data.ID}, MaxMDS: 1,
		StandbyWanted: mdsmap.DefaultStandbyWanted, Flags: mdsmap.Joinable, SessionTimeout: mdsmap.DefaultSessionTimeout,
		SessionAutoclose: mdsmap.DefaultSessionAutoclose, Created: m.Epoch, Modified: m.Epoch, Up: map[mdsmap.Rank]mdsmap.GID{}}
	m.NextFSID++
	m.FS[f.ID] = f
	ch.Events = append(ch.Events, fmt.Sprintf("new file system '%s' (id %d), metadata pool '%s', data pool '%s'", name, f.ID, meta.Name, data.Name))
	ch.Assign()
	return s.propose(ch, fmt.Sprintf("new fs with metadata pool %d and data pool %d", meta.ID, data.ID), moncmd.Reply{})
}

// prepareRm handles "fs rm fs_name yes_i_really_mean_it": refused while
// a rank is held, or while the file system is joinable and not down.
func (s *Service) prepareRm(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	name := c.StrOr("fs_name", "")
	f := s.m.FSByName(name)
	if f == nil {
		return nil, moncmd.Reply{Status: fmt.Sprintf("file system '%s' does not exist", name)}
	}
	if sure, _ := c.Bool("yes_i_really_mean_it"); !sure {
		return nil, moncmd.Errorf(moncmd.EPERM, "this removes file system '%s' and makes its data inaccessible; pass --yes-i-really-mean-it", name)
	}
	if len(f.Up) > 0 || (f.Has(mdsmap.Joinable) && !f.Has(mdsmap.Down)) {
		return nil, moncmd.Errorf(moncmd.EINVAL, "file system '%s' is not down (joinable, %d of %d ranks up): take it down first with fs fail %s (or fs set %s down true and wait for its ranks to stop)",
			name, len(f.Up), len(f.In), name, name)
	}
	ch := failover.Begin(s.m)
	for _, d := range ch.Map.StandbyReplays() {
		if d.FS == f.ID {
			ch.Fail(d.GID, "its file system was removed")
		}
	}
	delete(ch.Map.FS, f.ID)
	ch.Events = append(ch.Events, fmt.Sprintf("removed file system '%s' (id %d)", name, f.ID))
	return s.propose(ch, fmt.Sprintf("removed file system '%s'", name), moncmd.Reply{})
}

// prepareFail handles "fs fail fs_name": not joinable, every rank
// failed (their holders fenced), followers back to standby.
func (s *Service) prepareFail(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	f, r := s.fs(c)
	if r != nil {
		return nil, *r
	}
	ch := failover.Begin(s.m)
	nf := ch.Map.FS[f.ID]
	if nf.Has(mdsmap.Joinable) {
		nf.Flags &^= mdsmap.Joinable
		nf.Modified = ch.Map.Epoch
		ch.Events = append(ch.Events, fmt.Sprintf("file system '%s' is no longer joinable", f.Name))
	}
	for _, rank := range nf.In {
		if g, ok := nf.Up[rank]; ok {
			ch.Fail(g, "its file system was failed (fs fail)")
		}
	}
	ch.Assign()
	return s.propose(ch, fmt.Sprintf("file system '%s' marked not joinable; MDS cannot join the cluster. All MDS ranks marked failed.", f.Name),
		moncmd.Reply{Status: fmt.Sprintf("file system '%s' is already failed", f.Name)})
}

// setVars are the variables "fs set" changes.
var setVars = []string{"max_mds", "standby_count_wanted", "joinable", "allow_standby_replay", "down", "session_timeout", "session_autoclose"}

// prepareSet handles "fs set fs_name var val".
func (s *Service) prepareSet(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	f, r := s.fs(c)
	if r != nil {
		return nil, *r
	}
	v, val := c.StrOr("var", ""), c.StrOr("val", "")
	ch := failover.Begin(s.m)
	nf := ch.Map.FS[f.ID]
	bad := func(format string, args ...any) ([]byte, moncmd.Reply) {
		return nil, moncmd.Errorf(moncmd.EINVAL, "fs set %s %s: "+format, append([]any{f.Name, v}, args...)...)
	}
	intIn := func(lo, hi int) (int, bool) {
		n, err := strconv.Atoi(val)
		return n, err == nil && n >= lo && n <= hi
	}
	flag := func(fl mdsmap.Flags) bool {
		b, err := strconv.ParseBool(val)
		if err != nil {
			return false
		}
		if b {
			nf.Flags |= fl
		} else {
			nf.Flags &^= fl
		}
		return true
	}
	switch v {
	case "max_mds":
		n, ok := intIn(1, mdsmap.MaxRanks)
		if !ok {
			return bad("%q: want a number of ranks from 1 to %d", val, mdsmap.MaxRanks)
		}
		nf.MaxMDS = n
	case "standby_count_wanted":
		n, ok := intIn(0, mdsmap.MaxStandby)
		if !ok {
			return bad("%q: want a count from 0 to %d", val, mdsmap.MaxStandby)
		}
		nf.StandbyWanted = n
	case "session_timeout", "session_autoclose":
		n, ok := intIn(1, 1<<21)
		if !ok {
			return bad("%q: want seconds from 1 to %d", val, 1<<21)
		}
		if v == "session_timeout" {
			nf.SessionTimeout = time.Duration(n) * time.Second
		} else {
			nf.SessionAutoclose = time.Duration(n) * time.Second
		}
	case "joinable":
		if !flag(mdsmap.Joinable) {
			return bad("%q is not true or false", val)
		}
	case "allow_standby_replay":
		if !flag(mdsmap.AllowStandbyReplay) {
			return bad("%q is not true or false", val)
		}
	case "down":
		if !flag(mdsmap.Down) {
			return bad("%q is not true or false", val)
		}
	default:
		return bad("unknown variable; one of %s", strings.Join(setVars, ", "))
	}
	if cur := getVar(f, v); cur == getVar(nf, v) {
		return nil, moncmd.Reply{Status: fmt.Sprintf("fs %s %s is already %s", f.Name, v, cur)}
	}
	nf.Modified = ch.Map.Epoch
	ch.Events = append(ch.Events, fmt.Sprintf("fs %s %s %s", f.Name, v, getVar(nf, v)))
	ch.Assign()
	return s.propose(ch, fmt.Sprintf("fs %s %s = %s", f.Name, v, getVar(nf, v)), moncmd.Reply{})
}

// getVar reads a variable of "fs set" in its canonical form.
func getVar(f *mdsmap.FS, v string) string {
	switch v {
	case "max_mds":
		return strconv.Itoa(f.MaxMDS)
	case "standby_count_wanted":
		return strconv.Itoa(f.StandbyWanted)
	case "session_timeout":
		return strconv.Itoa(int(f.SessionTimeout / time.Second))
	case "session_autoclose":
		return strconv.Itoa(int(f.SessionAutoclose / time.Second))
	case "joinable":
		return strconv.FormatBool(f.Has(mdsmap.Joinable))
	case "allow_standby_replay":
		return strconv.FormatBool(f.Has(mdsmap.AllowStandbyReplay))
	case "down":
		return strconv.FormatBool(f.Has(mdsmap.Down))
	}
	return ""
}

// prepareAddDataPool handles "fs add_data_pool fs_name pool".
func (s *Service) prepareAddDataPool(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	f, r := s.fs(c)
	if r != nil {
		return nil, *r
	}
	p, r := s.pool(c, "pool")
	if r != nil {
		return nil, *r
	}
	if slices.Contains(f.DataPools, p.ID) {
		return nil, moncmd.Reply{Status: fmt.Sprintf("pool '%s' is already a data pool of '%s'", p.Name, f.Name)}
	}
	if p.ID == f.MetadataPool {
		return nil, moncmd.Errorf(moncmd.EINVAL, "pool '%s' is the metadata pool of '%s'; data pools must differ", p.Name, f.Name)
	}
	if r := s.inUse(p, f.ID); r != nil {
		return nil, *r
	}
	if len(f.DataPools) >= mdsmap.MaxPools {
		return nil, moncmd.Errorf(moncmd.ENOSPC, "file system '%s' already has %d data pools", f.Name, mdsmap.MaxPools)
	}
	ch := failover.Begin(s.m)
	nf := ch.Map.FS[f.ID]
	nf.DataPools = append(nf.DataPools, p.ID)
	nf.Modified = ch.Map.Epoch
	ch.Events = append(ch.Events, fmt.Sprintf("added data pool '%s' (id %d) to '%s'", p.Name, p.ID, f.Name))
	return s.propose(ch, fmt.Sprintf("added data pool %d to fsmap", p.ID), moncmd.Reply{})
}

// prepareRmDataPool handles "fs rm_data_pool fs_name pool"; the default
// (first) data pool stays.
func (s *Service) prepareRmDataPool(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	f, r := s.fs(c)
	if r != nil {
		return nil, *r
	}
	p, r := s.pool(c, "pool")
	if r != nil {
		return nil, *r
	}
	i := slices.Index(f.DataPools, p.ID)
	switch {
	case i < 0:
		return nil, moncmd.Reply{Status: fmt.Sprintf("pool '%s' is not a data pool of '%s'", p.Name, f.Name)}
	case i == 0:
		return nil, moncmd.Errorf(moncmd.EINVAL, "pool '%s' is the default data pool of '%s' and cannot be removed", p.Name, f.Name)
	}
	ch := failover.Begin(s.m)
	nf := ch.Map.FS[f.ID]
	nf.DataPools = slices.Delete(nf.DataPools, i, i+1)
	nf.Modified = ch.Map.Epoch
	ch.Events = append(ch.Events, fmt.Sprintf("removed data pool '%s' from '%s'", p.Name, f.Name))
	return s.propose(ch, fmt.Sprintf("removed data pool %d from fsmap", p.ID), moncmd.Reply{})
}
