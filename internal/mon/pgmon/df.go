package pgmon

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/osdmap"
)

// "df" and "osd df": the cluster's and each OSD's space, as Ceph's
// "ceph df" and "ceph osd df" show it, from the OSDs' store usage and the
// PGs' statistics the service keeps and the current OSD map.
//
// Which OSDs count: the raw totals, the averages and MAX AVAIL use the
// OSDs that are up and have reported their usage, as "status" and "pg
// stat" do. A down OSD's space cannot take writes until it returns; "osd
// df" still shows its last report, marked down.

// DFStats is the raw usage of a set of OSDs ("stats" and each entry of
// "stats_by_class" in "df"), in bytes. Cuttle's OSDs report one used
// figure, so total_used_bytes and total_used_raw_bytes are equal.
type DFStats struct {
	TotalBytes        uint64  `json:"total_bytes"`
	TotalAvailBytes   uint64  `json:"total_avail_bytes"`
	TotalUsedBytes    uint64  `json:"total_used_bytes"`
	TotalUsedRawBytes uint64  `json:"total_used_raw_bytes"`
	TotalUsedRawRatio float64 `json:"total_used_raw_ratio"` // 0 to 1
	NumOSDs           int     `json:"num_osds"`
}

func (s *DFStats) add(u osdEntry) {
	s.TotalBytes += u.total
	s.TotalAvailBytes += u.avail
	s.TotalUsedBytes += u.used
	s.TotalUsedRawBytes += u.used
	s.NumOSDs++
	if s.TotalBytes > 0 {
		s.TotalUsedRawRatio = float64(s.TotalUsedRawBytes) / float64(s.TotalBytes)
	}
}

// DFPoolStats is one pool's usage in "df".
type DFPoolStats struct {
	// Stored is the bytes of the pool's objects (one copy), Objects
	// their number, as the PGs' primaries last reported them.
	Stored  int64 `json:"stored"`
	Objects int64 `json:"objects"`
	// BytesUsed is the raw space the pool takes: Stored times the
	// pool's size (KBUsed the same in KiB, rounded up).
	KBUsed    int64 `json:"kb_used"`
	BytesUsed int64 `json:"bytes_used"`
	// PercentUsed is, despite its (Ceph's) name, a ratio from 0 to 1:
	// BytesUsed over BytesUsed plus the raw space MAX AVAIL stands for.
	PercentUsed float64 `json:"percent_used"`
	// MaxAvail is how many more bytes (one copy) the pool can store
	// before the first of its OSDs is full (see maxAvail).
	MaxAvail uint64 `json:"max_avail"`
}

// DFPool is one pool in "df".
type DFPool struct {
	Name  string      `json:"name"`
	ID    int64       `json:"id"`
	PGNum uint32      `json:"pg_num"` // not in Ceph's "ceph df" JSON
	Stats DFPoolStats `json:"stats"`
}

// DFView is "df".
type DFView struct {
	Stats        DFStats            `json:"stats"`
	StatsByClass map[string]DFStats `json:"stats_by_class"`
	Pools        []DFPool           `json:"pools"`
}

// counted returns the usage of the OSDs that count in the totals: up in
// m, with a report.
func (s *Service) counted(m *osdmap.Map) map[int32]osdEntry {
	out := map[int32]osdEntry{}
	for id, u := range s.st.osds {
		if m.IsUp(id) {
			out[id] = u
		}
	}
	return out
}

// dfView computes "df" for m.
func (s *Service) dfView(m *osdmap.Map) DFView {
	v := DFView{StatsByClass: map[string]DFStats{}, Pools: []DFPool{}}
	used := s.counted(m)
	cm := m.Crush()
	for _, id := range slices.Sorted(maps.Keys(used)) {
		u := used[id]
		v.Stats.add(u)
		if d, ok := cm.Device(id); ok && d.Class != "" {
			c := v.StatsByClass[d.Class]
			c.add(u)
			v.StatsByClass[d.Class] = c
		}
	}
	byPool := s.poolSums()
	for _, p := range m.Pools() {
		sum := byPool[p.ID]
		copies := int64(max(p.Size, 1))
		st := DFPoolStats{Stored: sum.bytes, Objects: sum.objects, BytesUsed: sum.bytes * copies,
			MaxAvail: maxAvail(m, &p, used)}
		st.KBUsed = (st.BytesUsed + 1023) / 1024
		if raw := float64(st.BytesUsed) + float64(st.MaxAvail)*float64(copies); st.BytesUsed > 0 && raw > 0 {
			st.PercentUsed = float64(st.BytesUsed) / raw
		}
		v.Pools = append(v.Pools, DFPool{Name: p.Name, ID: p.ID, PGNum: p.PGNum, Stats: st})
	}
	return v
}

