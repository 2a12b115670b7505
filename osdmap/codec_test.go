package osdmap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
)

// sampleMaps returns maps exercising every field of the encoding.
func sampleMaps(t testing.TB) []*Map {
	m := smallMap(t)
	full := change(t, m, func(s *Spec) {
		s.FSID = FSID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
		s.Created = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
		s.Modified = time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
		s.Flags = FlagNoOut | FlagNoDown | 1<<30
		s.OSDs[3] = OSD{State: OSDExists | OSDNoOut, Weight: 0x1234, PrimaryAffinity: 0x8000, Addr: "[::1]:6800", UpFrom: 1, UpThru: 2, DownAt: 2}
		s.OSDs[5] = OSD{}
		s.OSDs = append(s.OSDs, OSD{}, OSD{})
		s.PGTemp[PG{Pool: 1, Seed: 3}] = []int32{1, 2, 0}
		s.PGTemp[PG{Pool: 2, Seed: 0}] = []int32{1, 2147483647, 0}
		s.PrimaryTemp[PG{Pool: 1, Seed: 3}] = 2
		s.PGUpmap[PG{Pool: 1, Seed: 4}] = []int32{7, 8, 9}
		s.PGUpmapItems[PG{Pool: 2, Seed: 5}] = []UpmapItem{{From: 1, To: 4}, {From: 2, To: 5}}
		s.OSDs[4].State |= OSDFull
		s.OSDs[6].State |= OSDNearFull | OSDBackfillFull
		s.Ratios = Ratios{NearFull: 0.5, BackfillFull: 0.625, Full: 0.75}
		s.Pools[0].Flags |= PoolNoDelete | PoolFull
		s.Pools[0].LastChange = 2
		s.Pools[0].Flags |= PoolSnaps
		s.Pools[0].SnapSeq = 9
		s.Pools[0].Snaps = []PoolSnap{{ID: 2, Name: "a", Created: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)}, {ID: 7, Name: "b"}}
		s.Pools[0].RemovedSnaps = SnapIntervals{{Start: 1, Len: 1}, {Start: 3, Len: 4}, {Start: 8, Len: 2}}
		s.Pools[1].Flags |= PoolSelfManagedSnap
		s.Pools[1].PGNum *= 2 // a split under way: pgp_num headed for pg_num
		s.Pools[1].SetTargets(s.Pools[1].PGNum, s.Pools[1].PGNum)
		s.Pools[1].SnapSeq = 1 << 40
		s.Pools[1].RemovedSnaps = SnapIntervals{{Start: 5, Len: 1 << 39}}
		s.PoolMax = 7
	})
	r := rand.New(rand.NewPCG(1, 1))
	maps := []*Map{m, full}
	c2 := otherCrush(t)
	for range 20 {
		maps = append(maps, randomNext(t, r, maps[len(maps)-1], c2))
	}
	return maps
}

func TestMapCodecRoundTrip(t *testing.T) {
	for _, m := range sampleMaps(t) {
		data, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalMap(data)
		if err != nil {
			t.Fatalf("epoch %d: %v", m.Epoch(), err)
		}
		requireSameMap(t, got, m)
		again, _ := got.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("epoch %d: re-encoding differs", m.Epoch())
		}
	}
}

func TestIncrementalCodecRoundTrip(t *testing.T) {
	maps := sampleMaps(t)
	incs := []*Incremental{{}, maps[0].NewIncremental()}
	for i := 1; i < len(maps); i++ {
		incs = append(incs, Diff(maps[i-1], maps[i]))
	}
	// One with every optional field and both kinds of removal.
	n, pm, f := int32(20), int64(9), FlagNoUp
	incs = append(incs, &Incremental{Epoch: 9, NewMaxOSD: &n, NewPoolMax: &pm, NewFlags: &f, NewCrush: maps[0].Crush(),
		OldPools: []int64{1, 2}, NewOSDs: map[int32]OSD{19: {State: OSDExists, PrimaryAffinity: 1}},
		NewPGTemp: map[PG][]int32{{Pool: 1}: nil, {Pool: 1, Seed: 1}: {3}}, NewPrimaryTemp: map[PG]int32{{Pool: 1}: -1},
		OldPGUpmap: []PG{{Pool: 3, Seed: 3}}, OldPGUpmapItems: []PG{{Pool: 4}},
		NewNearFullRatio: new(float32(0.5)), NewBackfillFullRatio: new(float32(0.75)), NewFullRatio: new(float32(1)),
	})
	for _, inc := range incs {
		data, err := inc.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalIncremental(data)
		if err != nil {
			t.Fatalf("epoch %d: %v", inc.Epoch, err)
		}
		again, _ := got.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("epoch %d: re-encoding differs", inc.Epoch)
		}
		a, b := *inc, *got
		a.NewCrush, b.NewCrush = nil, nil
		a.Modified, b.Modified = normTime(a.Modified), normTime(b.Modified)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("epoch %d:\n got  %+v\n want %+v", inc.Epoch, b, a)
		}
	}
}

