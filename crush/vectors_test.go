package crush

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

// dumpMap is the JSON that "crushtool --dump" prints.
type dumpMap struct {
	Devices []struct {
		ID    int32  `json:"id"`
		Name  string `json:"name"`
		Class string `json:"class"`
	} `json:"devices"`
	Types []struct {
		ID   int32  `json:"type_id"`
		Name string `json:"name"`
	} `json:"types"`
	Buckets []struct {
		ID     int32  `json:"id"`
		Name   string `json:"name"`
		TypeID int32  `json:"type_id"`
		Alg    string `json:"alg"`
		Items  []struct {
			ID     int32  `json:"id"`
			Weight uint32 `json:"weight"`
		} `json:"items"`
		Weight uint32 `json:"weight"`
	} `json:"buckets"`
	Rules []struct {
		ID    int32  `json:"rule_id"`
		Name  string `json:"rule_name"`
		Type  uint8  `json:"type"`
		Steps []struct {
			Op       string `json:"op"`
			Item     int32  `json:"item"`
			ItemName string `json:"item_name"`
			Num      int32  `json:"num"`
			Type     string `json:"type"`
			Opcode   uint8  `json:"opcode"`
			Arg1     int32  `json:"arg1"`
		} `json:"steps"`
	} `json:"rules"`
	Tunables struct {
		ChooseLocalTries         uint32 `json:"choose_local_tries"`
		ChooseLocalFallbackTries uint32 `json:"choose_local_fallback_tries"`
		ChooseTotalTries         uint32 `json:"choose_total_tries"`
		ChooseleafDescendOnce    uint32 `json:"chooseleaf_descend_once"`
		ChooseleafVaryR          uint32 `json:"chooseleaf_vary_r"`
		ChooseleafStable         uint32 `json:"chooseleaf_stable"`
		StrawCalcVersion         uint32 `json:"straw_calc_version"`
		AllowedBucketAlgs        uint32 `json:"allowed_bucket_algs"`
	} `json:"tunables"`
	ChooseArgs map[string][]struct {
		BucketID  int32       `json:"bucket_id"`
		WeightSet [][]float64 `json:"weight_set"`
		IDs       []int32     `json:"ids"`
	} `json:"choose_args"`
}

// specFromDump turns crushtool's dump into a Spec, leaving the shadow
// buckets for New to rebuild and remembering only their ids.
func specFromDump(t *testing.T, path string) (Spec, *dumpMap) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d dumpMap
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Tunables: Tunables(d.Tunables)}
	for _, dev := range d.Devices {
		if !strings.HasPrefix(dev.Name, "device") {
			spec.Devices = append(spec.Devices, Device{ID: dev.ID, Name: dev.Name, Class: dev.Class})
		}
	}
	for _, ty := range d.Types {
		spec.Types = append(spec.Types, BucketType{ID: ty.ID, Name: ty.Name})
	}
	shadowIDs := map[string]map[string]int32{}
	for _, b := range d.Buckets {
		if name, class, ok := strings.Cut(b.Name, "~"); ok {
			if shadowIDs[name] == nil {
				shadowIDs[name] = map[string]int32{}
			}
			shadowIDs[name][class] = b.ID
			continue
		}
		alg, err := ParseAlg(b.Alg)
		if err != nil {
			t.Fatal(err)
		}
		sb := Bucket{ID: b.ID, Name: b.Name, Type: b.TypeID, Alg: alg}
		for _, it := range b.Items {
			sb.Items = append(sb.Items, it.ID)
			sb.Weights = append(sb.Weights, it.Weight)
		}
		spec.Buckets = append(spec.Buckets, sb)
	}
	for i := range spec.Buckets {
		spec.Buckets[i].ClassIDs = shadowIDs[spec.Buckets[i].Name]
	}
	typeID := map[string]int32{}
	for _, ty := range d.Types {
		typeID[ty.Name] = ty.ID
	}
	ops := map[string]Op{"take": OpTake, "emit": OpEmit, "choose_firstn": OpChooseFirstN, "choose_indep": OpChooseIndep,
		"chooseleaf_firstn": OpChooseLeafFirstN, "chooseleaf_indep": OpChooseLeafIndep,
		"set_choose_tries": OpSetChooseTries, "set_chooseleaf_tries": OpSetChooseLeafTries,
		"set_choose_local_tries": OpSetChooseLocalTries, "set_choose_local_fallback_tries": OpSetChooseLocalFallbackTries,
		"set_chooseleaf_vary_r": OpSetChooseLeafVaryR, "set_chooseleaf_stable": OpSetChooseLeafStable}
	for _, r := range d.Rules {
		rule := Rule{ID: r.ID, Name: r.Name, Type: RuleType(r.Type)}
		for _, s := range r.Steps {
			var step Step
			switch {
			case s.Op == "take":
				step = Step{Op: OpTake, Arg1: s.Item}
				if name, class, ok := strings.Cut(s.ItemName, "~"); ok {
					for _, b := range d.Buckets {
						if b.Name == name {
							step = Step{Op: OpTake, Arg1: b.ID, Class: class}
						}
					}
				}
			case s.Op == "" && s.Opcode != 0:
				step = Step{Op: Op(s.Opcode), Arg1: s.Arg1}
			case strings.HasPrefix(s.Op, "set_"):
				step = Step{Op: ops[s.Op], Arg1: s.Num}
			default:
				op, ok := ops[s.Op]
				if !ok {
					t.Fatalf("unknown op %q", s.Op)
				}
				step = Step{Op: op, Arg1: s.Num, Arg2: typeID[s.Type]}
			}
			rule.Steps = append(rule.Steps, step)
		}
		spec.Rules = append(spec.Rules, rule)
	}
	for key, args := range d.ChooseArgs {
		u, err := strconv.ParseUint(key, 10, 64)
		if err != nil {
			i, err2 := strconv.ParseInt(key, 10, 64)
			if err2 != nil {
				t.Fatal(err)
			}
			u = uint64(i)
		}
		if spec.ChooseArgs == nil {
			spec.ChooseArgs = map[int64][]ChooseArg{}
		}
		for _, a := range args {
			ca := ChooseArg{BucketID: a.BucketID, IDs: a.IDs}
			for _, ws := range a.WeightSet {
				var fixed []uint32
				for _, w := range ws {
					fixed = append(fixed, uint32(math.Round(w*WeightOne)))
				}
				ca.Weights = append(ca.Weights, fixed)
			}
			spec.ChooseArgs[int64(u)] = append(spec.ChooseArgs[int64(u)], ca)
		}
	}
	return spec, &d
}

