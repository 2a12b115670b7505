package crush

import (
	"errors"
	"fmt"
)

// Layout describes a regular cluster: a root "default" holding racks (or
// hosts directly), hosts holding OSDs. The launcher and tests build maps
// from it.
type Layout struct {
	Racks         int    // racks under the root; 0 puts hosts directly under it
	Hosts         int    // hosts per rack, or in all when Racks is 0
	OSDsPerHost   int    // devices per host
	OSDWeight     uint32 // 16.16 weight of each device; 0 means 1.0
	DeviceClass   string // class of every device; empty for none
	Alg           Alg    // algorithm of every bucket; 0 means straw2
	Tunables      *Tunables
	FailureDomain string // type the default rules separate replicas by; "" means "host"
}

// maxLayoutDevices bounds Layout so a typo cannot ask for a billion OSDs.
const maxLayoutDevices = 1 << 20

// BuildLayout returns the Spec of a regular cluster with Ceph's default
// bucket types and two rules: "replicated_rule" (id 0, chooseleaf firstn
// across the failure domain) and "erasure_rule" (id 1, chooseleaf indep with
// the tries Ceph's erasure-code profiles use). Devices are numbered in host
// order; bucket ids are -1 for the root, then each rack's hosts followed by
// the rack.
func BuildLayout(l Layout) (Spec, error) {
	if l.Hosts <= 0 || l.OSDsPerHost <= 0 || l.Racks < 0 {
		return Spec{}, errors.New("crush: layout needs at least one host and one OSD per host")
	}
	racks := max(l.Racks, 1)
	if racks*l.Hosts*l.OSDsPerHost > maxLayoutDevices {
		return Spec{}, fmt.Errorf("crush: layout of %d devices exceeds %d", racks*l.Hosts*l.OSDsPerHost, maxLayoutDevices)
	}
	weight := l.OSDWeight
	if weight == 0 {
		weight = WeightOne
	}
	if uint64(weight)*uint64(racks*l.Hosts*l.OSDsPerHost) > 0xffffffff {
		return Spec{}, errors.New("crush: layout's total weight overflows 16.16 fixed point")
	}
	alg := l.Alg
	if alg == 0 {
		alg = AlgStraw2
	}
	spec := Spec{Tunables: DefaultTunables(), Types: DefaultTypes()}
	if l.Tunables != nil {
		spec.Tunables = *l.Tunables
	}
	domain := l.FailureDomain
	if domain == "" {
		domain = "host"
	}
	domainType := int32(-1)
	for _, t := range spec.Types {
		if t.Name == domain {
			domainType = t.ID
		}
	}
	switch {
	case domainType < 0:
		return Spec{}, fmt.Errorf("crush: unknown failure domain %q", domain)
	case domain != "osd" && domain != "host" && (domain != "rack" || l.Racks == 0):
		// Rules across a level the layout does not build would map nothing.
		return Spec{}, fmt.Errorf("crush: failure domain %q is not a level of this layout (osd, host, or rack with racks)", domain)
	}
	const hostType, rackType, rootType = 1, 3, 11
	nextID := int32(-2)
	osd := int32(0)
	root := Bucket{ID: -1, Name: "default", Type: rootType, Alg: alg}
	for r := range racks {
		rack := Bucket{Name: fmt.Sprintf("rack%d", r), Type: rackType, Alg: alg}
		for h := range l.Hosts {
			host := Bucket{ID: nextID, Name: fmt.Sprintf("host%d", h), Type: hostType, Alg: alg}
			if l.Racks > 0 {
				host.Name = fmt.Sprintf("rack%d-host%d", r, h)
			}
			nextID--
			for range l.OSDsPerHost {
				spec.Devices = append(spec.Devices, Device{ID: osd, Name: fmt.Sprintf("osd.%d", osd), Class: l.DeviceClass})
				host.Items = append(host.Items, osd)
				host.Weights = append(host.Weights, weight)
				osd++
			}
			spec.Buckets = append(spec.Buckets, host)
			rack.Items = append(rack.Items, host.ID)
			rack.Weights = append(rack.Weights, weight*uint32(l.OSDsPerHost))
		}
		if l.Racks == 0 {
			root.Items, root.Weights = rack.Items, rack.Weights
			break
		}
		rack.ID = nextID
		nextID--
		spec.Buckets = append(spec.Buckets, rack)
		root.Items = append(root.Items, rack.ID)
		root.Weights = append(root.Weights, weight*uint32(l.OSDsPerHost*l.Hosts))
	}
	spec.Buckets = append(spec.Buckets, root)
	spec.Rules = DefaultRules(root.ID, domainType)
	return spec, nil
}

// DefaultRules returns "replicated_rule" (id 0) and "erasure_rule" (id 1),
// both taking root and separating replicas across buckets of domainType,
// as Ceph creates them.
func DefaultRules(root, domainType int32) []Rule {
	return []Rule{
		{ID: 0, Name: "replicated_rule", Type: RuleReplicated, MinSize: 1, MaxSize: 10, Steps: []Step{
			{Op: OpTake, Arg1: root},
			{Op: OpChooseLeafFirstN, Arg1: 0, Arg2: domainType},
			{Op: OpEmit},
		}},
		{ID: 1, Name: "erasure_rule", Type: RuleErasure, MinSize: 3, MaxSize: 20, Steps: []Step{
			{Op: OpSetChooseLeafTries, Arg1: 5},
			{Op: OpSetChooseTries, Arg1: 100},
			{Op: OpTake, Arg1: root},
			{Op: OpChooseLeafIndep, Arg1: 0, Arg2: domainType},
			{Op: OpEmit},
		}},
	}
}
