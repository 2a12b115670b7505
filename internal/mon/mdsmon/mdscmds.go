package mdsmon

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/mdsmon/failover"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// role resolves a rank, as Ceph spells one: "FS:RANK", or "RANK" when
// there is one file system.
func (s *Service) role(v string) (*mdsmap.FS, mdsmap.Rank, error) {
	fsName, rs, ok := strings.Cut(v, ":")
	if !ok {
		rs = v
		if len(s.m.FS) != 1 {
			return nil, 0, fmt.Errorf("rank %q: name the file system too (FS:RANK): there are %d", v, len(s.m.FS))
		}
		fsName = s.m.FS[s.m.FSIDs()[0]].Name
	}
	f := s.m.FSByName(fsName)
	if f == nil {
		return nil, 0, fmt.Errorf("file system '%s' does not exist", fsName)
	}
	r, err := strconv.Atoi(rs)
	if err != nil || r < 0 || r >= mdsmap.MaxRanks {
		return nil, 0, fmt.Errorf("rank %q is not a number from 0 to %d", rs, mdsmap.MaxRanks-1)
	}
	return f, mdsmap.Rank(r), nil
}

// daemon resolves "mds fail"'s argument: a daemon's name, a role
// (FS:RANK or RANK) or a gid.
func (s *Service) daemon(v string) (*mdsmap.Daemon, error) {
	if d := s.m.DaemonByName(v); d != nil {
		return d, nil
	}
	if f, r, err := s.role(v); err == nil {
		if d := s.m.Holder(f.ID, r); d != nil {
			return d, nil
		}
		return nil, fmt.Errorf("rank %s:%d is held by no daemon", f.Name, r)
	}
	if g, err := strconv.ParseUint(v, 10, 64); err == nil {
		if d := s.m.Daemons[mdsmap.GID(g)]; d != nil {
			return d, nil
		}
	}
	return nil, fmt.Errorf("no MDS daemon, rank or gid %q (fs status lists them)", v)
}

// prepareMDSFail handles "mds fail role_or_gid": the daemon is failed
// (its rank, if any, goes to a standby) and must restart to rejoin.
func (s *Service) prepareMDSFail(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	v, err := c.Str("role_or_gid")
	if err != nil {
		return nil, moncmd.FromError(err, moncmd.EINVAL)
	}
	d, err := s.daemon(v)
	if err != nil {
		return nil, moncmd.Errorf(moncmd.ENOENT, "mds fail: %v", err)
	}
	ch := failover.Begin(s.m)
	ch.Fail(d.GID, "by command (mds fail)")
	ch.Assign()
	return s.propose(ch, fmt.Sprintf("failed mds gid %d", d.GID), moncmd.Reply{})
}

// prepareRepaired handles "mds repaired role": a damaged rank becomes
// failed, to be replayed by a standby.
func (s *Service) prepareRepaired(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	v, err := c.Str("role")
	if err != nil {
		return nil, moncmd.FromError(err, moncmd.EINVAL)
	}
	f, r, err := s.role(v)
	if err != nil {
		return nil, moncmd.Errorf(moncmd.ENOENT, "mds repaired: %v", err)
	}
	ch := failover.Begin(s.m)
	nf := ch.Map.FS[f.ID]
	i := -1
	for j, x := range nf.Damaged {
		if x == r {
			i = j
		}
	}
	if i < 0 {
		return nil, moncmd.Reply{Status: fmt.Sprintf("rank %s:%d is not damaged", f.Name, r)}
	}
	nf.Damaged = append(nf.Damaged[:i], nf.Damaged[i+1:]...)
	nf.Modified = ch.Map.Epoch
	ch.Events = append(ch.Events, fmt.Sprintf("rank %s:%d marked repaired", f.Name, r))
	ch.Assign()
	return s.propose(ch, fmt.Sprintf("rank %s:%d is repaired: it is failed until a standby takes it", f.Name, r), moncmd.Reply{})
}
