package rados

import (
	"math/rand/v2"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// readRouting is the objecter's state for reads under a read policy
// (readpolicy.go decides): guarded by the objecter's lock.
type readRouting struct {
	policy    osdmap.ReadPolicy // the client's own, if set
	policySet bool
	loc       location // the client's CRUSH location
	weights   ScoreWeights
	rnd       *rand.Rand
	// locs are the OSDs' CRUSH locations under locsMap.
	locsMap *osdmap.Map
	locs    map[int32]location
	// seen is, per PG, the newest version the client saw acknowledged
	// or read there: a balanced read carries it (ReadAtLeast), so that a
	// replica that has not applied it refuses (read-your-writes).
	seen map[osdmap.PG]wire.Version
}

// sawLocked records that the client saw version v of pg.
func (r *readRouting) sawLocked(pg osdmap.PG, v wire.Version) {
	if v == (wire.Version{}) {
		return
	}
	if r.seen == nil {
		r.seen = map[osdmap.PG]wire.Version{}
	}
	if cur := r.seen[pg]; cur.Less(v) {
		r.seen[pg] = v
	}
}

// policyFor returns the read policy of reads in pool.
func (r *readRouting) policyFor(pool *osdmap.Pool) osdmap.ReadPolicy {
	if r.policySet {
		return r.policy
	}
	if pool == nil || pool.Type != osdmap.PoolReplicated {
		return osdmap.ReadPrimary
	}
	return pool.ReadPolicy
}

// readTargetLocked returns the OSD op p goes to now and its address: its
// PG's primary, or for a balanced read a member the read policy chooses,
// and sets p's balanced-read flag and ReadAtLeast to match.
func (o *objecter) readTargetLocked(p *op) (int32, string) {
	p.sentTo = p.t.osd
	p.msg.Flags &^= wire.FlagBalanceReads
	p.msg.ReadAtLeast = wire.Version{}
	if !p.balanced {
		return p.t.osd, p.t.addr
	}
	r := &o.reads
	policy := r.policyFor(o.m.Pool(p.t.pg.Pool))
	if policy == osdmap.ReadPrimary {
		return p.t.osd, p.t.addr
	}
	// The flag tells the primary too that this client reads from
	// replicas: it then holds the read while a write to the object is
	// not committed everywhere (internal/osd's replread.go).
	p.msg.Flags |= wire.FlagBalanceReads
	if p.atPrimary || len(p.t.acting) < 2 {
		return p.t.osd, p.t.addr
	}
	if r.locsMap != o.m {
		r.locsMap, r.locs = o.m, locations(o.m.Crush())
	}
	cands := make([]readChoice, 0, len(p.t.acting))
	cands = append(cands, readChoice{osd: p.t.osd, dist: distance(r.loc, r.locs[p.t.osd]), load: o.m.OSD(p.t.osd).Load})
	for _, id := range p.t.acting {
		if id != p.t.osd {
			if os := o.osds[id]; os != nil && os.retry != nil {
				continue // its session is backing off
			}
			cands = append(cands, readChoice{osd: id, dist: distance(r.loc, r.locs[id]), load: o.m.OSD(id).Load})
		}
	}
	dest := chooseReader(policy, cands, r.weights, r.rnd)
	if dest == p.t.osd {
		return p.t.osd, p.t.addr
	}
	p.sentTo = dest
	p.msg.ReadAtLeast = r.seen[p.t.pg]
	return dest, o.m.OSD(dest).Addr
}
