package osdmon

import (
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// setAck handles "osd pool set POOL ack all|primary": when the pool's
// primaries answer writes (docs/OSD.md, "Acknowledging on the
// primary"). Going to primary narrows what an acknowledged write needs
// to survive to one disk, so it needs yes_i_really_mean_it, as the
// other settings that keep fewer copies of acknowledged writes do
// (poolguards.go); going back to all needs nothing. It reports false
// with the reply that refuses the change.
func setAck(c moncmd.Command, p *osdmap.Pool, name, val string) (moncmd.Reply, bool) {
	m, err := osdmap.ParseAckMode(val)
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "osd pool set: ack: %q is not all or primary", val), false
	}
	if m == osdmap.AckPrimary && p.Type != osdmap.PoolReplicated {
		return moncmd.Errorf(moncmd.EINVAL, "osd pool set: pool '%s' is %s: ack primary needs a replicated pool", name, p.Type), false
	}
	if m == osdmap.AckPrimary && p.Ack != osdmap.AckPrimary {
		sure, err := c.Bool(sureArg)
		if err != nil {
			return moncmd.FromError(err, moncmd.EINVAL), false
		}
		if !sure {
			return moncmd.Errorf(moncmd.EPERM, "pool '%s': ack primary answers a write once the primary alone has it: "+
				"until its replicas catch up, an acknowledged write survives only on the primary's disk, and while that "+
				"primary is down its PGs wait for it (docs/OSD.md); if that is what you want, pass --yes-i-really-mean-it", name), false
		}
	}
	p.Ack = m
	return moncmd.Reply{}, true
}
