package autoscale

import (
	"fmt"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/osdmap"
)

const gib = 1 << 30

// hostsMap returns a map of n hosts with one OSD each, every OSD up and
// in, and the given pools.
func hostsMap(t *testing.T, n int, pools ...osdmap.Pool) *osdmap.Map {
	t.Helper()
	spec, err := crush.BuildLayout(crush.Layout{Hosts: n, OSDsPerHost: 1})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := crush.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := osdmap.NewSimple(cm, n, pools...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// pool is a replicated pool of size 3 with pg_num and pgp_num pgNum;
// opts change it.
func pool(id int64, pgNum uint32, opts ...func(*osdmap.Pool)) osdmap.Pool {
	p := osdmap.Pool{ID: id, Name: fmt.Sprint("p", id), Type: osdmap.PoolReplicated, Size: 3, MinSize: 2,
		PGNum: pgNum, PGPNum: pgNum, Flags: osdmap.PoolHashPSPool}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func targetBytes(b uint64) func(*osdmap.Pool)  { return func(p *osdmap.Pool) { p.TargetSizeBytes = b } }
func targetRatio(r float64) func(*osdmap.Pool) { return func(p *osdmap.Pool) { p.TargetSizeRatio = r } }
func bias(b float64) func(*osdmap.Pool)        { return func(p *osdmap.Pool) { p.SetBias(b) } }
func size(n int) func(*osdmap.Pool)            { return func(p *osdmap.Pool) { p.Size, p.MinSize = n, 1 } }

// capacities gives each of n OSDs c bytes.
func capacities(n int, c uint64) map[int32]uint64 {
	out := map[int32]uint64{}
	for i := range n {
		out[int32(i)] = c
	}
	return out
}

// The ideal pg_num of pools on 3 OSDs of 1 GiB (root target 300 PG
// copies at 100 per OSD), each line checked against the arithmetic of
// Ceph's pg_autoscaler: ratio x 300 / size x bias, to the nearest power
// of two, at least 32; adjusted when more than 3 times off.
func TestCompute(t *testing.T) {
	type want struct {
		ratio, eff float64
		ideal      uint32
		adjust     bool
	}
	for _, tc := range []struct {
		name   string
		pools  []osdmap.Pool
		stored map[int64]int64
		opts   Options
		want   []want
	}{
		{name: "empty pool at the floor", pools: []osdmap.Pool{pool(1, 32)},
			want: []want{{ideal: 32}}},
		{name: "empty pool of 8: too few (32 > 3x8)", pools: []osdmap.Pool{pool(1, 8)},
			want: []want{{ideal: 32, adjust: true}}},
		{name: "empty pool of 16: within the threshold", pools: []osdmap.Pool{pool(1, 16)},
			want: []want{{ideal: 32}}},
		{name: "empty pool of 128: too many (32 < 128/3)", pools: []osdmap.Pool{pool(1, 128)},
			want: []want{{ideal: 32, adjust: true}}},
		{name: "half the raw space: 50 rounds to 64", pools: []osdmap.Pool{pool(1, 16)}, stored: map[int64]int64{1: gib / 2},
			want: []want{{ratio: 0.5, ideal: 64, adjust: true}}},
		{name: "a quarter: 25 rounds to 32", pools: []osdmap.Pool{pool(1, 16)}, stored: map[int64]int64{1: gib / 4},
			want: []want{{ratio: 0.25, ideal: 32}}},
		{name: "target bytes count as stored", pools: []osdmap.Pool{pool(1, 16, targetBytes(gib/2))},
			want: []want{{ratio: 0.5, ideal: 64, adjust: true}}},
		{name: "stored beyond the target bytes counts", pools: []osdmap.Pool{pool(1, 16, targetBytes(gib/8))}, stored: map[int64]int64{1: gib / 2},
			want: []want{{ratio: 0.5, ideal: 64, adjust: true}}},
		{name: "a lone target ratio takes the whole root", pools: []osdmap.Pool{pool(1, 32, targetRatio(0.1))},
			want: []want{{eff: 1, ideal: 128, adjust: true}}},
		{name: "target ratios are relative", pools: []osdmap.Pool{pool(1, 32, targetRatio(0.3)), pool(2, 32, targetRatio(0.1))},
			want: []want{{eff: 0.75, ideal: 64}, {eff: 0.25, ideal: 32}}},
		{name: "target bytes leave less for ratios", pools: []osdmap.Pool{pool(1, 32, targetRatio(1)), pool(2, 32, targetBytes(gib/4))},
			want: []want{{eff: 0.75, ideal: 64}, {ratio: 0.25, ideal: 32}}},
		{name: "the ratio wins over target bytes", pools: []osdmap.Pool{pool(1, 32, targetRatio(1), targetBytes(gib/4))},
			want: []want{{eff: 1, ideal: 128, adjust: true}}},
		{name: "bias 4", pools: []osdmap.Pool{pool(1, 16, bias(4))}, stored: map[int64]int64{1: gib / 8},
			want: []want{{ratio: 0.125, ideal: 64, adjust: true}}},
		{name: "size 1 pools need more PGs", pools: []osdmap.Pool{pool(1, 32, size(1))}, stored: map[int64]int64{1: gib},
			want: []want{{ratio: 1.0 / 3, ideal: 128, adjust: true}}},
		{name: "more PGs per OSD", pools: []osdmap.Pool{pool(1, 16)}, stored: map[int64]int64{1: gib / 4}, opts: Options{TargetPGPerOSD: 200},
			want: []want{{ratio: 0.25, ideal: 64, adjust: true}}},
		{name: "a lower floor", pools: []osdmap.Pool{pool(1, 32)}, opts: Options{MinPGs: 1},
			want: []want{{ideal: 1, adjust: true}}},
		{name: "a wider threshold", pools: []osdmap.Pool{pool(1, 8)}, opts: Options{Threshold: 4},
			want: []want{{ideal: 32}}},
		{name: "capped", pools: []osdmap.Pool{pool(1, 32, targetRatio(1))}, opts: Options{MaxPGs: 64},
			want: []want{{eff: 1, ideal: 64}}},
		{name: "a pending pg_num_target counts, not pg_num", pools: []osdmap.Pool{pool(1, 8, func(p *osdmap.Pool) { p.SetTargets(16, 8) })},
			want: []want{{ideal: 32}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := hostsMap(t, 3, tc.pools...)
			got := Compute(m, Usage{Stored: tc.stored, Capacity: capacities(3, gib)}, tc.opts)
			if len(got) != len(tc.want) {
				t.Fatalf("%d statuses, want %d", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if !near(g.Ratio, w.ratio) || !near(g.EffectiveRatio, w.eff) || g.Ideal != w.ideal || g.Adjust != w.adjust {
					t.Errorf("pool %s: ratio %.4f effective %.4f ideal %d adjust %v; want %.4f %.4f %d %v",
						g.Name, g.Ratio, g.EffectiveRatio, g.Ideal, g.Adjust, w.ratio, w.eff, w.ideal, w.adjust)
				}
				if g.Root != "default" || g.OSDs != 3 || g.Capacity != 3*gib || g.Rate != float64(tc.pools[i].Size) {
					t.Errorf("pool %s: root %q, %d OSDs, capacity %d, rate %v", g.Name, g.Root, g.OSDs, g.Capacity, g.Rate)
				}
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// OSDs that have not reported their capacity add none: with no capacity
// known, only target ratios count, and the ideal is the floor.
func TestComputeWithoutCapacity(t *testing.T) {
	m := hostsMap(t, 3, pool(1, 32), pool(2, 32, targetRatio(1)))
	got := Compute(m, Usage{Stored: map[int64]int64{1: gib}}, Options{})
	if got[0].Ratio != 0 || got[0].Ideal != 32 || got[0].Adjust {
		t.Errorf("pool without capacity: %+v", got[0])
	}
	if got[1].EffectiveRatio != 1 || got[1].Ideal != 128 {
		t.Errorf("pool with a target ratio: %+v", got[1])
	}
	// More OSDs, more PGs: 12 OSDs hold 1200 copies, 400 pools of size 3.
	m = hostsMap(t, 12, pool(1, 32, targetRatio(1)))
	if got := Compute(m, Usage{}, Options{}); got[0].OSDs != 12 || got[0].Ideal != 512 || !got[0].Adjust {
		t.Errorf("12 OSDs: %+v", got[0])
	}
}

func TestNearestPowerOfTwo(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want uint32
	}{{-1, 1}, {0, 1}, {1, 1}, {1.4, 1}, {1.5, 2}, {3, 4}, {5, 4}, {6, 8}, {90.5, 64}, {97, 128}, {1 << 40, 1 << 31}} {
		if got := nearestPowerOfTwo(tc.x); got != tc.want {
			t.Errorf("nearestPowerOfTwo(%v) = %d, want %d", tc.x, got, tc.want)
		}
	}
}

// What the leader changes and what the monitors warn about, by mode and
// by whether pg_num can shrink.
func TestChangesAndWarnings(t *testing.T) {
	few := Status{ID: 1, Name: "few", PGNum: 8, Ideal: 32, Adjust: true}
	many := Status{ID: 2, Name: "many", PGNum: 128, Ideal: 32, Adjust: true}
	fine := Status{ID: 3, Name: "fine", PGNum: 32, Ideal: 32}
	for _, tc := range []struct {
		mode      osdmap.AutoscaleMode
		canShrink bool
		changes   []string
		warned    []string
	}{
		{osdmap.AutoscaleOn, false, []string{"few 8->32"}, []string{"many"}},
		{osdmap.AutoscaleOn, true, []string{"few 8->32", "many 128->32"}, nil},
		{osdmap.AutoscaleWarn, false, nil, []string{"few", "many"}},
		{osdmap.AutoscaleWarn, true, nil, []string{"few", "many"}},
		{osdmap.AutoscaleOff, false, nil, nil},
	} {
		var st []Status
		for _, s := range []Status{few, many, fine} {
			s.Mode = tc.mode
			st = append(st, s)
		}
		var changes, warned []string
		for _, c := range Changes(st, tc.canShrink) {
			changes = append(changes, fmt.Sprintf("%s %d->%d", c.Name, c.From, c.To))
		}
		for _, s := range st {
			if Warned(s, tc.canShrink) {
				warned = append(warned, s.Name)
			}
		}
		if fmt.Sprint(changes) != fmt.Sprint(tc.changes) || fmt.Sprint(warned) != fmt.Sprint(tc.warned) {
			t.Errorf("mode %s, canShrink %v: changes %v warned %v; want %v %v", tc.mode, tc.canShrink, changes, warned, tc.changes, tc.warned)
		}
	}
	if !few.TooFew() || few.TooMany() || !many.TooMany() || fine.TooFew() || fine.TooMany() {
		t.Error("TooFew/TooMany disagree with the statuses")
	}
}

// Compute runs on every health query: on 1,000 OSDs (100 hosts of 10)
// and 50 pools it must stay cheap.
func BenchmarkCompute(b *testing.B) {
	spec, err := crush.BuildLayout(crush.Layout{Hosts: 100, OSDsPerHost: 10})
	if err != nil {
		b.Fatal(err)
	}
	cm, err := crush.New(spec)
	if err != nil {
		b.Fatal(err)
	}
	var pools []osdmap.Pool
	stored := map[int64]int64{}
	for i := range 50 {
		pools = append(pools, pool(int64(i+1), 256))
		stored[int64(i+1)] = int64(i) << 30
	}
	m, err := osdmap.NewSimple(cm, 1000, pools...)
	if err != nil {
		b.Fatal(err)
	}
	u := Usage{Stored: stored, Capacity: capacities(1000, 4<<40)}
	for b.Loop() {
		if st := Compute(m, u, Options{}); len(st) != 50 || st[0].OSDs != 1000 {
			b.Fatalf("%d statuses, %d OSDs", len(st), st[0].OSDs)
		}
	}
}
