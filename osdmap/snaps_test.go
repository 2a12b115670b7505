package osdmap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
)

func TestSnapIntervalsInsert(t *testing.T) {
	for _, c := range []struct {
		name string
		in   SnapIntervals
		id   uint64
		want string
	}{
		{"into empty", nil, 5, "[5~1]"},
		{"before, apart", SnapIntervals{{7, 2}}, 5, "[5~1,7~2]"},
		{"after, apart", SnapIntervals{{1, 2}}, 5, "[1~2,5~1]"},
		{"extends the previous", SnapIntervals{{1, 2}}, 3, "[1~3]"},
		{"extends the next", SnapIntervals{{4, 2}}, 3, "[3~3]"},
		{"joins two", SnapIntervals{{1, 2}, {4, 3}}, 3, "[1~6]"},
		{"already in", SnapIntervals{{1, 5}}, 3, "[1~5]"},
		{"zero is no snap id", SnapIntervals{{1, 5}}, 0, "[1~5]"},
		{"head is no snap id", nil, MaxSnapID, "[]"},
		{"between three", SnapIntervals{{1, 1}, {5, 1}, {9, 1}}, 6, "[1~1,5~2,9~1]"},
	} {
		in := slices.Clone(c.in)
		got := c.in.Insert(c.id)
		if got.String() != c.want {
			t.Errorf("%s: %s.Insert(%d) = %s, want %s", c.name, c.in, c.id, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("%s: Insert changed its receiver to %s", c.name, c.in)
		}
		if err := got.validate(); err != nil {
			t.Errorf("%s: result %s invalid: %v", c.name, got, err)
		}
	}
}

// TestSnapIntervalsAgainstSet inserts random ids and checks the intervals
// against a plain set: membership, count, and the canonical form.
func TestSnapIntervalsAgainstSet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	for range 50 {
		var s SnapIntervals
		set := map[uint64]bool{}
		for range 60 {
			id := 1 + r.Uint64N(80)
			s = s.Insert(id)
			set[id] = true
			if err := s.validate(); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		for id := range uint64(90) {
			if s.Contains(id) != set[id] {
				t.Fatalf("%s: Contains(%d) = %v, the set says %v", s, id, s.Contains(id), set[id])
			}
		}
		if s.Count() != uint64(len(set)) {
			t.Fatalf("%s: Count %d, set has %d", s, s.Count(), len(set))
		}
	}
}

func TestSnapIntervalsValidate(t *testing.T) {
	for name, s := range map[string]SnapIntervals{
		"empty interval": {{1, 0}},
		"snap id 0":      {{0, 2}},
		"adjacent":       {{1, 2}, {3, 1}},
		"overlapping":    {{1, 3}, {2, 4}},
		"out of order":   {{5, 1}, {1, 1}},
		"past the ids":   {{MaxSnapID - 1, 2}},
		"overflowing":    {{2, 1<<64 - 1}},
	} {
		if err := s.validate(); err == nil {
			t.Errorf("%s: %v accepted", name, []SnapInterval(s))
		}
	}
}

func snapPool() Pool {
	p := replicatedPool(1, 8)
	p.Flags |= PoolSnaps
	p.SnapSeq = 6
	p.Snaps = []PoolSnap{{ID: 1, Name: "a"}, {ID: 3, Name: "b"}, {ID: 6, Name: "c"}}
	p.RemovedSnaps = SnapIntervals{{2, 1}, {4, 2}}
	return p
}

func TestPoolSnapAccessors(t *testing.T) {
	p := snapPool()
	seq, snaps := p.SnapContext()
	if seq != 6 || !slices.Equal(snaps, []uint64{6, 3, 1}) {
		t.Errorf("SnapContext = %d %v, want 6 [6 3 1] (newest first)", seq, snaps)
	}
	if s := p.SnapByName("b"); s == nil || s.ID != 3 {
		t.Errorf("SnapByName(b) = %v", s)
	}
	if p.SnapByName("z") != nil || p.Snap(2) != nil || p.Snap(3).Name != "b" {
		t.Error("Snap or SnapByName finds what is not there, or misses what is")
	}
	if !p.PoolSnapsMode() || p.SelfManagedSnapsMode() {
		t.Error("modes wrong")
	}
	c := p.Clone()
	c.Snaps[0].Name = "changed"
	c.RemovedSnaps[0].Len = 9
	if p.Snaps[0].Name != "a" || p.RemovedSnaps[0].Len != 1 {
		t.Error("Clone shares its lists with the original")
	}
	if p.Equal(&c) {
		t.Error("Equal misses a changed snap")
	}
	c = p.Clone()
	c.Snaps[2].Created = time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))
	d := p.Clone()
	d.Snaps[2].Created = c.Snaps[2].Created.UTC()
	if !c.Equal(&d) || !p.Equal(new(p.Clone())) {
		t.Error("Equal differs on equal pools")
	}
	if p.String() != "pool 1 'repb' replicated size 3 min_size 2 crush_rule 0 object_hash rjenkins pg_num 8 pgp_num 8 last_change 0 flags hashpspool,pool_snaps snap_seq 6"+
		"\n\tsnap 1 'a' 0001-01-01T00:00:00.000000Z\n\tsnap 3 'b' 0001-01-01T00:00:00.000000Z\n\tsnap 6 'c' 0001-01-01T00:00:00.000000Z\n\tremoved_snaps [2~1,4~2]" {
		t.Errorf("String = %q", p.String())
	}
}