func TestMapDecodeRejectsBadInput(t *testing.T) {
	m := sampleMaps(t)[1]
	good, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(good); n += 1 + n/50 {
		if _, err := UnmarshalMap(good[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
	if _, err := UnmarshalMap(append(bytes.Clone(good), 0)); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatalf("trailing byte: %v", err)
	}
	inc, _ := m.NewIncremental().MarshalBinary()
	if _, err := UnmarshalMap(inc); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatalf("incremental read as a map: %v", err)
	}
	// Invariants are checked on decode: a pool of size 0 is corrupt.
	bad := change(t, m, func(*Spec) {})
	bad.pools[0].Size = 0
	data, _ := bad.MarshalBinary()
	if _, err := UnmarshalMap(data); !errors.Is(err, encoding.ErrCorrupt) || !errors.Is(err, ErrInvalidMap) {
		t.Fatalf("pool of size 0: %v", err)
	}
	bad = change(t, m, func(*Spec) {})
	bad.pgTemp[PG{Pool: 1, Seed: 1000}] = []int32{1}
	data, _ = bad.MarshalBinary()
	if _, err := UnmarshalMap(data); !errors.Is(err, ErrInvalidMap) {
		t.Fatalf("pg_temp beyond pg_num: %v", err)
	}
	s := m.Spec()
	s.Created = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := New(s); !errors.Is(err, ErrInvalidMap) {
		t.Fatalf("New accepted year 10000: %v", err)
	}
	bad = change(t, m, func(*Spec) {})
	bad.created = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	data, _ = bad.MarshalBinary()
	if _, err := UnmarshalMap(data); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatalf("year 10000: %v", err)
	}
}

