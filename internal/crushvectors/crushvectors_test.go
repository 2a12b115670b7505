package crushvectors

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestCasesLoad(t *testing.T) {
	cases := Cases(t)
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	reweighted, pooled := false, false
	for _, c := range cases {
		if c.ID == "" || c.MapTxt == "" || c.MapJSON == "" || c.Mappings == "" || c.NumRep <= 0 || c.XMax < c.XMin {
			t.Fatalf("incomplete case %+v", c)
		}
		reweighted = reweighted || len(c.Reweights) > 0
		pooled = pooled || c.PoolID != nil
	}
	if !reweighted || !pooled {
		t.Errorf("no case with reweights (%v) or with a pool id (%v)", reweighted, pooled)
	}
}

// TestMappingLines checks a mapping file against its case: one line per x,
// and the recorded checksum of the gunzipped text.
func TestMappingLines(t *testing.T) {
	c := Cases(t)[0]
	lines := MappingLines(t, c)
	if want := int(c.XMax-c.XMin) + 1; len(lines) != want {
		t.Fatalf("%s: %d lines, want %d", c.ID, len(lines), want)
	}
	sum := sha256.Sum256([]byte(MappingText(t, c)))
	if got := hex.EncodeToString(sum[:]); got != c.SHA256Raw {
		t.Errorf("%s: sha256 %s, want %s", c.ID, got, c.SHA256Raw)
	}
}

func TestDirOverride(t *testing.T) {
	dir := Dir(t)
	if os.Getenv(EnvDir) == "" && (!filepath.IsAbs(dir) || filepath.Base(dir) != "crush-vectors") {
		t.Errorf("Dir = %q, want the module's testdata/crush-vectors", dir)
	}
	t.Setenv(EnvDir, dir)
	if got := Path(t, "maps/racks.txt"); got != filepath.Join(dir, "maps", "racks.txt") {
		t.Errorf("Path = %q", got)
	}
	if names := MapNames(t); !slices.Contains(names, "racks") || !slices.IsSorted(names) {
		t.Errorf("MapNames = %v", names)
	}
}

func TestFormatAndWeights(t *testing.T) {
	if got := FormatMapping(1, 7, []int32{3, 2147483647, 0}); got != "CRUSH rule 1 x 7 [3,2147483647,0]" {
		t.Errorf("FormatMapping = %q", got)
	}
	if got := FormatMapping(0, 0, nil); got != "CRUSH rule 0 x 0 []" {
		t.Errorf("FormatMapping = %q", got)
	}
	buckets := [][]int32{{-2, 0, 1}, {3}}
	got := CrushtoolWeights(5, buckets, func(b []int32) []int32 { return b }, []Reweight{{OSD: 1, Weight: 32768}})
	if want := []uint32{0x10000, 32768, 0, 0x10000, 0}; !slices.Equal(got, want) {
		t.Errorf("CrushtoolWeights = %v, want %v", got, want)
	}
}