// maxAvail estimates how many bytes (one copy) pool p can still take, as
// Ceph does: the pool's rule spreads data over its OSDs in proportion to
// their weights (CRUSH weight times reweight), so the pool is full when
// the OSD that fills first is full. For each OSD of the rule that is up
// and has reported, the space it can still take is its available bytes
// less the share of its size above the full ratio; divided by the OSD's
// share of the rule's total weight, that is how much raw data the whole
// rule can take before this OSD fills. The least of these, divided by
// the pool's size (copies), is MAX AVAIL. OSDs up and weighted but not
// yet reported share the weight but give no bound; with no OSD to bound
// it, MAX AVAIL is 0.
func maxAvail(m *osdmap.Map, p *osdmap.Pool, used map[int32]osdEntry) uint64 {
	weights := ruleWeights(m, p.CrushRule)
	var total float64
	for _, w := range weights {
		total += w
	}
	if total <= 0 {
		return 0
	}
	fullRatio := osdmap.Ratio64(m.Ratios().Full)
	least := math.Inf(1)
	for id, w := range weights {
		u, ok := used[id]
		if !ok || u.total == 0 || w <= 0 {
			continue
		}
		// Writes stop at the map's full ratio: the rest of every OSD is
		// out of reach.
		usable := max(float64(u.avail)-float64(u.total)*(1-fullRatio), 0)
		least = min(least, usable/(w/total))
	}
	if math.IsInf(least, 1) {
		return 0
	}
	return uint64(least / float64(max(p.Size, 1)))
}

// ruleWeights returns the OSDs rule id can place data on and are up, each
// with its CRUSH weight times its reweight (zero-weight OSDs left out):
// the devices under the rule's take steps (the class's shadow tree for a
// take restricted to a device class).
func ruleWeights(m *osdmap.Map, id int32) map[int32]float64 {
	cm := m.Crush()
	r := cm.Rule(id)
	out := map[int32]float64{}
	if r == nil {
		return out
	}
	crushWeights := deviceWeights(cm)
	var walk func(item int32, weight uint32)
	walk = func(item int32, weight uint32) {
		if item >= 0 {
			if w := toFloat(weight) * toFloat(m.OSD(item).Weight); m.IsUp(item) && w > 0 {
				out[item] = w
			}
			return
		}
		b := cm.Bucket(item)
		if b == nil {
			return
		}
		for i, it := range b.Items {
			walk(it, b.Weights[i])
		}
	}
	for _, st := range r.Steps {
		if st.Op == crush.OpTake {
			walk(st.Arg1, crushWeights[st.Arg1])
		}
	}
	return out
}

// deviceWeights returns each device's CRUSH weight: its weight in its
// parent bucket (shadow trees aside).
func deviceWeights(cm *crush.Map) map[int32]uint32 {
	out := map[int32]uint32{}
	for _, b := range cm.Buckets() {
		if b == nil || b.IsShadow() {
			continue
		}
		for i, it := range b.Items {
			if it >= 0 {
				out[it] = b.Weights[i]
			}
		}
	}
	return out
}

// toFloat converts a 16.16 fixed-point weight.
func toFloat(w uint32) float64 { return float64(w) / crush.WeightOne }

// OSDDFNode is one OSD in "osd df", in Ceph's fields: sizes in KiB,
// utilization in percent, var its utilization over the average.
type OSDDFNode struct {
	ID          int32   `json:"id"`
	DeviceClass string  `json:"device_class"`
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	TypeID      int32   `json:"type_id"`
	CrushWeight float64 `json:"crush_weight"`
	Reweight    float64 `json:"reweight"`
	KB          uint64  `json:"kb"`
	KBUsed      uint64  `json:"kb_used"`
	KBAvail     uint64  `json:"kb_avail"`
	Utilization float64 `json:"utilization"`
	Var         float64 `json:"var"`
	// PGs counts the PGs whose acting set in the current map holds the
	// OSD (PG copies on it).
	PGs    int    `json:"pgs"`
	Status string `json:"status"` // up, down
	// Reported is false for an OSD that has not reported its usage yet
	// (its sizes are 0). Not in Ceph's JSON.
	Reported bool `json:"reported"`

	total, used, avail uint64 // bytes, for the text
}

