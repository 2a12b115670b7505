package osdmon

import (
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// setReadPolicy handles "osd pool set POOL read_policy
// primary|balance|score": where the pool's clients send reads
// (docs/OSD.md, "Reading from replicas"). Replicas serve only what
// every member has committed and the client has seen, so no setting
// loses data and none needs yes_i_really_mean_it; only replicated pools
// take a replica policy. It reports false with the reply that refuses
// the change.
func setReadPolicy(p *osdmap.Pool, name, val string) (moncmd.Reply, bool) {
	r, err := osdmap.ParseReadPolicy(val)
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "osd pool set: read_policy: %q is not primary, balance or score", val), false
	}
	if r != osdmap.ReadPrimary && p.Type != osdmap.PoolReplicated {
		return moncmd.Errorf(moncmd.EINVAL, "osd pool set: pool '%s' is %s: read_policy %s needs a replicated pool", name, p.Type, r), false
	}
	p.ReadPolicy = r
	return moncmd.Reply{}, true
}
