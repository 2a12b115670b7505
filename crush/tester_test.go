package crush

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cuttlestore/cuttle/internal/crushvectors"
)

// TestRunTestMatchesCrushtool runs vector cases through RunTest, with
// several workers, and compares its ordered output with crushtool's.
func TestRunTestMatchesCrushtool(t *testing.T) {
	ran := 0
	for _, c := range crushvectors.Cases(t) {
		// A handful of cases covers firstn, indep holes, reweights and
		// pool ids; TestCephVectorsFromDump replays them all.
		if (c.Map != "racks" && c.Map != "ec") || ran >= 8 {
			continue
		}
		ran++
		t.Run(c.ID, func(t *testing.T) {
			spec, _ := specFromDump(t, crushvectors.Path(t, c.MapJSON))
			m, err := New(spec)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			stats, err := m.RunTest(context.Background(), TestRun{
				Rule: c.Rule, NumRep: c.NumRep, MinX: c.XMin, MaxX: c.XMax, Weights: crushtoolWeights(m, c),
				PoolID: c.PoolID, ChooseArgs: m.ChooseArgsFor(0), Workers: 3,
				Format: func(dst []byte, x int32, res []int32) []byte {
					return append(append(dst, crushvectors.FormatMapping(c.Rule, x, res)...), '\n')
				},
			}, &buf)
			if err != nil {
				t.Fatal(err)
			}
			want := crushvectors.MappingText(t, c)
			if buf.String() != want {
				t.Fatal("output differs from crushtool's")
			}
			if stats.Inputs != int(c.XMax-c.XMin+1) {
				t.Errorf("mapped %d inputs", stats.Inputs)
			}
			placed := 0
			for _, n := range stats.Placements {
				placed += n
			}
			sized := 0
			for size, n := range stats.ResultSizes {
				sized += size * n
			}
			if placed > sized {
				t.Errorf("%d placements but results hold %d items", placed, sized)
			}
		})
	}
}

func TestRunTestErrors(t *testing.T) {
	m, weights := mustLayout(t, Layout{Hosts: 3, OSDsPerHost: 2})
	ctx := context.Background()
	if _, err := m.RunTest(ctx, TestRun{Rule: 9, NumRep: 3, MaxX: 10}, nil); err == nil {
		t.Error("unknown rule accepted")
	}
	if _, err := m.RunTest(ctx, TestRun{NumRep: 3, MinX: 5, MaxX: 4}, nil); err == nil {
		t.Error("empty range accepted")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := m.RunTest(cancelled, TestRun{NumRep: 3, MaxX: 1 << 20, Weights: weights}, &bytes.Buffer{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
	_, err = m.RunTest(ctx, TestRun{NumRep: 3, MaxX: 100000, Format: func(dst []byte, x int32, r []int32) []byte {
		return append(dst, 'x')
	}}, failingWriter{})
	if err == nil {
		t.Error("write error not reported")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
