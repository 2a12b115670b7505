package osdmap

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/crush/crushtext"
	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

// The vectors were produced by Ceph 16.2.15's osdmaptool on the "racks"
// CRUSH map (testdata/crush-vectors/README.md, "From object name to CRUSH
// input"). The maps, per osdmap/*.print.txt: max_osd 36, one pool
// 1 'rbd' replicated size 3 min_size 2 crush_rule 0 hashpspool with
// pg_num 2304 and pgp_num 2304 (om_racks) or 1152 (om_racks_pgp), every
// OSD marked up and in by --mark-up-in.

func racksCrush(t testing.TB) *crush.Map {
	t.Helper()
	c, err := crushtext.Compile(crushvectors.ReadFile(t, "maps/racks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// racksMap builds the map osdmaptool tested: pool 1 'rbd' with the given
// pgp_num, every OSD up and in.
func racksMap(t testing.TB, pgpNum uint32) *Map {
	t.Helper()
	pool := Pool{ID: 1, Name: "rbd", Type: PoolReplicated, Size: 3, MinSize: 2, CrushRule: 0,
		PGNum: 2304, PGPNum: pgpNum, Flags: PoolHashPSPool}
	m, err := NewSimple(racksCrush(t), 36, pool)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// compareLines reports the first differing lines of got and want.
func compareLines(t *testing.T, got, want string) {
	t.Helper()
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	bad := 0
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			if bad++; bad <= 5 {
				t.Errorf("line %d:\n got  %q\n want %q", i+1, gl, wl)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d lines differ", bad)
	}
}

func dumpText(t *testing.T, m *Map, header string) string {
	t.Helper()
	d, err := m.DumpPGs(1)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString(header)
	if err := d.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// TestOsdmaptoolPGDumps replays the three --test-map-pgs-dump-all outputs
// in full: every PG's raw, up and acting sets and primaries, and the
// per-OSD summary.
func TestOsdmaptoolPGDumps(t *testing.T) {
	const upIn = "marking all OSDs up and in\n"
	markOut5 := func(t *testing.T, m *Map) *Map {
		inc := m.NewIncremental()
		if err := inc.MarkOut(m, 5); err != nil {
			t.Fatal(err)
		}
		m2, err := m.Apply(inc)
		if err != nil {
			t.Fatal(err)
		}
		return m2
	}
	cases := []struct {
		file   string
		pgp    uint32
		header string
		change func(*testing.T, *Map) *Map
	}{
		{"om_racks.pool1.test-map-pgs-dump-all.txt", 2304, upIn, nil},
		{"om_racks.pool1.markout5.test-map-pgs-dump-all.txt", 2304, upIn + "marking OSD@5 as out\n", markOut5},
		{"om_racks_pgp.pool1.test-map-pgs-dump-all.txt", 1152, upIn, nil},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m := racksMap(t, c.pgp)
			if c.change != nil {
				m = c.change(t, m)
			}
			compareLines(t, dumpText(t, m, c.header), string(crushvectors.ReadFile(t, "osdmap/"+c.file)))
		})
	}
}

// TestOsdmaptoolObjects replays osdmaptool --test-map-object: object name
// -> PG -> acting set.
func TestOsdmaptoolObjects(t *testing.T) {
	m := racksMap(t, 2304)
	sc := bufio.NewScanner(strings.NewReader(string(crushvectors.ReadFile(t, "osdmap/objects.om_racks.tsv"))))
	sc.Scan() // header
	var s Scratch
	n := 0
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			t.Fatalf("bad line %q", sc.Text())
		}
		pg, err := m.ObjectToPG(1, f[0], "", "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := m.PGToUpActing(pg, &s)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf(" object '%s' -> %s -> %s", f[0], pg, FormatOSDs(r.Acting))
		if got != f[2] {
			t.Errorf("got  %q\nwant %q", got, f[2])
		}
		n++
	}
	if n < 30 {
		t.Fatalf("only %d objects", n)
	}
}

// TestPGToPPSVectors replays pg_pps.json: each PG's placement seed and raw
// CRUSH result, with pgp_num equal to and half of pg_num.
func TestPGToPPSVectors(t *testing.T) {
	var v struct {
		Vectors []struct {
			PGID string `json:"pgid"`
			PS   uint32 `json:"ps"`
			Full struct {
				PPS uint32  `json:"pps"`
				Raw []int32 `json:"raw"`
			} `json:"om_racks"`
			PGP struct {
				InputPS uint32  `json:"pps_input_ps"`
				PPS     uint32  `json:"pps"`
				Raw     []int32 `json:"raw"`
			} `json:"om_racks_pgp"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(crushvectors.ReadFile(t, "osdmap/pg_pps.json"), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	full, half := racksMap(t, 2304), racksMap(t, 1152)
	var s Scratch
	for _, c := range v.Vectors {
		pg, err := ParsePG(c.PGID)
		if err != nil || pg != (PG{Pool: 1, Seed: c.PS}) {
			t.Fatalf("ParsePG(%q) = %v, %v", c.PGID, pg, err)
		}
		for _, m := range []struct {
			m   *Map
			pps uint32
			raw []int32
		}{{full, c.Full.PPS, c.Full.Raw}, {half, c.PGP.PPS, c.PGP.Raw}} {
			raw, _, pps, err := m.m.PGToRawOSDs(pg, &s)
			if err != nil {
				t.Fatal(err)
			}
			if pps != m.pps || FormatOSDs(raw) != FormatOSDs(m.raw) {
				t.Errorf("%s pgp_num %d: pps %d raw %v, want %d %v", pg, m.m.Pool(1).PGPNum, pps, raw, m.pps, m.raw)
			}
		}
		p := half.Pool(1)
		if got := StableMod(pg.Seed, p.PGPNum, p.PGPNumMask()); got != c.PGP.InputPS {
			t.Errorf("%s: pps input %d, want %d", pg, got, c.PGP.InputPS)
		}
	}
}

// TestStableModVectors replays ceph_stable_mod from hash_vectors.json.
func TestStableModVectors(t *testing.T) {
	var v struct {
		StableMod struct {
			Vectors [][4]uint32 `json:"vectors"`
		} `json:"ceph_stable_mod"`
	}
	if err := json.Unmarshal(crushvectors.ReadFile(t, "hash_vectors.json"), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.StableMod.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, c := range v.StableMod.Vectors {
		x, b, mask, want := c[0], c[1], c[2], c[3]
		if PGMask(b) != mask {
			t.Errorf("PGMask(%d) = %d, want %d", b, PGMask(b), mask)
		}
		if got := StableMod(x, b, mask); got != want {
			t.Errorf("StableMod(%d, %d, %d) = %d, want %d", x, b, mask, got, want)
		}
	}
}
