package procs

import (
	"context"
	"log/slog"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// feeder steps a governor through 250 ms windows.
type feeder struct {
	g   *Governor
	cur Sample
}

// window feeds one window with msgs messages of size bytes each and
// cores of CPU, and returns the governor's answer.
func (f *feeder) window(msgs, size uint64, cores float64) bool {
	const d = 250 * time.Millisecond
	f.cur.At = f.cur.At.Add(d)
	f.cur.Msgs += msgs
	f.cur.Bytes += msgs * size
	f.cur.CPU += time.Duration(cores * float64(d))
	return f.g.Step(f.cur)
}

func newFeeder() *feeder {
	f := &feeder{g: New(DefaultPolicy()), cur: Sample{At: time.Unix(1000, 0)}}
	f.g.Step(f.cur)
	return f
}

func TestSmallWorkDropsToOnePAfterDownWindows(t *testing.T) {
	f := newFeeder()
	for i := 1; i < DefaultPolicy().DownWindows; i++ {
		if f.window(2000, 4096, 0.3) {
			t.Fatalf("one P after %d windows, want %d", i, DefaultPolicy().DownWindows)
		}
	}
	if !f.window(2000, 4096, 0.3) {
		t.Fatal("still on all Ps after DownWindows windows of small work")
	}
	// Small work that stays on one P keeps it, up to nearly a core.
	if !f.window(2000, 4096, 0.9) {
		t.Fatal("left one P under small work below HighCPU")
	}
}

// An OSD's share of a machine that it shares with others (about half a
// core each for three OSDs and a client on two) is small work: one P.
func TestHalfACoreOfSmallWorkIsOneP(t *testing.T) {
	f := newFeeder()
	one := false
	for range DefaultPolicy().DownWindows {
		one = f.window(2000, 4096, 0.6)
	}
	if !one {
		t.Fatal("0.6 of a core of small ops kept all Ps")
	}
}

func TestLargeWorkOrBusyCPUGoesBackAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		size  uint64
		cores float64
	}{{"large messages", 4 << 20, 0.3}, {"busy CPU", 4096, 1.0}} {
		f := newFeeder()
		one := false
		for range DefaultPolicy().DownWindows {
			one = f.window(2000, 4096, 0.3)
		}
		if !one {
			t.Fatalf("%s: never on one P to begin with", tc.name)
		}
		if f.window(200, tc.size, tc.cores) {
			t.Errorf("%s: still on one P", tc.name)
		}
	}
}

func TestWindowsThatSayNothing(t *testing.T) {
	f := newFeeder()
	// A busy or large window in between restarts the count.
	for range DefaultPolicy().DownWindows - 1 {
		f.window(2000, 4096, 0.3)
	}
	f.window(2000, 4096, 0.9)
	for range DefaultPolicy().DownWindows - 1 {
		if f.window(2000, 4096, 0.3) {
			t.Fatal("one P although a busy window broke the run")
		}
	}
	if !f.window(2000, 4096, 0.3) {
		t.Fatal("all Ps after a full run of small windows")
	}
	// Idle windows keep one P even with large messages: too few to say.
	for range 10 {
		if !f.window(10, 4<<20, 0) {
			t.Fatal("an idle window changed the Ps")
		}
	}
	// Totals that go backwards (a restarted counter, or a CPU time that
	// could not be read) are skipped, even with large messages.
	for _, reset := range []func(*Sample){func(s *Sample) { s.Msgs = 0 }, func(s *Sample) { s.CPU = 0 }} {
		f.cur.At = f.cur.At.Add(250 * time.Millisecond)
		reset(&f.cur)
		if !f.g.Step(f.cur) {
			t.Fatal("a counter reset changed the Ps")
		}
		if !f.window(2000, 4096, 0.3) {
			t.Fatal("a window after a reset changed the Ps")
		}
	}
	// With no minimum rate an empty window divides by nothing.
	p := DefaultPolicy()
	p.MinRate = 0
	g := New(p)
	g.Step(Sample{At: time.Unix(1, 0)})
	g.Step(Sample{At: time.Unix(2, 0)})
}

