package crush

// Hybrid placement (docs/CRUSH.md, "Hybrid rules: SSD primaries"): the
// first copy of every PG — its primary — on a device of one class, the
// others on devices of another, as the SSD-primary rule that Ceph's
// documentation gives:
//
//	step take ROOT class ssd
//	step chooseleaf firstn 1 type host
//	step emit
//	step take ROOT class hdd
//	step chooseleaf firstn -1 type host
//	step emit
//
// The two takes are independent: the second does not know what the first
// chose, so a replica can land in the primary's failure domain (a host
// with both an SSD and HDDs). Ceph's rule has the same caveat; Cuttle's
// CRUSH computes the same mappings. HybridCheck measures it.

// HybridRule returns that rule: take root restricted to primaryClass,
// chooseleaf firstn 1 across domainType, emit; take root restricted to
// replicaClass, chooseleaf firstn -1 (the rest of the pool's size)
// across domainType, emit.
func HybridRule(id int32, name string, root int32, primaryClass, replicaClass string, domainType int32) Rule {
	return Rule{ID: id, Name: name, Type: RuleReplicated, MinSize: 1, MaxSize: 10, Steps: []Step{
		{Op: OpTake, Arg1: root, Class: primaryClass},
		{Op: OpChooseLeafFirstN, Arg1: 1, Arg2: domainType},
		{Op: OpEmit},
		{Op: OpTake, Arg1: root, Class: replicaClass},
		{Op: OpChooseLeafFirstN, Arg1: -1, Arg2: domainType},
		{Op: OpEmit},
	}}
}

// HybridCheck counts, over mapping results, whether the first device
// (the primary) has a class, and whether the other devices avoid the
// primary's failure domain and each other's. Not safe for concurrent
// use.
type HybridCheck struct {
	class   string
	domain  int32
	classes map[int32]string
	parents map[int32]int32 // item -> its (non-shadow) parent bucket
	m       *Map
	Stats   HybridStats
}

// HybridStats are HybridCheck's counts.
type HybridStats struct {
	// Mappings counts the results checked; Empty those with no device.
	Mappings int `json:"mappings"`
	Empty    int `json:"empty"`
	// PrimaryInClass counts results whose first device has the class.
	PrimaryInClass int `json:"primary_in_class"`
	// ReplicaWithPrimary counts results where another device shares the
	// primary's failure domain; ReplicasShareDomain those where two
	// devices other than the primary share one.
	ReplicaWithPrimary  int `json:"replica_in_primary_domain"`
	ReplicasShareDomain int `json:"replicas_share_domain"`
}

// NewHybridCheck returns a check of results of m for primaries of class
// and copies in distinct buckets of type domainType.
func (m *Map) NewHybridCheck(class string, domainType int32) *HybridCheck {
	c := &HybridCheck{class: class, domain: domainType, m: m, classes: map[int32]string{}, parents: map[int32]int32{}}
	for _, d := range m.Devices() {
		c.classes[d.ID] = d.Class
	}
	for _, b := range m.Buckets() {
		if b.IsShadow() {
			continue
		}
		for _, it := range b.Items {
			c.parents[it] = b.ID
		}
	}
	return c
}

// domainOf returns the bucket of the check's type above device d, or 0.
func (c *HybridCheck) domainOf(d int32) int32 {
	for it, seen := d, 0; seen < 64; seen++ {
		p, ok := c.parents[it]
		if !ok {
			return 0
		}
		if b := c.m.Bucket(p); b != nil && b.Type == c.domain {
			return p
		}
		it = p
	}
	return 0
}

// Add checks one result.
func (c *HybridCheck) Add(result []int32) {
	c.Stats.Mappings++
	var devs []int32
	for _, d := range result {
		if d != ItemNone {
			devs = append(devs, d)
		}
	}
	if len(devs) == 0 || result[0] == ItemNone {
		c.Stats.Empty++
		return
	}
	if c.classes[devs[0]] == c.class {
		c.Stats.PrimaryInClass++
	}
	primary := c.domainOf(devs[0])
	withPrimary, shared := false, false
	seen := map[int32]bool{}
	for _, d := range devs[1:] {
		dom := c.domainOf(d)
		if dom != 0 && dom == primary {
			withPrimary = true
		}
		if dom != 0 && seen[dom] {
			shared = true
		}
		seen[dom] = true
	}
	if withPrimary {
		c.Stats.ReplicaWithPrimary++
	}
	if shared {
		c.Stats.ReplicasShareDomain++
	}
}
