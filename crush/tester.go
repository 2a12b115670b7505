package crush

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// TestRun describes a batch of mappings over a range of inputs, as Ceph's
// "crushtool --test" runs them: what an operator uses to check a rule
// before installing a map.
type TestRun struct {
	Rule       int32
	NumRep     int   // replicas asked for (result_max)
	MinX, MaxX int32 // inclusive range of inputs
	// Weights is the reweight vector; nil means crushtool's: 1.0 for every
	// device that sits in some bucket, 0 for the others.
	Weights []uint32
	// PoolID, when set, hashes each x with the pool id before mapping, as
	// "crushtool --pool-id" and pools with HASHPSPOOL do.
	PoolID *int64
	// ChooseArgs selects a weight set; nil maps with plain weights.
	ChooseArgs *ChooseArgs
	// Workers bounds the goroutines mapping in parallel; 0 means GOMAXPROCS.
	Workers int
	// Format, if set, renders each result; the rendered bytes are written
	// to the output in input order.
	Format func(dst []byte, x int32, result []int32) []byte
}

// TestStats summarises a TestRun.
type TestStats struct {
	Inputs      int         // number of inputs mapped
	ResultSizes map[int]int // result length -> number of inputs
	Placements  []int       // by device id: results naming it
	Weights     []uint32    // the reweight vector used
	Expected    []float64   // by device id: placements expected from the reweight vector alone
}

// testChunk is the unit of work one goroutine maps at a time: large
// enough to amortise scheduling, small enough to stream.
const testChunk = 8192

// RunTest maps every input of run, in parallel, and writes the formatted
// results to w in input order. It stops early if ctx is cancelled or w
// fails.
func (m *Map) RunTest(ctx context.Context, run TestRun, w io.Writer) (TestStats, error) {
	if m.Rule(run.Rule) == nil {
		return TestStats{}, fmt.Errorf("crush: no rule %d", run.Rule)
	}
	if run.NumRep <= 0 || run.MinX > run.MaxX {
		return TestStats{}, fmt.Errorf("crush: bad test range: num_rep %d, x %d..%d", run.NumRep, run.MinX, run.MaxX)
	}
	if run.Weights == nil {
		run.Weights = m.bucketedWeights()
	}
	workers := run.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	total := int64(run.MaxX) - int64(run.MinX) + 1
	chunks := int((total + testChunk - 1) / testChunk)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Each chunk gets a result slot; the writer drains slots in order while
	// at most 2*workers chunks are in flight.
	slots := make([]chan testChunkResult, chunks)
	for i := range slots {
		slots[i] = make(chan testChunkResult, 1)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := m.NewWorkspace()
			out := make([]int32, run.NumRep)
			for c := range next {
				slots[c] <- m.testChunk(ws, out, run, c)
			}
		}()
	}
	inFlight := make(chan struct{}, 2*workers)
	go func() {
		defer close(next)
		for c := range chunks {
			select {
			case inFlight <- struct{}{}:
			case <-ctx.Done():
				return
			}
			next <- c
		}
	}()

	stats := TestStats{ResultSizes: map[int]int{}, Placements: make([]int, m.MaxDevices()), Weights: run.Weights}
	var err error
	for c := 0; c < chunks && err == nil; c++ {
		select {
		case r := <-slots[c]:
			<-inFlight
			stats.add(r)
			if len(r.text) > 0 {
				if _, werr := w.Write(r.text); werr != nil {
					err = fmt.Errorf("crush: test output: %w", werr)
				}
			}
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	cancel() // slots are buffered, so workers finish their chunk and exit
	wg.Wait()
	stats.expect(run.NumRep)
	return stats, err
}

type testChunkResult struct {
	text       []byte
	sizes      map[int]int
	placements []int
	inputs     int
}

func (m *Map) testChunk(ws *Workspace, out []int32, run TestRun, chunk int) testChunkResult {
	r := testChunkResult{sizes: map[int]int{}, placements: make([]int, m.MaxDevices())}
	first := int64(run.MinX) + int64(chunk)*testChunk
	last := min(first+testChunk-1, int64(run.MaxX))
	for x64 := first; x64 <= last; x64++ {
		x := int32(x64)
		input := x
		if run.PoolID != nil {
			input = int32(Hash2(uint32(x), uint32(*run.PoolID)))
		}
		n := m.DoRule(ws, run.Rule, input, out, run.Weights, run.ChooseArgs)
		res := out[:n]
		r.sizes[n]++
		for _, item := range res {
			if item >= 0 && int(item) < len(r.placements) {
				r.placements[item]++
			}
		}
		if run.Format != nil {
			r.text = run.Format(r.text, x, res)
		}
		r.inputs++
	}
	return r
}

func (s *TestStats) add(r testChunkResult) {
	s.Inputs += r.inputs
	for size, n := range r.sizes {
		s.ResultSizes[size] += n
	}
	for i, n := range r.placements {
		s.Placements[i] += n
	}
}

// expect spreads the placements asked for over the devices in proportion
// to their reweight values, as crushtool's "expected" column does.
func (s *TestStats) expect(numRep int) {
	var sum float64
	for _, w := range s.Weights {
		sum += float64(w)
	}
	s.Expected = make([]float64, len(s.Placements))
	if sum == 0 {
		return
	}
	for i := range s.Expected {
		if i < len(s.Weights) {
			s.Expected[i] = float64(s.Inputs*numRep) * float64(s.Weights[i]) / sum
		}
	}
}

// bucketedWeights returns crushtool's default reweight vector.
func (m *Map) bucketedWeights() []uint32 {
	w := make([]uint32, m.MaxDevices())
	for _, b := range m.buckets {
		if b == nil {
			continue
		}
		for _, item := range b.Items {
			if item >= 0 {
				w[item] = WeightOne
			}
		}
	}
	return w
}
