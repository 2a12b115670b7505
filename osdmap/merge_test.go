package osdmap

import (
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
)

func TestPoolMergeFieldsRoundTrip(t *testing.T) {
	p := replicatedPool(1, 16)
	p.PGPNum = 8
	p.PGNumPending, p.PendingSince = 8, 40
	p.LastMerge = PoolMerge{From: 20, PGs: []MergedPG{
		{Source: 16, SourceVersion: PGVersion{5, 3}, TargetVersion: PGVersion{6, 9}},
		{Source: 19, TargetVersion: PGVersion{2, 1}},
	}}
	if err := p.validate(); err != nil {
		t.Fatal(err)
	}
	data := encodedPool(&p)
	if data[0] != poolVersion || data[1] != 5 {
		t.Fatalf("pool with a merge: version %d compat %d, want %d and 5", data[0], data[1], poolVersion)
	}
	d := encoding.NewDecoder(data)
	got := decodePool(d)
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	if !got.Equal(&p) {
		t.Fatalf("decoded %+v, want %+v", got, p)
	}
	if g, ok := got.MergedVersions(19); !ok || g.TargetVersion != (PGVersion{2, 1}) {
		t.Fatalf("MergedVersions(19) = %+v %v", g, ok)
	}
	if _, ok := got.MergedVersions(17); ok {
		t.Fatal("MergedVersions(17) found a source the merge did not list")
	}
	c := p.Clone()
	c.LastMerge.PGs[0].Source = 17
	if p.LastMerge.PGs[0].Source != 16 || c.Equal(&p) {
		t.Fatal("Clone shares the merged PGs, or Equal ignores them")
	}
}

func TestPoolMergeValidation(t *testing.T) {
	for name, change := range map[string]func(p *Pool){
		"pending at pg_num":     func(p *Pool) { p.PGNumPending = 16 },
		"pending below pgp_num": func(p *Pool) { p.PGNumPending = 4 },
		"merged from below":     func(p *Pool) { p.LastMerge = PoolMerge{From: 16} },
		"PGs without from":      func(p *Pool) { p.LastMerge = PoolMerge{PGs: []MergedPG{{Source: 17}}} },
		"source below pg_num":   func(p *Pool) { p.LastMerge = PoolMerge{From: 20, PGs: []MergedPG{{Source: 3}}} },
		"source beyond from":    func(p *Pool) { p.LastMerge = PoolMerge{From: 20, PGs: []MergedPG{{Source: 20}}} },
		"sources out of order":  func(p *Pool) { p.LastMerge = PoolMerge{From: 20, PGs: []MergedPG{{Source: 18}, {Source: 17}}} },
		"sources listed twice":  func(p *Pool) { p.LastMerge = PoolMerge{From: 20, PGs: []MergedPG{{Source: 18}, {Source: 18}}} },
	} {
		p := replicatedPool(1, 16)
		p.PGPNum = 8
		change(&p)
		if err := p.validate(); err == nil {
			t.Errorf("%s: valid", name)
		}
	}
}

func TestMergeParticipant(t *testing.T) {
	p := replicatedPool(1, 12)
	p.PGPNum = 8
	if p.MergeParticipant(3) || p.MergeParticipant(11) {
		t.Fatal("participants without a merge pending")
	}
	p.PGNumPending = 8 // sources 8..11 merge into 0..3
	for seed := range uint32(12) {
		want := seed < 4 || seed >= 8
		if got := p.MergeParticipant(seed); got != want {
			t.Errorf("seed %d: participant %v, want %v", seed, got, want)
		}
	}
}

func TestParsePGVersion(t *testing.T) {
	if v, err := ParsePGVersion("12'345"); err != nil || v != (PGVersion{12, 345}) {
		t.Fatalf("12'345: %v %v", v, err)
	}
	for _, bad := range []string{"", "12", "12'", "'3", "1'2'3", "a'b", "-1'2", "01'2"} {
		if _, err := ParsePGVersion(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
