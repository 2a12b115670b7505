package autoscale

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Defaults of Options, Ceph's.
const (
	// DefaultTargetPGPerOSD is mon_target_pg_per_osd.
	DefaultTargetPGPerOSD = 100
	// DefaultMinPGs is the floor of every pool's ideal (Ceph's
	// PG_NUM_MIN, 32, as osd_pool_default_pg_num is).
	DefaultMinPGs = 32
	// DefaultThreshold is how many times too few or too many PGs a pool
	// may have before the autoscaler acts (the module's threshold).
	DefaultThreshold = 3.0
)

// Options tune the computation. Zero fields take the defaults.
type Options struct {
	// TargetPGPerOSD is the PG copies every OSD of a root should hold
	// when its pools fill it.
	TargetPGPerOSD int
	// MinPGs is the least ideal pg_num of any pool.
	MinPGs uint32
	// MaxPGs caps the ideal pg_num (the monitors' limit per pool); 0
	// means osdmap.MaxPGNum.
	MaxPGs uint32
	// Threshold: a pool is adjusted when its ideal is more than
	// Threshold times its pg_num, or less than pg_num over Threshold.
	// At least 1.
	Threshold float64
}

func (o Options) withDefaults() Options {
	if o.TargetPGPerOSD <= 0 {
		o.TargetPGPerOSD = DefaultTargetPGPerOSD
	}
	if o.MinPGs == 0 {
		o.MinPGs = DefaultMinPGs
	}
	if o.MaxPGs == 0 || o.MaxPGs > osdmap.MaxPGNum {
		o.MaxPGs = osdmap.MaxPGNum
	}
	o.MinPGs = min(o.MinPGs, o.MaxPGs)
	if !(o.Threshold >= 1) { // also NaN
		o.Threshold = DefaultThreshold
	}
	return o
}

// Usage is what the PG statistics report.
type Usage struct {
	// Stored is each pool's stored bytes (one copy: "df"'s STORED).
	Stored map[int64]int64
	// Capacity is each OSD's store size in bytes, as it last reported
	// it; an OSD that has not reported adds nothing to its root.
	Capacity map[int32]uint64
}

// Status is one pool's line of "osd pool autoscale-status", Ceph's
// columns and JSON names.
type Status struct {
	ID   int64  `json:"pool_id"`
	Name string `json:"pool_name"`
	// Root names the CRUSH subtree the pool's rule takes from (several
	// joined by commas); pools that share it share its OSDs.
	Root string `json:"crush_root"`
	// OSDs and Capacity are the root's OSDs and their reported bytes.
	OSDs     int    `json:"osd_count"`
	Capacity uint64 `json:"subtree_capacity"`
	// Stored is the pool's bytes (one copy); TargetBytes its
	// target_size_bytes (0 when target_size_ratio is set, which wins).
	Stored      int64  `json:"logical_used"`
	TargetBytes uint64 `json:"target_bytes"`
	// Rate is the raw bytes per stored byte (the pool's size).
	Rate float64 `json:"raw_used_rate"`
	// Ratio is the share of the root's capacity the pool takes or is
	// expected to (the larger of stored and target bytes, times Rate);
	// TargetRatio its target_size_ratio; EffectiveRatio that ratio
	// relative to the root's other ratios, in the capacity that target
	// bytes leave.
	Ratio          float64 `json:"capacity_ratio"`
	TargetRatio    float64 `json:"target_ratio"`
	EffectiveRatio float64 `json:"effective_target_ratio"`
	Bias           float64 `json:"bias"`
	// PGNum is where the pool's pg_num is headed (pg_num_target).
	PGNum uint32 `json:"pg_num_target"`
	// Raw is the unrounded ideal; Ideal the pg_num the autoscaler wants
	// (a power of two, within the floor and the cap).
	Raw   float64 `json:"pg_num_ideal"`
	Ideal uint32  `json:"pg_num_final"`
	// Adjust says PGNum is more than the threshold away from Ideal.
	Adjust bool                 `json:"would_adjust"`
	Mode   osdmap.AutoscaleMode `json:"-"`
}

// TooFew and TooMany say which way an adjustment goes.
func (s Status) TooFew() bool  { return s.Adjust && s.Ideal > s.PGNum }
func (s Status) TooMany() bool { return s.Adjust && s.Ideal < s.PGNum }

// root is a CRUSH subtree some pools map into.
type root struct {
	name        string
	osds        int
	capacity    uint64
	totalRatio  float64 // sum of its pools' target_size_ratio
	targetBytes float64 // sum of its pools' target_size_bytes times rate
}

// Compute returns the status of every pool of m, in pool order.
func Compute(m *osdmap.Map, u Usage, o Options) []Status {
	o = o.withDefaults()
	pools := m.Pools()
	roots := map[string]*root{}
	keys := make([]string, len(pools))
	for i := range pools {
		p := &pools[i]
		key, r := rootOf(m, p.CrushRule, u.Capacity, roots)
		keys[i] = key
		if p.TargetSizeRatio > 0 {
			r.totalRatio += p.TargetSizeRatio
		} else {
			r.targetBytes += float64(p.TargetSizeBytes) * rate(p)
		}
	}
	out := make([]Status, 0, len(pools))
	for i := range pools {
		out = append(out, status(&pools[i], roots[keys[i]], u.Stored[pools[i].ID], o))
	}
	return out
}