func TestIncrementalDecodeRejectsBadInput(t *testing.T) {
	for name, inc := range map[string]*Incremental{
		"pool min_size above size": {NewPools: []Pool{{ID: 1, Name: "a", Type: PoolReplicated, Size: 2, MinSize: 3, PGNum: 1, PGPNum: 1}}},
		"pgp_num above pg_num":     {NewPools: []Pool{{ID: 1, Name: "a", Type: PoolReplicated, Size: 2, MinSize: 1, PGNum: 1, PGPNum: 2}}},
		"negative osd id":          {NewOSDs: map[int32]OSD{-1: {}}},
		"upmap too long":           {NewPGUpmap: map[PG][]int32{{}: make([]int32, MaxPoolSize+1)}},
		"empty upmap":              {NewPGUpmap: map[PG][]int32{{}: {}}},
		"huge max_osd":             {NewMaxOSD: new(int32(MaxOSDs + 1))},
		"full_ratio above 1":       {NewFullRatio: new(float32(1.01))},
		"nearfull_ratio 0":         {NewNearFullRatio: new(float32(0))},
	} {
		data, err := inc.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := UnmarshalIncremental(data); !errors.Is(err, encoding.ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzDecodeMap(f *testing.F) {
	samples := sampleMaps(f)[:6]
	// One with the autoscaler's settings on every pool (pool version 4).
	spec := samples[5].Spec()
	for i := range spec.Pools {
		spec.Pools[i].AutoscaleMode, spec.Pools[i].TargetSizeBytes = AutoscaleOn, 1<<40
		spec.Pools[i].TargetSizeRatio, spec.Pools[i].AutoscaleBias = 0.25, 4
	}
	if len(spec.Pools) == 0 {
		f.Fatal("sample map 5 has no pools")
	}
	scaled, err := New(spec)
	if err != nil {
		f.Fatal(err)
	}
	// One with a merge pending and a last merge recorded on every pool
	// (pool version 5).
	spec = samples[5].Spec()
	for i := range spec.Pools {
		p := &spec.Pools[i]
		if p.PGNum < 2 {
			continue
		}
		p.PGPNum = min(p.PGPNum, p.PGNum/2)
		p.SetTargets(p.PGNum/2, p.PGPNum)
		p.PGNumPending, p.PendingSince = p.PGNum/2, 3
		p.LastMerge = PoolMerge{From: p.PGNum + 1, PGs: []MergedPG{{Source: p.PGNum, SourceVersion: PGVersion{2, 5}, TargetVersion: PGVersion{3, 1}}}}
	}
	merging, err := New(spec)
	if err != nil {
		f.Fatal(err)
	}
	// One with every pool in ack primary (pool version 6, compat 6).
	spec = samples[5].Spec()
	for i := range spec.Pools {
		if spec.Pools[i].Type == PoolReplicated {
			spec.Pools[i].Ack = AckPrimary
			spec.Pools[i].ReadPolicy = ReadScore
		}
	}
	for i := range spec.OSDs { // and loads published (osd version 2)
		if spec.OSDs[i].Exists() {
			spec.OSDs[i].Load = Load{Disk: uint8(10 * i % 101), CPU: 50, Memory: 99}
		}
	}
	acking, err := New(spec)
	if err != nil {
		f.Fatal(err)
	}
	for _, m := range append(samples, scaled, merging, acking) {
		data, err := m.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	withBL := change(f, sampleMaps(f)[1], func(s *Spec) {
		s.Blocklist = map[string]time.Time{"10.0.0.1:6800/7": time.Unix(2e9, 0), "10.0.0.2": time.Unix(2e9, 5)}
	})
	if data, err := withBL.MarshalBinary(); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := UnmarshalMap(data)
		if err != nil {
			return
		}
		again, err := m.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded map does not encode: %v", err)
		}
		m2, err := UnmarshalMap(again)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		requireSameMap(t, m2, m)
		var s Scratch
		for _, p := range m.Pools() {
			for ps := range min(p.PGNum, 64) {
				if _, err := m.PGToUpActing(PG{Pool: p.ID, Seed: ps}, &s); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

func FuzzDecodeIncremental(f *testing.F) {
	maps := sampleMaps(f)
	for i := 1; i < 6; i++ {
		data, err := Diff(maps[i-1], maps[i]).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	bl := maps[0].NewIncremental()
	bl.NewBlocklist = map[string]time.Time{"10.0.0.1:6800/7": time.Unix(2e9, 0)}
	bl.OldBlocklist = []string{"10.0.0.3"}
	if data, err := bl.MarshalBinary(); err == nil {
		f.Add(data)
	}
	base := maps[0]
	f.Fuzz(func(t *testing.T, data []byte) {
		inc, err := UnmarshalIncremental(data)
		if err != nil {
			return
		}
		again, err := inc.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded incremental does not encode: %v", err)
		}
		inc2, err := UnmarshalIncremental(again)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if again2, _ := inc2.MarshalBinary(); !bytes.Equal(again, again2) {
			t.Fatal("decode(encode(x)) != x")
		}
		// Applying whatever decodes must not panic either.
		inc.FSID, inc.Epoch = base.FSID(), base.Epoch()+1
		if m, err := base.Apply(inc); err == nil {
			if !m.Equal(m) {
				t.Fatal("applied map is not equal to itself")
			}
		}
	})
}

// asVersion1 rewrites a version 3 map encoding (MarshalBinary form) of a
// map without blocklist as version 1 wrote it: the same body without the
// three ratios and the empty blocklist at its end.
func asVersion1(t *testing.T, data []byte) []byte {
	t.Helper()
	const ratios = 12 + 1
	hdr := len(mapMagic)
	if data[hdr] != 3 || data[hdr+1] != 1 || data[len(data)-1] != 0 {
		t.Fatalf("map envelope is version %d compat %d, want 3 and 1 with an empty blocklist", data[hdr], data[hdr+1])
	}
	v1 := bytes.Clone(data[:len(data)-ratios])
	v1[hdr] = 1
	n := binary.LittleEndian.Uint32(v1[hdr+2:])
	binary.LittleEndian.PutUint32(v1[hdr+2:], n-ratios)
	return v1
}

// A cluster's stored maps were written before the ratios existed: they
// must still load, with the default ratios.
func TestMapVersion1DecodesWithDefaultRatios(t *testing.T) {
	m := sampleMaps(t)[1]
	if m.Ratios() == DefaultRatios() {
		t.Fatal("sample map has the default ratios; the test would prove nothing")
	}
	data, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalMap(asVersion1(t, data))
	if err != nil {
		t.Fatalf("version 1 map: %v", err)
	}
	if got.Ratios() != DefaultRatios() {
		t.Fatalf("version 1 map has ratios %+v, want the defaults %+v", got.Ratios(), DefaultRatios())
	}
	want := change(t, m, func(s *Spec) { s.Epoch--; s.Ratios = DefaultRatios() })
	requireSameMap(t, got, want)
}

func TestMapDecodeRejectsBadRatio(t *testing.T) {
	m := sampleMaps(t)[1]
	for _, r := range []float32{0, -0.5, 1.5, float32(math.NaN())} {
		bad := change(t, m, func(*Spec) {})
		bad.ratios.Full = r
		data, err := bad.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := UnmarshalMap(data); !errors.Is(err, encoding.ErrCorrupt) {
			t.Errorf("full_ratio %v: %v", r, err)
		}
		s := m.Spec()
		s.Ratios.NearFull = r
		if r != 0 { // zero means the default in a Spec
			if _, err := New(s); !errors.Is(err, ErrInvalidMap) {
				t.Errorf("New with nearfull_ratio %v: %v", r, err)
			}
		}
	}
}

// An incremental that changes a ratio must not be applied by a decoder
// that would drop the change: it carries compat 2. One that changes no
// ratio stays readable by version 1 decoders.
func TestIncrementalRatioCompat(t *testing.T) {
	m := smallMap(t)
	inc := m.NewIncremental()
	data, _ := inc.MarshalBinary()
	if got := data[len(incMagic)+1]; got != 1 {
		t.Fatalf("incremental without ratio changes has compat %d, want 1", got)
	}
	inc.NewFullRatio = new(float32(0.5))
	data, _ = inc.MarshalBinary()
	if got := data[len(incMagic)+1]; got != 2 {
		t.Fatalf("incremental changing full_ratio has compat %d, want 2", got)
	}
	dec, err := UnmarshalIncremental(data)
	if err != nil {
		t.Fatal(err)
	}
	next, err := m.Apply(dec)
	if err != nil {
		t.Fatal(err)
	}
	want := Ratios{NearFull: DefaultNearFullRatio, BackfillFull: DefaultBackfillFullRatio, Full: 0.5}
	if next.Ratios() != want {
		t.Fatalf("ratios after apply %+v, want %+v", next.Ratios(), want)
	}
	if d := Diff(m, next); d.NewFullRatio == nil || *d.NewFullRatio != 0.5 || d.NewNearFullRatio != nil {
		t.Fatalf("Diff does not carry the ratio change alone: %+v", d)
	}
}

func TestFullness(t *testing.T) {
	r := DefaultRatios()
	for _, c := range []struct {
		used, total uint64
		want        OSDState
	}{
		{0, 0, 0}, {84, 100, 0}, {85, 100, OSDNearFull}, {89, 100, OSDNearFull},
		{90, 100, OSDBackfillFull}, {95, 100, OSDFull}, {100, 100, OSDFull}, {120, 100, OSDFull},
	} {
		if got := r.Fullness(c.used, c.total); got != c.want {
			t.Errorf("%d of %d: %v, want %v", c.used, c.total, got, c.want)
		}
	}
	if !r.InOrder() || (Ratios{NearFull: 0.9, BackfillFull: 0.8, Full: 0.95}).InOrder() {
		t.Error("InOrder is wrong")
	}
}

func TestPoolFullOSDs(t *testing.T) {
	m := smallMap(t)
	p := m.Pool(1)
	all := m.RuleOSDs(p)
	if len(all) != 12 {
		t.Fatalf("rule of pool 1 places on %v, want the 12 OSDs", all)
	}
	if got := m.PoolFullOSDs(p); len(got) != 0 {
		t.Fatalf("no OSD is full, got %v", got)
	}
	full := change(t, m, func(s *Spec) {
		s.OSDs[3].State |= OSDFull
		s.OSDs[5].State |= OSDBackfillFull
		s.OSDs[7].State |= OSDFull
		s.OSDs[7].Weight = WeightOut // out: holds no data of the pool
	})
	if got := full.PoolFullOSDs(full.Pool(1)); !slices.Equal(got, []int32{3}) {
		t.Fatalf("full OSDs of pool 1: %v, want [3]", got)
	}
	if !full.IsBackfillFull(5) || !full.IsBackfillFull(3) || full.IsBackfillFull(4) || full.IsFull(5) {
		t.Fatal("IsBackfillFull/IsFull are wrong")
	}
	if got := full.FullOSDs(); !slices.Equal(got, []int32{3, 7}) {
		t.Fatalf("FullOSDs %v, want [3 7]", got)
	}
}