// Run sets GOMAXPROCS as the governor decides and restores the default
// when it stops.
func TestRunSetsGOMAXPROCS(t *testing.T) {
	if !Enabled() {
		t.Skip("GOMAXPROCS is set or this machine has one CPU")
	}
	// go test -cpu sets GOMAXPROCS; Run restores the runtime's default.
	was := runtime.GOMAXPROCS(0)
	runtime.SetDefaultGOMAXPROCS()
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	all := runtime.GOMAXPROCS(0)
	if all < 2 {
		t.Skip("the runtime's default is one P")
	}
	var msgs, size atomic.Uint64
	size.Store(512)
	traffic := func() (uint64, uint64) {
		n := msgs.Add(1000)
		return n, n * size.Load()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The decisions above ignore CPU here: this test's own CPU use
		// depends on the machine.
		p := DefaultPolicy()
		p.LowCPU, p.HighCPU = 1000, 1000
		New(p).Run(ctx, time.Millisecond, traffic, slog.New(slog.DiscardHandler))
	}()
	waitFor := func(what string, ok func(int) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok(runtime.GOMAXPROCS(0)) {
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("GOMAXPROCS %d: never %s", runtime.GOMAXPROCS(0), what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor("1 under small messages", func(n int) bool { return n == 1 })
	size.Store(1 << 20)
	waitFor("back to all under large messages", func(n int) bool { return n == all })
	size.Store(512)
	waitFor("1 again", func(n int) bool { return n == 1 })
	cancel()
	<-done
	if n := runtime.GOMAXPROCS(0); n != all {
		t.Fatalf("GOMAXPROCS %d after Run returned, want the default %d", n, all)
	}
}

// TestClientPolicy: a client using most of a core on small ops drops to
// one P, and goes back once one P holds it at a full core.
func TestClientPolicy(t *testing.T) {
	f := &feeder{g: New(ClientPolicy()), cur: Sample{At: time.Unix(1000, 0)}}
	f.g.Step(f.cur)
	one := false
	for range ClientPolicy().DownWindows {
		one = f.window(10000, 4300, 0.7)
	}
	if !one {
		t.Fatal("a client at 0.7 of a core on small ops kept all Ps")
	}
	if !f.window(10000, 4300, 0.9) {
		t.Fatal("left one P at 0.9 of a core")
	}
	if f.window(10000, 4300, 1.0) {
		t.Fatal("kept one P at a full core")
	}
	if f.window(400, 4<<20, 0.5) {
		t.Fatal("dropped to one P on large transfers")
	}
}

// TestHoldKeepsAllPs: while work holds the governor, GOMAXPROCS stays at
// (or goes back to) all Ps whatever the policy says; when the last hold
// is released, the policy's one P returns. Without Run nothing changes.
func TestHoldKeepsAllPs(t *testing.T) {
	f := newFeeder()
	var sets []bool
	f.g.setOne = func(one bool) { sets = append(sets, one) }
	expect := func(what string, want ...bool) {
		t.Helper()
		if !slices.Equal(sets, want) {
			t.Fatalf("%s: GOMAXPROCS set to one P %v, want %v", what, sets, want)
		}
	}
	// small feeds the governor a window of small work (0.3 of a core)
	// through observe, as Run does.
	small := func() bool {
		f.cur.At = f.cur.At.Add(250 * time.Millisecond)
		f.cur.Msgs += 2000
		f.cur.Bytes += 2000 * 4096
		f.cur.CPU += 75 * time.Millisecond
		return f.g.observe(f.cur)
	}

	// Not running: holds and policy change nothing.
	f.g.Hold()
	f.g.Release()
	expect("before Run")

	f.g.setRunning(true)
	for range DefaultPolicy().DownWindows {
		small()
	}
	expect("small work", true)
	f.g.Hold()
	expect("held", true, false)
	f.g.Hold()
	f.g.Release()
	expect("nested hold released", true, false)
	f.g.Release()
	expect("released", true, false, true)

	// A hold that begins on all Ps keeps them through small windows.
	f.g.Hold()
	expect("held again", true, false, true, false)
	if small() {
		t.Fatal("a small window changed GOMAXPROCS during a hold")
	}
	f.g.setRunning(false)
	f.g.Release()
	expect("stopped", true, false, true, false)

	// A Release without a Hold leaves the count at zero: the next Hold
	// still holds.
	f.g.setRunning(true)
	expect("running again", true, false, true, false, true)
	f.g.Release()
	f.g.Hold()
	expect("hold after a stray release", true, false, true, false, true, false)
}
