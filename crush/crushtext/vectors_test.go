package crushtext

import (
	"testing"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

// TestCephVectorsFromText compiles each case's map from its text form and
// replays crushtool --test --show-mappings exactly.
func TestCephVectorsFromText(t *testing.T) {
	compiled := map[string]*crush.Map{}
	for _, c := range crushvectors.Cases(t) {
		m := compiled[c.MapTxt]
		if m == nil {
			var err error
			if m, err = Compile(crushvectors.ReadFile(t, c.MapTxt)); err != nil {
				t.Fatalf("%s: %v", c.MapTxt, err)
			}
			compiled[c.MapTxt] = m
		}
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			replay(t, m, c)
		})
	}
}

// replay maps x in [XMin, XMax] as crushtool --test does: reweight vector
// 1.0 for every device in some bucket (0 for other ids) plus the case's
// --weight options, x hashed with --pool-id when given, choose_args index 0
// falling back to the compat set.
func replay(t *testing.T, m *crush.Map, c crushvectors.Case) {
	weights := crushvectors.CrushtoolWeights(m.MaxDevices(), m.Buckets(),
		func(b *crush.Bucket) []int32 { return b.Items }, c.Reweights)
	ws := m.NewWorkspace()
	out := make([]int32, c.NumRep)
	args := m.ChooseArgsFor(0)
	crushvectors.CheckMappings(t, c, func(x int32) []int32 {
		input := x
		if c.PoolID != nil {
			input = int32(crush.Hash2(uint32(x), uint32(*c.PoolID)))
		}
		return out[:m.DoRule(ws, c.Rule, input, out, weights, args)]
	})
}
