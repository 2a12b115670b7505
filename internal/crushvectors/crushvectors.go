// Package crushvectors loads, for tests, the CRUSH compatibility vectors
// that Ceph 16.2.15's crushtool and osdmaptool produced, committed in
// testdata/crush-vectors (see its README.md): it finds the folder, reads
// vectors.json's cases and the gzip'd mapping files, and rebuilds
// crushtool's reweight vector and output lines.
//
// It is imported only by _test.go files (archtest enforces this). It
// imports no other Cuttle package, so package crush's own tests can use it.
// Its functions keep no state and are safe for concurrent use.
package crushvectors

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// EnvDir names the environment variable that, when set, replaces the
// committed folder (an absolute path is safest: a relative one is taken
// from each test's working directory, its package's folder).
const EnvDir = "CUTTLE_CRUSH_VECTORS"

// weightOne is 1.0 in 16.16 fixed point (crush.WeightOne).
const weightOne = 0x10000

// Dir returns the folder of the vectors: $CUTTLE_CRUSH_VECTORS if set, else
// testdata/crush-vectors of the module, found by walking up from the
// working directory to the folder holding go.mod. The vectors are
// committed, so a missing copy is a broken checkout: Dir fails the test
// rather than skipping it.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv(EnvDir)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			tb.Fatalf("crush vectors: %v", err)
		}
		dir = filepath.Join(root, "testdata", "crush-vectors")
	}
	if _, err := os.Stat(filepath.Join(dir, "vectors.json")); err != nil {
		tb.Fatalf("no crush vectors at %s (they are committed in testdata/crush-vectors; %s overrides the folder): %v",
			dir, EnvDir, err)
	}
	return dir
}

// moduleRoot returns the nearest folder at or above the working directory
// that holds go.mod.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above " + wd)
		}
		dir = parent
	}
}

// Path returns the path of rel, a slash-separated path inside the vectors
// folder such as "maps/racks.txt" or a case's MapJSON.
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	return filepath.Join(Dir(tb), filepath.FromSlash(rel))
}

// ReadFile returns the content of rel (as for Path).
func ReadFile(tb testing.TB, rel string) []byte {
	tb.Helper()
	data, err := os.ReadFile(Path(tb, rel))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// MapNames returns the names of the vector maps, those of maps/NAME.txt,
// sorted.
func MapNames(tb testing.TB) []string {
	tb.Helper()
	dir := Dir(tb)
	paths, err := filepath.Glob(filepath.Join(dir, "maps", "*.txt"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no maps in %s: %v", dir, err)
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strings.TrimSuffix(filepath.Base(p), ".txt")
	}
	sort.Strings(names)
	return names
}

// Case is one entry of vectors.json's "cases": crushtool --test
// --show-mappings on one map, rule and num_rep, with optional --weight and
// --pool-id options. Paths are relative to the vectors folder.
type Case struct {
	ID          string     `json:"id"`
	Description string     `json:"description"`
	Map         string     `json:"map"`      // name of the map in vectors.json's "maps"
	MapTxt      string     `json:"map_txt"`  // maps/NAME.txt
	MapBin      string     `json:"map_bin"`  // maps/NAME.bin
	MapJSON     string     `json:"map_json"` // maps/NAME.json, crushtool --dump
	Rule        int32      `json:"rule"`
	RuleName    string     `json:"rule_name"`
	NumRep      int        `json:"num_rep"`
	XMin        int32      `json:"x_min"`
	XMax        int32      `json:"x_max"`
	Reweights   []Reweight `json:"reweights"`
	PoolID      *int64     `json:"pool_id"`    // --pool-id, if given
	Mappings    string     `json:"mappings"`   // mappings/ID.mappings.gz
	SHA256Raw   string     `json:"sha256_raw"` // of the gunzipped mappings
	Stats       Stats      `json:"stats"`
}

// Reweight is one --weight option of a case.
type Reweight struct {
	OSD    int32  `json:"osd"`
	Arg    string `json:"arg"`          // as given to crushtool, e.g. "0.5"
	Weight uint32 `json:"weight_16_16"` // what crushtool made of it
}

// Stats summarises a case's mappings.
type Stats struct {
	ResultSizes     map[string]int `json:"result_sizes"` // result length -> inputs
	ItemNoneEntries int            `json:"item_none_entries"`
	ShortResults    int            `json:"short_results"`
}

// Cases returns every case of vectors.json, in file order.
func Cases(tb testing.TB) []Case {
	tb.Helper()
	var v struct {
		Cases []Case `json:"cases"`
	}
	if err := json.Unmarshal(ReadFile(tb, "vectors.json"), &v); err != nil {
		tb.Fatal(err)
	}
	return v.Cases
}

// MappingLines returns crushtool's output for c: its gunzipped mappings
// file, one line (without newline) per x from XMin to XMax.
func MappingLines(tb testing.TB, c Case) []string {
	tb.Helper()
	f, err := os.Open(Path(tb, c.Mappings))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return lines
}

// MappingText returns MappingLines as crushtool printed them, each line
// ending in a newline.
func MappingText(tb testing.TB, c Case) string {
	tb.Helper()
	var sb strings.Builder
	for _, l := range MappingLines(tb, c) {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// FormatMapping prints one result as crushtool --show-mappings does:
// "CRUSH rule R x X [a,b,c]".
func FormatMapping(rule, x int32, res []int32) string {
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

// CheckMappings compares place's result for every x of c, printed by
// FormatMapping, with crushtool's line. It reports the first five
// differences and how many there were. place returns the devices CRUSH
// chose for x (hashing x with c.PoolID first is place's job).
func CheckMappings(tb testing.TB, c Case, place func(x int32) []int32) {
	tb.Helper()
	want := MappingLines(tb, c)
	bad := 0
	for x := c.XMin; x <= c.XMax; x++ {
		got := FormatMapping(c.Rule, x, place(x))
		idx := int(x - c.XMin)
		if idx < len(want) && got == want[idx] {
			continue
		}
		if bad++; bad <= 5 {
			w := "<missing>"
			if idx < len(want) {
				w = want[idx]
			}
			tb.Errorf("got  %s\nwant %s", got, w)
		}
	}
	if bad > 0 {
		tb.Errorf("%d of %d mappings differ", bad, c.XMax-c.XMin+1)
	}
}

// CrushtoolWeights returns the reweight vector crushtool --test builds
// (README.md, behaviour 6): maxDevices long, 1.0 (0x10000) for every device
// that is an item of one of buckets, 0 for other ids, then reweights' exact
// 16.16 values. items returns a bucket's items (devices are ids >= 0).
func CrushtoolWeights[B any](maxDevices int32, buckets []B, items func(B) []int32, reweights []Reweight) []uint32 {
	w := make([]uint32, maxDevices)
	for _, b := range buckets {
		for _, it := range items(b) {
			if it >= 0 {
				w[it] = weightOne
			}
		}
	}
	for _, rw := range reweights {
		w[rw.OSD] = rw.Weight
	}
	return w
}