// OSDDFSummary is the totals of "osd df" over the OSDs that count (up,
// reported): sizes in KiB, the average utilization in percent, the
// least and greatest var, and dev, the standard deviation of the
// utilization (in percentage points) around the average.
type OSDDFSummary struct {
	TotalKB            uint64  `json:"total_kb"`
	TotalKBUsed        uint64  `json:"total_kb_used"`
	TotalKBAvail       uint64  `json:"total_kb_avail"`
	AverageUtilization float64 `json:"average_utilization"`
	MinVar             float64 `json:"min_var"`
	MaxVar             float64 `json:"max_var"`
	Dev                float64 `json:"dev"`

	total, used, avail uint64 // bytes, for the text
}

// OSDDFView is "osd df": every OSD of the map in id order. Stray is
// always empty (Ceph's tree form puts OSDs outside the hierarchy
// there).
type OSDDFView struct {
	Nodes   []OSDDFNode  `json:"nodes"`
	Stray   []OSDDFNode  `json:"stray"`
	Summary OSDDFSummary `json:"summary"`
}

// osdDFView computes "osd df" for m.
func (s *Service) osdDFView(m *osdmap.Map) OSDDFView {
	v := OSDDFView{Nodes: []OSDDFNode{}, Stray: []OSDDFNode{}}
	cm := m.Crush()
	weights := deviceWeights(cm)
	pgs := pgCopies(m)
	used := s.counted(m)
	sum := &v.Summary
	for id := range m.MaxOSD() {
		if !m.Exists(id) {
			continue
		}
		d, _ := cm.Device(id)
		u, reported := s.st.osds[id]
		n := OSDDFNode{ID: id, DeviceClass: d.Class, Name: osdName(id), Type: cmp.Or(cm.TypeName(0), "osd"),
			CrushWeight: toFloat(weights[id]), Reweight: toFloat(m.OSD(id).Weight),
			KB: u.total >> 10, KBUsed: u.used >> 10, KBAvail: u.avail >> 10, PGs: pgs[id], Status: "down",
			Reported: reported, total: u.total, used: u.used, avail: u.avail}
		if m.IsUp(id) {
			n.Status = "up"
		}
		if u.total > 0 {
			n.Utilization = 100 * float64(u.used) / float64(u.total)
		}
		if _, ok := used[id]; ok {
			sum.total += u.total
			sum.used += u.used
			sum.avail += u.avail
		}
		v.Nodes = append(v.Nodes, n)
	}
	sum.TotalKB, sum.TotalKBUsed, sum.TotalKBAvail = sum.total>>10, sum.used>>10, sum.avail>>10
	if sum.total == 0 {
		return v
	}
	sum.AverageUtilization = 100 * float64(sum.used) / float64(sum.total)
	var sq float64
	n := 0
	for i := range v.Nodes {
		nd := &v.Nodes[i]
		if nd.total == 0 {
			continue
		}
		if sum.AverageUtilization > 0 {
			nd.Var = nd.Utilization / sum.AverageUtilization
		}
		if _, ok := used[nd.ID]; !ok {
			continue // shown, but not in the spread
		}
		if n == 0 || nd.Var < sum.MinVar {
			sum.MinVar = nd.Var
		}
		if n == 0 || nd.Var > sum.MaxVar {
			sum.MaxVar = nd.Var
		}
		d := nd.Utilization - sum.AverageUtilization
		sq += d * d
		n++
	}
	if n > 0 {
		sum.Dev = math.Sqrt(sq / float64(n))
	}
	return v
}

// pgCopies counts, per OSD, the PGs whose acting set in m holds it.
func pgCopies(m *osdmap.Map) map[int32]int {
	out := map[int32]int{}
	var sc osdmap.Scratch
	for _, p := range m.Pools() {
		for seed := range p.PGNum {
			mp, err := m.PGToUpActing(osdmap.PG{Pool: p.ID, Seed: seed}, &sc)
			if err != nil {
				continue
			}
			for _, o := range mp.Acting {
				if o >= 0 && o != crush.ItemNone {
					out[o]++
				}
			}
		}
	}
	return out
}

func osdName(id int32) string { return "osd." + strconv.Itoa(int(id)) }
