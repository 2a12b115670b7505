package crush

import (
	"fmt"
	"testing"
)

// benchMaps are the two maps the performance targets name: 36 OSDs (3 racks
// x 3 hosts x 4 OSDs) and 1,000 OSDs (5 racks x 10 hosts x 20 OSDs).
var benchLayouts = []struct {
	name   string
	layout Layout
}{
	{"36osd", Layout{Racks: 3, Hosts: 3, OSDsPerHost: 4}},
	{"1000osd", Layout{Racks: 5, Hosts: 10, OSDsPerHost: 20}},
}

func mustLayout(tb testing.TB, l Layout) (*Map, []uint32) {
	tb.Helper()
	spec, err := BuildLayout(l)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := New(spec)
	if err != nil {
		tb.Fatal(err)
	}
	weights := make([]uint32, m.MaxDevices())
	for i := range weights {
		weights[i] = WeightOne
	}
	return m, weights
}

// BenchmarkDoRule measures one 3-replica mapping with the default
// replicated rule (chooseleaf firstn across hosts, straw2, jewel tunables).
func BenchmarkDoRule(b *testing.B) {
	for _, bl := range benchLayouts {
		for _, rule := range []int32{0, 1} {
			m, weights := mustLayout(b, bl.layout)
			b.Run(fmt.Sprintf("%s/%s", bl.name, m.Rule(rule).Name), func(b *testing.B) {
				ws := m.NewWorkspace()
				out := make([]int32, 3)
				b.ReportAllocs()
				x := int32(0)
				for b.Loop() {
					m.DoRule(ws, rule, x, out, weights, nil)
					x++
				}
			})
		}
	}
}

// TestDoRuleDoesNotAllocate holds the mapper to zero allocations per call
// once its workspace has grown.
func TestDoRuleDoesNotAllocate(t *testing.T) {
	for _, bl := range benchLayouts {
		m, weights := mustLayout(t, bl.layout)
		ws := m.NewWorkspace()
		out := make([]int32, 6)
		for _, rule := range m.Rules() {
			x := int32(0)
			allocs := testing.AllocsPerRun(200, func() {
				m.DoRule(ws, rule.ID, x, out, weights, nil)
				x++
			})
			if allocs != 0 {
				t.Errorf("%s rule %s: %.1f allocations per mapping", bl.name, rule.Name, allocs)
			}
		}
	}
}
