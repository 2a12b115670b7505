package mdsmon

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/mdsmon/failover"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// prepareBeacon handles "mds beacon beacon=BASE64": a beacon that
// changes nothing refreshes the daemon's liveness and is answered at
// once; one that changes the map is proposed, and answered when applied.
func (s *Service) prepareBeacon(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	b, err := wire.BeaconFromCommand(c)
	if err != nil {
		return nil, moncmd.FromError(err, moncmd.EINVAL)
	}
	s.report(b)
	ch := failover.Beacon(s.m, b)
	if !ch.Changed() {
		r := failover.Reply(s.m, b)
		if r.State != mdsmap.StateNone {
			s.live.Heard(r.GID, now)
		}
		return nil, moncmd.Reply{Status: fmt.Sprintf("mds.%s: %s", b.Name, r.State), Data: r.Encode()}
	}
	if err := ch.Map.Check(); err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "mdsmon: beacon of mds.%s would break the map: %v", b.Name, err)
	}
	next, err := ch.Map.MarshalBinary()
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "mdsmon: %v", err)
	}
	p := proposal{base: s.m.Epoch, next: next, status: ch.String(), events: ch.Events, fence: ch.Fence, beacon: &b}
	return p.encode(), moncmd.Reply{Status: ch.String()}
}

// failoverCommand is the leader's tick command naming the laggy daemons.
func failoverCommand(laggy []mdsmap.GID) moncmd.Command {
	ids := make([]string, len(laggy))
	for i, g := range laggy {
		ids[i] = strconv.FormatUint(uint64(g), 10)
	}
	return moncmd.New("mds failover", "laggy", strings.Join(ids, ","))
}

// prepareFailover handles "mds failover laggy=GID,...": failover.Plan
// on the applied map.
func (s *Service) prepareFailover(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	var laggy []mdsmap.GID
	for _, f := range strings.FieldsFunc(c.StrOr("laggy", ""), func(r rune) bool { return r == ',' }) {
		g, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, moncmd.Errorf(moncmd.EINVAL, "mds failover: laggy %q is not a gid", f)
		}
		laggy = append(laggy, mdsmap.GID(g))
	}
	ch := failover.Plan(s.m, laggy)
	return s.propose(ch, ch.String(), moncmd.Reply{Status: "nothing to do"})
}
