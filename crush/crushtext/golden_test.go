package crushtext

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

// mapTexts returns every maps/*.txt of the vectors, by base name.
func mapTexts(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for _, name := range crushvectors.MapNames(t) {
		out[name] = crushvectors.ReadFile(t, "maps/"+name+".txt")
	}
	return out
}

// TestDecompileMatchesCrushtool checks that every map crushtool -d printed
// comes back byte for byte: Decompile(Compile(text)) == text.
func TestDecompileMatchesCrushtool(t *testing.T) {
	for name, src := range mapTexts(t) {
		t.Run(name, func(t *testing.T) {
			m, err := Compile(src)
			if err != nil {
				t.Fatal(err)
			}
			if got := Decompile(m); !bytes.Equal(got, src) {
				t.Errorf("decompiled text differs from crushtool's:\n%s", firstDiff(string(got), string(src)))
			}
		})
	}
}

// firstDiff describes the first differing line of two texts.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\ngot  " + strconv.Quote(gl) + "\nwant " + strconv.Quote(wl)
		}
	}
	return "(lengths differ)"
}

// dump is the part of "crushtool --dump" the compiler decides.
type dump struct {
	Devices []struct {
		ID    int32  `json:"id"`
		Name  string `json:"name"`
		Class string `json:"class"`
	} `json:"devices"`
	Buckets []struct {
		ID     int32  `json:"id"`
		Name   string `json:"name"`
		TypeID int32  `json:"type_id"`
		Weight uint32 `json:"weight"`
		Alg    string `json:"alg"`
		Items  []struct {
			ID     int32  `json:"id"`
			Weight uint32 `json:"weight"`
		} `json:"items"`
	} `json:"buckets"`
	Rules []struct {
		ID      int32 `json:"rule_id"`
		Type    uint8 `json:"type"`
		MinSize int32 `json:"min_size"`
		MaxSize int32 `json:"max_size"`
		Steps   []struct {
			Op   string `json:"op"`
			Item *int32 `json:"item"`
		} `json:"steps"`
	} `json:"rules"`
	Tunables   map[string]json.RawMessage `json:"tunables"`
	ChooseArgs map[string][]struct {
		BucketID  int32       `json:"bucket_id"`
		WeightSet [][]float64 `json:"weight_set"`
		IDs       []int32     `json:"ids"`
	} `json:"choose_args"`
}

// TestCompileMatchesCrushtoolDump compares what Compile builds with what
// crushtool -c built, as crushtool --dump shows it: exact 16.16 weights
// (the float32 conversion), bucket and shadow ids, items, rule steps
// (a class take resolved to the shadow id), tunables and choose_args.
func TestCompileMatchesCrushtoolDump(t *testing.T) {
	for name, src := range mapTexts(t) {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(crushvectors.Path(t, "maps/"+name+".json"))
			if err != nil {
				t.Skip(err)
			}
			var d dump
			if err := json.Unmarshal(data, &d); err != nil {
				t.Fatal(err)
			}
			m, err := Compile(src)
			if err != nil {
				t.Fatal(err)
			}
			checkBuckets(t, m, &d)
			checkRules(t, m, &d)
			checkTunables(t, m, &d)
			checkChooseArgs(t, m, &d)
		})
	}
}