// status computes one pool's line (Ceph's _calc_pool_targets, the
// target-ratio form of Octopus).
func status(p *osdmap.Pool, r *root, stored int64, o Options) Status {
	s := Status{ID: p.ID, Name: p.Name, Root: r.name, OSDs: r.osds, Capacity: r.capacity, Stored: max(stored, 0),
		Rate: rate(p), TargetRatio: p.TargetSizeRatio, Bias: p.Bias(), Mode: p.AutoscaleMode}
	s.PGNum, _ = p.Targets()
	if p.TargetSizeRatio == 0 {
		s.TargetBytes = p.TargetSizeBytes
	}
	if r.capacity > 0 {
		used := max(float64(s.Stored), float64(s.TargetBytes)) * s.Rate
		s.Ratio = used / float64(r.capacity)
	}
	if r.totalRatio > 0 {
		s.EffectiveRatio = p.TargetSizeRatio / r.totalRatio
		if r.capacity > 0 {
			s.EffectiveRatio *= 1 - min(1, r.targetBytes/float64(r.capacity))
		}
	}
	final := max(s.Ratio, s.EffectiveRatio)
	pgTarget := float64(o.TargetPGPerOSD) * float64(r.osds)
	s.Raw = final * pgTarget / float64(max(p.Size, 1)) * s.Bias
	s.Ideal = min(max(nearestPowerOfTwo(s.Raw), o.MinPGs), o.MaxPGs)
	s.Adjust = float64(s.Ideal) > float64(s.PGNum)*o.Threshold || float64(s.Ideal) < float64(s.PGNum)/o.Threshold
	return s
}

// rate is the raw bytes a pool stores per byte of data: its size for a
// replicated pool. Cuttle's maps do not record an erasure pool's k, so
// its rate is taken as its size too (a conservative overestimate).
func rate(p *osdmap.Pool) float64 { return float64(max(p.Size, 1)) }

// rootOf returns the subtree a rule takes from (its take steps' items),
// made on first use: the OSDs under it that exist in m, and their
// capacity. CRUSH weights and reweights do not count: the ideal follows
// the physical space, not how data happens to be spread now (as Ceph).
func rootOf(m *osdmap.Map, rule int32, capacity map[int32]uint64, roots map[string]*root) (string, *root) {
	cm := m.Crush()
	var takes []int32
	if r := cm.Rule(rule); r != nil {
		for _, st := range r.Steps {
			if st.Op == crush.OpTake && !slices.Contains(takes, st.Arg1) {
				takes = append(takes, st.Arg1)
			}
		}
	}
	slices.Sort(takes)
	var key strings.Builder
	for i, t := range takes {
		if i > 0 {
			key.WriteByte(',')
		}
		key.WriteString(strconv.Itoa(int(t)))
	}
	if r, ok := roots[key.String()]; ok {
		return key.String(), r
	}
	r := &root{}
	names := make([]string, 0, len(takes))
	seen := map[int32]bool{}
	var walk func(item int32, depth int)
	walk = func(item int32, depth int) {
		if seen[item] || depth > 64 {
			return
		}
		seen[item] = true
		if item >= 0 {
			if m.Exists(item) {
				r.osds++
				r.capacity += capacity[item]
			}
			return
		}
		if b := cm.Bucket(item); b != nil {
			for _, it := range b.Items {
				walk(it, depth+1)
			}
		}
	}
	for _, t := range takes {
		names = append(names, cm.ItemName(t))
		walk(t, 0)
	}
	r.name = strings.Join(names, ",")
	roots[key.String()] = r
	return key.String(), r
}

// nearestPowerOfTwo rounds x to the nearer of the powers of two around
// it, up on a tie, at least 1 and at most 2^31.
func nearestPowerOfTwo(x float64) uint32 {
	if !(x > 1) { // also NaN
		return 1
	}
	if x >= 1<<31 {
		return 1 << 31
	}
	hi := uint32(1)
	for float64(hi) < x {
		hi <<= 1
	}
	lo := hi >> 1
	if float64(hi)-x > x-float64(lo) {
		return lo
	}
	return hi
}

// Change is a pg_num the autoscaler sets.
type Change struct {
	Pool     int64
	Name     string
	From, To uint32
}

// Changes returns the changes the leader makes: every pool in mode on
// whose pg_num is to adjust, toward its ideal. Shrinking merges PGs;
// with canShrink false (the OSDs cannot merge) a pool with too many PGs
// is left, and Blocked says so.
func Changes(st []Status, canShrink bool) []Change {
	var out []Change
	for _, s := range st {
		if s.Mode != osdmap.AutoscaleOn || !s.Adjust || Blocked(s, canShrink) {
			continue
		}
		out = append(out, Change{Pool: s.ID, Name: s.Name, From: s.PGNum, To: s.Ideal})
	}
	return out
}

// Blocked reports whether a pool in mode on cannot be adjusted: it has
// too many PGs and pg_num cannot shrink.
func Blocked(s Status, canShrink bool) bool { return s.TooMany() && !canShrink }

// Warned reports whether a pool's status is a health warning
// (POOL_TOO_FEW_PGS or POOL_TOO_MANY_PGS): it is to adjust, and in mode
// warn, or in mode on but blocked.
func Warned(s Status, canShrink bool) bool {
	if !s.Adjust {
		return false
	}
	switch s.Mode {
	case osdmap.AutoscaleWarn:
		return true
	case osdmap.AutoscaleOn:
		return Blocked(s, canShrink)
	}
	return false
}
