package osdmon

import (
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// DefaultRoot is the CRUSH root new clusters have and booting OSDs' hosts
// go under.
const DefaultRoot = "default"

// DefaultRule is the replicated rule new clusters have and new pools use.
const DefaultRule = "replicated_rule"

// InitialMap returns epoch 1 of a new cluster's map: no OSDs, no pools, no
// flags, the given fullness ratios (from mon_osd_nearfull_ratio,
// mon_osd_backfillfull_ratio and mon_osd_full_ratio), and a CRUSH map
// with Ceph's bucket types, an empty root "default" and the rule
// "replicated_rule" (replicas on distinct hosts).
func InitialMap(fsid osdmap.FSID, now time.Time, ratios osdmap.Ratios) (*osdmap.Map, error) {
	spec := crush.Spec{Tunables: crush.DefaultTunables(), Types: crush.DefaultTypes(),
		Buckets: []crush.Bucket{{ID: -1, Name: DefaultRoot, Alg: crush.AlgStraw2, Hash: crush.HashRjenkins1}}}
	var host int32 = -1
	for _, t := range spec.Types {
		switch t.Name {
		case "root":
			spec.Buckets[0].Type = t.ID
		case "host":
			host = t.ID
		}
	}
	for _, r := range crush.DefaultRules(-1, host) {
		if r.Name == DefaultRule {
			spec.Rules = append(spec.Rules, r)
		}
	}
	cm, err := crush.New(spec)
	if err != nil {
		return nil, fmt.Errorf("osdmon: initial crush map: %w", err)
	}
	return osdmap.New(osdmap.Spec{Epoch: 1, FSID: fsid, Created: now, Modified: now, Crush: cm, Ratios: ratios})
}

// Initial returns the proposal that creates the cluster's first map (see
// InitialMap). The driver proposes it once, when the cluster is created;
// it is refused (EAGAIN, then EEXIST when prepared again) if a map exists.
func Initial(fsid osdmap.FSID, now time.Time, ratios osdmap.Ratios) ([]byte, error) {
	m, err := InitialMap(fsid, now, ratios)
	if err != nil {
		return nil, err
	}
	body, err := m.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("osdmon: initial map: %w", err)
	}
	p := proposal{kind: kindCreate, body: body,
		reply: moncmd.Reply{Status: fmt.Sprintf("created osdmap epoch 1 for cluster %s", fsid)}}
	return p.encode(), nil
}

// prepareCreate handles "osdmap create fsid=UUID".
func (s *Service) prepareCreate(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	v, err := c.Str("fsid")
	if err != nil {
		return bad(err)
	}
	fsid, err := ParseFSID(v)
	if err != nil {
		return bad(err)
	}
	if s.m != nil {
		if s.m.FSID() == fsid {
			return nil, moncmd.Reply{Status: fmt.Sprintf("osdmap of cluster %s exists (epoch %d)", fsid, s.m.Epoch())}
		}
		return nil, moncmd.Errorf(moncmd.EEXIST, "osdmap exists for cluster %s", s.m.FSID())
	}
	p, err := Initial(fsid, now, s.optRatios())
	if err != nil {
		return nil, moncmd.FromError(err, moncmd.EINVAL)
	}
	return p, moncmd.Reply{}
}

// optRatios returns the fullness ratios the options give a new map.
func (s *Service) optRatios() osdmap.Ratios {
	return osdmap.Ratios{NearFull: float32(s.opts.Float(OptNearFullRatio)),
		BackfillFull: float32(s.opts.Float(OptBackfillFullRatio)), Full: float32(s.opts.Float(OptFullRatio))}
}