func checkBuckets(t *testing.T, m *crush.Map, d *dump) {
	for _, db := range d.Buckets {
		b := m.Bucket(db.ID)
		if b == nil || b.Name != db.Name || b.Type != db.TypeID || b.Alg.String() != db.Alg {
			t.Errorf("bucket %d: got %+v, want %s type %d alg %s", db.ID, b, db.Name, db.TypeID, db.Alg)
			continue
		}
		if b.Weight() != db.Weight || len(b.Items) != len(db.Items) {
			t.Errorf("%s: weight %d with %d items, want %d with %d", b.Name, b.Weight(), len(b.Items), db.Weight, len(db.Items))
			continue
		}
		for i, it := range db.Items {
			if b.Items[i] != it.ID || b.Weights[i] != it.Weight {
				t.Errorf("%s item %d: got %d weight %d, want %d weight %d", b.Name, i, b.Items[i], b.Weights[i], it.ID, it.Weight)
			}
		}
	}
	if got := len(m.Buckets()); got != len(d.Buckets) {
		t.Errorf("%d buckets, crushtool has %d", got, len(d.Buckets))
	}
	for _, dev := range d.Devices {
		if strings.HasPrefix(dev.Name, "device") {
			continue // crushtool's placeholder for an unused id
		}
		if got, ok := m.Device(dev.ID); !ok || got.Name != dev.Name || got.Class != dev.Class {
			t.Errorf("device %d: got %+v, want %s class %q", dev.ID, got, dev.Name, dev.Class)
		}
	}
}

func checkRules(t *testing.T, m *crush.Map, d *dump) {
	for _, dr := range d.Rules {
		r := m.Rule(dr.ID)
		if r == nil || uint8(r.Type) != dr.Type || r.MinSize != dr.MinSize || r.MaxSize != dr.MaxSize || len(r.Steps) != len(dr.Steps) {
			t.Errorf("rule %d: got %+v, want %+v", dr.ID, r, dr)
			continue
		}
		for i, s := range dr.Steps {
			if s.Op == "take" && r.Steps[i].Arg1 != *s.Item {
				t.Errorf("rule %d step %d: take %d, want %d", dr.ID, i, r.Steps[i].Arg1, *s.Item)
			}
		}
	}
}

func checkTunables(t *testing.T, m *crush.Map, d *dump) {
	tun := m.Tunables()
	want := map[string]uint32{
		"choose_local_tries": tun.ChooseLocalTries, "choose_local_fallback_tries": tun.ChooseLocalFallbackTries,
		"choose_total_tries": tun.ChooseTotalTries, "chooseleaf_descend_once": tun.ChooseleafDescendOnce,
		"chooseleaf_vary_r": tun.ChooseleafVaryR, "chooseleaf_stable": tun.ChooseleafStable,
		"straw_calc_version": tun.StrawCalcVersion, "allowed_bucket_algs": tun.AllowedBucketAlgs,
	}
	for name, got := range want {
		var v uint32
		if err := json.Unmarshal(d.Tunables[name], &v); err != nil {
			t.Fatalf("tunable %s: %v", name, err)
		}
		if got != v {
			t.Errorf("tunable %s = %d, crushtool has %d", name, got, v)
		}
	}
}

func checkChooseArgs(t *testing.T, m *crush.Map, d *dump) {
	if len(m.ChooseArgIndexes()) != len(d.ChooseArgs) {
		t.Errorf("%d choose_args, crushtool has %d", len(m.ChooseArgIndexes()), len(d.ChooseArgs))
	}
	for key, dargs := range d.ChooseArgs {
		index, err := parseChooseArgsIndex(key) // crushtool --dump writes the compat set as -1
		if err != nil {
			t.Fatal(err)
		}
		ca := m.ChooseArgs(index)
		if ca == nil || len(ca.Args()) != len(dargs) {
			t.Errorf("choose_args %s: got %v, want %d args", key, ca, len(dargs))
			continue
		}
		for i, a := range ca.Args() {
			da := dargs[i]
			if a.BucketID != da.BucketID || len(a.Weights) != len(da.WeightSet) {
				t.Errorf("choose_args %s arg %d: got %+v, want %+v", key, i, a, da)
				continue
			}
			for p, ws := range da.WeightSet {
				for j, w := range ws {
					if a.Weights[p][j] != uint32(math.Round(w*crush.WeightOne)) {
						t.Errorf("choose_args %s bucket %d weight [%d][%d] = %d, want %v", key, a.BucketID, p, j, a.Weights[p][j], w)
					}
				}
			}
		}
	}
}
