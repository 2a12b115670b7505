package osdmap

import (
	"slices"
	"strings"
	"testing"
)

// TestVerifyMappingFindsCorruption damages a correct mapping the way a
// bug in the mapping steps or in the Scratch's reuse would, and checks
// that verifyMapping (which the invariants build runs on every mapping)
// names the damage.
func TestVerifyMappingFindsCorruption(t *testing.T) {
	tests := []struct {
		name    string
		pool    int64
		corrupt func(r *Mapping, down int32)
		want    string
	}{
		{"raw longer than the pool", 1, func(r *Mapping, _ int32) { r.Raw = append(r.Raw, r.Raw[0]) }, "longer"},
		{"raw holds a nonexistent osd", 1, func(r *Mapping, _ int32) { r.Raw[1] = 40 }, "does not exist"},
		{"up holds a down osd", 1, func(r *Mapping, down int32) { r.Up[1] = down }, "not up"},
		{"acting holds a down osd", 2, func(r *Mapping, down int32) { r.Acting[2] = down }, "not up"},
		{"raw primary", 1, func(r *Mapping, _ int32) { r.RawPrimary = r.Raw[1] }, "raw primary"},
		{"up primary outside up", 1, func(r *Mapping, _ int32) { r.UpPrimary = 99 }, "up primary"},
		{"up primary of an empty set", 1, func(r *Mapping, _ int32) { r.Up = r.Up[:0] }, "up primary"},
		{"up primary not first", 1, func(r *Mapping, _ int32) { r.UpPrimary = r.Up[1] }, "not first"},
		{"acting primary missing", 2, func(r *Mapping, _ int32) { r.ActingPrimary = -1 }, "acting primary"},
		{"sets share memory", 1, func(r *Mapping, _ int32) { r.Acting = r.Up }, "share memory"},
	}
	base := smallMap(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pg := PG{Pool: tt.pool, Seed: 3}
			r := mapPG(t, base, pg)
			// An OSD outside the mapping goes down, for the damage to use.
			down := int32(0)
			for slices.Contains(r.Raw, down) {
				down++
			}
			m := change(t, base, func(s *Spec) { s.OSDs[down].State &^= OSDUp })
			p := m.Pool(tt.pool)
			if err := m.verifyMapping(p, &r); err != nil {
				t.Fatalf("before the damage: %v", err)
			}
			tt.corrupt(&r, down)
			if err := m.verifyMapping(p, &r); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("verifyMapping = %v; want an error mentioning %q", err, tt.want)
			}
		})
	}
}