func TestPoolSnapsValidate(t *testing.T) {
	if err := new(snapPool()).validate(); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(p *Pool){
		"both modes":         func(p *Pool) { p.Flags |= PoolSelfManagedSnap },
		"snaps without flag": func(p *Pool) { p.Flags &^= PoolSnaps },
		"id beyond seq":      func(p *Pool) { p.SnapSeq = 5 },
		"unsorted":           func(p *Pool) { p.Snaps[0], p.Snaps[1] = p.Snaps[1], p.Snaps[0] },
		"duplicate id":       func(p *Pool) { p.Snaps[1].ID = 1 },
		"id 0":               func(p *Pool) { p.Snaps[0].ID = 0 },
		"duplicate name":     func(p *Pool) { p.Snaps[1].Name = "a" },
		"empty name":         func(p *Pool) { p.Snaps[1].Name = "" },
		"long name":          func(p *Pool) { p.Snaps[1].Name = strings.Repeat("n", MaxNameLen+1) },
		"live and removed":   func(p *Pool) { p.RemovedSnaps = SnapIntervals{{3, 1}} },
		"removed beyond seq": func(p *Pool) { p.RemovedSnaps = SnapIntervals{{7, 1}} },
		"removed invalid":    func(p *Pool) { p.RemovedSnaps = SnapIntervals{{4, 1}, {2, 1}} },
		"seq at head":        func(p *Pool) { p.SnapSeq = MaxSnapID },
		"bad time":           func(p *Pool) { p.Snaps[0].Created = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
	} {
		p := snapPool()
		f(&p)
		if err := p.validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func encodedPool(p *Pool) []byte {
	var e encoding.Encoder
	encodePool(&e, p)
	return e.Data()
}

// Maps stored before pools had snapshots hold version 1 pools: they must
// decode as pools without snapshots; version 2 pools (before pg_num and
// pgp_num targets) decode with no target pending; version 3 pools (before
// the autoscaler's settings) decode in mode warn with no target size and
// the default bias.
func TestPoolVersion1DecodesWithoutSnaps(t *testing.T) {
	p := replicatedPool(1, 8)
	data := encodedPool(&p)
	if data[0] != poolVersion || data[1] != 1 {
		t.Fatalf("pool without snaps: version %d compat %d, want %d and 1", data[0], data[1], poolVersion)
	}
	// Version 7 of a pool reading from primaries ends in a zero byte
	// (the policy); version 6 of a pool in ack all ends in a zero byte (the mode);
	// version 5 of a pool with no merge ends in four zero bytes (no
	// pg_num_pending nor its epoch, no last merge, no merged PGs); version 4 of a pool
	// with the autoscaler's defaults ends in mode warn (0), no target
	// bytes (0) and two zero float64s (18 bytes); version 3 of a pool
	// with pg_num and pgp_num 8 and no target pending ends in the targets
	// (8, 8); version 2 of a pool without snaps ends in three zero bytes:
	// snap_seq, no snaps, no removed snaps.
	autoscaleTail := make([]byte, 18)
	mergeTail := []byte{0, 0, 0, 0}
	ackTail := []byte{0}
	readTail := []byte{0}
	if !bytes.HasSuffix(data, append(append(append(append([]byte{0, 0, 0, 8, 8}, autoscaleTail...), mergeTail...), ackTail...), readTail...)) {
		t.Fatalf("pool encoding % x does not end in empty snap fields, targets 8 8, default autoscale settings, no merge and ack all", data)
	}
	older := func(data []byte, version uint8, drop int) []byte {
		old := bytes.Clone(data[:len(data)-drop])
		old[0] = version
		binary.LittleEndian.PutUint32(old[2:], binary.LittleEndian.Uint32(old[2:])-uint32(drop))
		return old
	}
	v6 := older(data, 6, len(readTail))
	v5 := older(v6, 5, len(ackTail))
	v4 := older(v5, 4, len(mergeTail))
	v3 := older(v4, 3, len(autoscaleTail))
	v2 := older(v3, 2, 2)
	for _, old := range [][]byte{v6, v5, v4, v3, v2, older(v2, 1, 3)} {
		d := encoding.NewDecoder(old)
		got := decodePool(d)
		if err := d.Finish(); err != nil {
			t.Fatal(err)
		}
		if !got.Equal(&p) {
			t.Fatalf("version %d pool decodes as %+v, want %+v", old[0], got, p)
		}
	}
	// Pending targets survive a round trip; a target equal to the current
	// value is stored as none pending.
	p.PGNum = 16
	p.SetTargets(16, 16)
	if p.PGNumTarget != 0 || p.PGPNumTarget != 16 {
		t.Fatalf("SetTargets(16, 16) on pg_num 16 pgp_num 8 stores %d %d, want 0 16", p.PGNumTarget, p.PGPNumTarget)
	}
	d := encoding.NewDecoder(encodedPool(&p))
	if got := decodePool(d); d.Finish() != nil || !got.Equal(&p) {
		t.Fatalf("pool with pgp_num_target decodes as %+v (%v), want %+v", got, d.Err(), p)
	}
	if n, pn := p.Targets(); n != 16 || pn != 16 {
		t.Fatalf("Targets() = %d %d, want 16 16", n, pn)
	}
	// A pool with snaps is not for version 1 decoders.
	sp := snapPool()
	if data := encodedPool(&sp); data[1] != 2 {
		t.Fatalf("pool with snaps has compat %d, want 2", data[1])
	}
}

func TestPoolDecodeRejectsBadSnaps(t *testing.T) {
	for name, f := range map[string]func(p *Pool){
		"unsorted snaps":   func(p *Pool) { p.Snaps[0], p.Snaps[1] = p.Snaps[1], p.Snaps[0] },
		"removed overlaps": func(p *Pool) { p.RemovedSnaps = SnapIntervals{{2, 3}, {3, 1}} },
		"both modes":       func(p *Pool) { p.Flags |= PoolSelfManagedSnap },
	} {
		p := snapPool()
		f(&p)
		d := encoding.NewDecoder(encodedPool(&p))
		decodePool(d)
		if err := d.Finish(); !errors.Is(err, encoding.ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The autoscaler's settings survive a round trip, and the default bias
// is stored as 0 whichever way it was set.
func TestPoolAutoscaleSettingsRoundTrip(t *testing.T) {
	p := replicatedPool(1, 8)
	p.AutoscaleMode, p.TargetSizeBytes, p.TargetSizeRatio = AutoscaleOn, 1<<40, 0.25
	p.SetBias(4)
	d := encoding.NewDecoder(encodedPool(&p))
	if got := decodePool(d); d.Finish() != nil || !got.Equal(&p) {
		t.Fatalf("pool with autoscale settings decodes as %+v (%v), want %+v", got, d.Err(), p)
	}
	if got, want := p.String(), "autoscale_mode on target_size_bytes 1099511627776 target_size_ratio 0.25 pg_autoscale_bias 4"; !strings.HasSuffix(got, want) {
		t.Fatalf("String() = %q, want suffix %q", got, want)
	}
	p.SetBias(1)
	if p.AutoscaleBias != 0 || p.Bias() != 1 {
		t.Fatalf("SetBias(1) stores %v (Bias %v), want 0 (1)", p.AutoscaleBias, p.Bias())
	}
	for name, f := range map[string]func(p *Pool){
		"mode":           func(p *Pool) { p.AutoscaleMode = 3 },
		"negative ratio": func(p *Pool) { p.TargetSizeRatio = -0.5 },
		"NaN ratio":      func(p *Pool) { p.TargetSizeRatio = math.NaN() },
		"infinite ratio": func(p *Pool) { p.TargetSizeRatio = math.Inf(1) },
		"bias too large": func(p *Pool) { p.AutoscaleBias = MaxAutoscaleBias + 1 },
		"negative bias":  func(p *Pool) { p.AutoscaleBias = -1 },
	} {
		q := replicatedPool(1, 8)
		f(&q)
		if err := q.validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
		d := encoding.NewDecoder(encodedPool(&q))
		if decodePool(d); d.Finish() == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	for _, s := range []string{"on", "warn", "off"} {
		if m, err := ParseAutoscaleMode(s); err != nil || m.String() != s {
			t.Errorf("ParseAutoscaleMode(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseAutoscaleMode("auto"); err == nil {
		t.Error("ParseAutoscaleMode(auto) accepted")
	}
}
