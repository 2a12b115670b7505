package crushtext

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
)

// vectorsDir holds maps and mappings produced by Ceph 16.2.15's crushtool
// (see its README.md). CUTTLE_CRUSH_VECTORS overrides it, as in package
// crush.
func vectorsDir(t testing.TB) string {
	dir := os.Getenv("CUTTLE_CRUSH_VECTORS")
	if dir == "" {
		dir = "../../testdata/crush-vectors"
	}
	if _, err := os.Stat(filepath.Join(dir, "vectors.json")); err != nil {
		t.Skipf("no crush vectors at %s (set CUTTLE_CRUSH_VECTORS): %v", dir, err)
	}
	return dir
}

// vectorCase is one entry of vectors.json's "cases".
type vectorCase struct {
	ID        string `json:"id"`
	MapTxt    string `json:"map_txt"`
	Rule      int32  `json:"rule"`
	NumRep    int    `json:"num_rep"`
	XMin      int32  `json:"x_min"`
	XMax      int32  `json:"x_max"`
	PoolID    *int64 `json:"pool_id"`
	Mappings  string `json:"mappings"`
	Reweights []struct {
		OSD    int32  `json:"osd"`
		Weight uint32 `json:"weight_16_16"`
	} `json:"reweights"`
}

func loadCases(t testing.TB, dir string) []vectorCase {
	data, err := os.ReadFile(filepath.Join(dir, "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Cases []vectorCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v.Cases
}

// readGzipLines returns the lines of a gzip'd text file.
func readGzipLines(t testing.TB, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestCephVectorsFromText compiles each case's map from its text form and
// replays crushtool --test --show-mappings exactly.
func TestCephVectorsFromText(t *testing.T) {
	dir := vectorsDir(t)
	compiled := map[string]*crush.Map{}
	for _, c := range loadCases(t, dir) {
		m := compiled[c.MapTxt]
		if m == nil {
			src, err := os.ReadFile(filepath.Join(dir, c.MapTxt))
			if err != nil {
				t.Fatal(err)
			}
			if m, err = Compile(src); err != nil {
				t.Fatalf("%s: %v", c.MapTxt, err)
			}
			compiled[c.MapTxt] = m
		}
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			replay(t, m, c, readGzipLines(t, filepath.Join(dir, c.Mappings)))
		})
	}
}

// replay maps x in [XMin, XMax] as crushtool --test does: reweight vector
// 1.0 for every device in some bucket (0 for other ids) plus the case's
// --weight options, x hashed with --pool-id when given, choose_args index 0
// falling back to the compat set.
func replay(t *testing.T, m *crush.Map, c vectorCase, want []string) {
	weights := make([]uint32, m.MaxDevices())
	for _, b := range m.Buckets() {
		for _, it := range b.Items {
			if it >= 0 {
				weights[it] = crush.WeightOne
			}
		}
	}
	for _, rw := range c.Reweights {
		weights[rw.OSD] = rw.Weight
	}
	ws := m.NewWorkspace()
	out := make([]int32, c.NumRep)
	args := m.ChooseArgsFor(0)
	bad := 0
	for x := c.XMin; x <= c.XMax; x++ {
		input := x
		if c.PoolID != nil {
			input = int32(crush.Hash2(uint32(x), uint32(*c.PoolID)))
		}
		n := m.DoRule(ws, c.Rule, input, out, weights, args)
		got := formatMapping(c.Rule, x, out[:n])
		idx := int(x - c.XMin)
		if idx < len(want) && got == want[idx] {
			continue
		}
		if bad++; bad <= 5 {
			w := "<missing>"
			if idx < len(want) {
				w = want[idx]
			}
			t.Errorf("got  %s\nwant %s", got, w)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d mappings differ", bad, c.XMax-c.XMin+1)
	}
}

// formatMapping prints one result as crushtool --show-mappings does.
func formatMapping(rule, x int32, res []int32) string {
	var sb strings.Builder
	sb.WriteString("CRUSH rule " + strconv.Itoa(int(rule)) + " x " + strconv.Itoa(int(x)) + " [")
	for i, v := range res {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(int(v)))
	}
	sb.WriteByte(']')
	return sb.String()
}