// crushtoolWeights is the reweight vector crushtool --test builds for c.
func crushtoolWeights(m *Map, c crushvectors.Case) []uint32 {
	return crushvectors.CrushtoolWeights(m.MaxDevices(), m.Buckets(), func(b *Bucket) []int32 { return b.Items }, c.Reweights)
}

// TestCephVectorsFromDump replays every crushtool vector on maps rebuilt
// from crushtool's JSON dump, independently of the text compiler.
func TestCephVectorsFromDump(t *testing.T) {
	for _, c := range crushvectors.Cases(t) {
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			spec, _ := specFromDump(t, crushvectors.Path(t, c.MapJSON))
			m, err := New(spec)
			if err != nil {
				t.Fatal(err)
			}
			replayCase(t, m, c)
		})
	}
}

func replayCase(t *testing.T, m *Map, c crushvectors.Case) {
	weights := crushtoolWeights(m, c)
	ws := m.NewWorkspace()
	out := make([]int32, c.NumRep)
	args := m.ChooseArgsFor(0)
	crushvectors.CheckMappings(t, c, func(x int32) []int32 {
		input := x
		if c.PoolID != nil {
			input = int32(Hash2(uint32(x), uint32(*c.PoolID)))
		}
		return out[:m.DoRule(ws, c.Rule, input, out, weights, args)]
	})
}

// TestShadowTreesMatchCeph checks that the shadow buckets New derives are
// the ones crushtool built: same items, weights, algorithm.
func TestShadowTreesMatchCeph(t *testing.T) {
	spec, d := specFromDump(t, crushvectors.Path(t, "maps/classes.json"))
	m, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range d.Buckets {
		b := m.Bucket(db.ID)
		if b == nil || b.Name != db.Name {
			t.Fatalf("bucket %d (%s) missing or misnamed: %+v", db.ID, db.Name, b)
		}
		if b.Weight() != db.Weight {
			t.Errorf("%s: weight %d, want %d", b.Name, b.Weight(), db.Weight)
		}
		if len(b.Items) != len(db.Items) {
			t.Errorf("%s: %d items, want %d", b.Name, len(b.Items), len(db.Items))
			continue
		}
		for i, it := range db.Items {
			if b.Items[i] != it.ID || b.Weights[i] != it.Weight {
				t.Errorf("%s item %d: got %d/%d want %d/%d", b.Name, i, b.Items[i], b.Weights[i], it.ID, it.Weight)
			}
		}
	}
}
