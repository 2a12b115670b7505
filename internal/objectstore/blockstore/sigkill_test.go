package blockstore

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
)

// TestSigkill runs the store in a child process on the real file system,
// kills it with SIGKILL at a random moment and checks what survives:
//
//   - The child (TestSigkillChild, this test binary re-executed) opens the
//     store and runs sigkillWorkers goroutines, each committing its own
//     stream (sigkill_stream_test.go) with a few transactions in flight,
//     so that the committer groups them. It prints "Q gseq worker index"
//     once Queue has returned (gseq numbers Queue calls, which a mutex
//     keeps in the store's order) and "C gseq worker index" once the
//     transaction's Committed has fired, each line with one write(2):
//     a C line is a promise that the transaction is durable.
//   - The parent reads the lines and sends SIGKILL after a number of them
//     drawn from the seed (the lines are the clock: no sleeps), reopens
//     the store, and for each worker replays its stream on a memstore to
//     find the prefix the store holds: the first prefix at or after every
//     transaction reported committed, and at or after every transaction
//     queued before the last reported one (group commit is in order),
//     whose state (listing, sizes, extents, data, attributes, omap, pool
//     stats) equals the store's. The in-flight window bounds the search.
//   - The next round's child resumes each stream after the recovered
//     prefix on the same store, so the store accumulates, and each reopen
//     replays deferred writes the kill left.
//
// Rounds: -sigkill.rounds or $CUTTLE_SIGKILL_ROUNDS (default 20, 5 with
// -short); seed: -sigkill.seed or $CUTTLE_SIGKILL_SEED.
func TestSigkill(t *testing.T) {
	rounds := intSetting(*sigkillRounds, "CUTTLE_SIGKILL_ROUNDS", 20)
	if testing.Short() && *sigkillRounds == 0 && os.Getenv("CUTTLE_SIGKILL_ROUNDS") == "" {
		rounds = 5
	}
	seed := uint64(intSetting(*sigkillSeed, "CUTTLE_SIGKILL_SEED", 1))
	t.Logf("seed %d, %d rounds (-sigkill.seed, -sigkill.rounds)", seed, rounds)
	ctx := context.Background()
	dir := t.TempDir()
	opts := Options{Path: dir, Size: 32 << 20, AllocUnit: testAU, ChecksumBlock: testCB, CacheBytes: 1 << 20}
	if err := Mkfs(opts); err != nil {
		t.Fatal(err)
	}
	gens := make([]*streamGen, sigkillWorkers) // the parent's replay, at prefix k[w]
	models := make([]*memstore.Store, sigkillWorkers)
	k := make([]int, sigkillWorkers)
	for w := range gens {
		gens[w] = newStreamGen(seed, w)
		models[w] = memstore.New(memstore.Options{})
		defer models[w].Close()
	}
	r := rand.New(rand.NewPCG(seed, 0x5191))
	maxLines := 2*sigkillWorkers*sigkillPerRound + sigkillPerRound // some rounds run to the end
	start := time.Now()
	var kills, done int
	for round := range rounds {
		killAt := 1 + r.IntN(maxLines)
		out := runSigkillChild(t, dir, seed, k, killAt)
		if out.killed {
			kills++
		} else {
			done++
		}
		s, err := Open(opts)
		if err != nil {
			t.Fatalf("round %d: open after kill at line %d: %v", round, killAt, err)
		}
		for w := range gens {
			lo := max(k[w]+out.committed[w], out.required[w])
			hi := k[w] + out.committed[w] + sigkillWindow + 2
			first := lo
			if !out.killed {
				hi = lo
			}
			got, err := dumpStream(ctx, s, gens[w])
			if err != nil {
				t.Fatalf("round %d worker %d: dump store: %v", round, w, err)
			}
			for {
				for k[w] < lo {
					if err := objectstore.Apply(ctx, models[w], gens[w].next()); err != nil {
						t.Fatalf("round %d worker %d: memstore rejects transaction %d of the stream: %v", round, w, k[w], err)
					}
					k[w]++
				}
				want, err := dumpStream(ctx, models[w], gens[w])
				if err != nil {
					t.Fatal(err)
				}
				if got == want {
					break
				}
				if k[w] >= hi {
					t.Fatalf("round %d (kill at line %d, killed %v) worker %d: the store holds no prefix of the stream in [%d, %d] (%d reported committed, %d required by order); at %d: %s\nstderr:\n%s",
						round, killAt, out.killed, w, first, hi, out.committed[w], out.required[w], k[w], diffLines(got, want), out.stderr)
				}
				lo = k[w] + 1
			}
		}
		checkQuiescent(t, s)
		if err := s.Close(); err != nil {
			t.Fatalf("round %d: close: %v", round, err)
		}
	}
	t.Logf("%d rounds (%d killed, %d ran to the end) in %v; stream prefixes %v", rounds, kills, done, time.Since(start).Round(time.Millisecond), k)
}

var (
	sigkillRounds = flag.Int("sigkill.rounds", 0, "rounds of TestSigkill (default 20, 5 with -short)")
	sigkillSeed   = flag.Int("sigkill.seed", 0, "seed of TestSigkill (default 1)")
)

// intSetting returns the flag value if set, else the environment
// variable's, else def.
func intSetting(flagValue int, env string, def int) int {
	if flagValue != 0 {
		return flagValue
	}
	if v, err := strconv.Atoi(os.Getenv(env)); err == nil && v > 0 {
		return v
	}
	return def
}

const (
	sigkillWorkers  = 4
	sigkillPerRound = 40 // transactions per worker and round
	sigkillWindow   = 4  // transactions a worker keeps queued beyond the one it waits for
	sigkillEnv      = "CUTTLE_SIGKILL_CHILD"
)

type sigkillOutput struct {
	killed    bool
	committed []int // per worker: transactions reported committed this round
	required  []int // per worker: prefix length that order requires
	stderr    string
}

// runSigkillChild runs one child round and kills it after killAt lines.
func runSigkillChild(t *testing.T, dir string, seed uint64, starts []int, killAt int) sigkillOutput {
	t.Helper()
	var ss []string
	for _, s := range starts {
		ss = append(ss, strconv.Itoa(s))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSigkillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|%s", sigkillEnv, dir, seed, strings.Join(ss, ",")))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := sigkillOutput{committed: make([]int, len(starts)), required: make([]int, len(starts))}
	type qline struct{ w, i int }
	queued := map[int]qline{}
	maxCommitted := 0
	lines, finished := 0, false
	var protoErr error
	br := bufio.NewReader(pipe)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break // a line cut short by the kill (impossible with one write(2) per line) is ignored
		}
		f := strings.Fields(line)
		if len(f) == 1 && f[0] == "DONE" {
			finished = true
			continue
		}
		if len(f) != 4 || (f[0] != "Q" && f[0] != "C") {
			continue // the test framework's own output
		}
		g, _ := strconv.Atoi(f[1])
		w, _ := strconv.Atoi(f[2])
		i, _ := strconv.Atoi(f[3])
		if w < 0 || w >= len(starts) {
			protoErr = fmt.Errorf("bad line %q", line)
			continue
		}
		if f[0] == "Q" {
			queued[g] = qline{w, i}
		} else {
			if i != starts[w]+out.committed[w] {
				protoErr = fmt.Errorf("worker %d: committed %d out of order (want %d)", w, i, starts[w]+out.committed[w])
			}
			out.committed[w]++
			maxCommitted = max(maxCommitted, g)
		}
		lines++
		if lines == killAt && !out.killed {
			_ = cmd.Process.Kill()
			out.killed = true
		}
	}
	_, _ = io.Copy(io.Discard, pipe)
	werr := cmd.Wait()
	out.stderr = stderr.String()
	if protoErr != nil {
		t.Fatalf("child: %v\nstderr:\n%s", protoErr, out.stderr)
	}
	if strings.Contains(out.stderr, "panic") || strings.Contains(out.stderr, "DATA RACE") || strings.Contains(out.stderr, "--- FAIL") {
		t.Fatalf("child failed:\n%s", out.stderr)
	}
	if out.killed {
		if werr == nil && !finished {
			t.Fatalf("child exited cleanly without finishing:\n%s", out.stderr)
		}
		out.killed = !finished
	} else if werr != nil || !finished {
		t.Fatalf("child: %v (finished %v)\nstderr:\n%s", werr, finished, out.stderr)
	}
	for g, q := range queued {
		if g <= maxCommitted {
			out.required[q.w] = max(out.required[q.w], q.i+1)
		}
	}
	for w := range out.required {
		out.required[w] = max(out.required[w], starts[w])
	}
	return out
}

// TestSigkillChild is the child of TestSigkill; it does nothing unless
// $CUTTLE_SIGKILL_CHILD is "dir|seed|start,start,...".
func TestSigkillChild(t *testing.T) {
	spec := os.Getenv(sigkillEnv)
	if spec == "" {
		t.Skip("the child process of TestSigkill")
	}
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		t.Fatalf("bad %s %q", sigkillEnv, spec)
	}
	dir := parts[0]
	seed, _ := strconv.ParseUint(parts[1], 10, 64)
	var starts []int
	for _, s := range strings.Split(parts[2], ",") {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("bad %s %q", sigkillEnv, spec)
		}
		starts = append(starts, n)
	}
	// WALs end every 64 KiB of deferred data (boundWAL), so that the
	// kills find WALs that Pebble has given up while the store still
	// holds them for unapplied writes (walkeep.go).
	s, err := Open(Options{Path: dir, CacheBytes: 1 << 20, testLoggedPerWAL: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var outMu sync.Mutex
	emit := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		outMu.Lock()
		defer outMu.Unlock()
		if _, err := os.Stdout.WriteString(line); err != nil {
			os.Exit(4)
		}
	}
	var queueMu sync.Mutex // orders Queue calls with their gseq
	gseq := 0
	var wg sync.WaitGroup
	errs := make(chan error, len(starts))
	for w, first := range starts {
		g := newStreamGen(seed, w)
		for range first {
			g.next()
		}
		type inflight struct {
			c       *objectstore.Completion
			gseq, i int
		}
		comps := make(chan inflight, sigkillWindow)
		wg.Add(2)
		go func() { // producer
			defer wg.Done()
			defer close(comps)
			for i := first; i < first+sigkillPerRound; i++ {
				tx := g.next()
				queueMu.Lock()
				c, err := s.Queue(ctx, tx)
				if err != nil {
					queueMu.Unlock()
					errs <- fmt.Errorf("worker %d transaction %d: queue: %w", w, i, err)
					return
				}
				gseq++
				n := gseq
				emit("Q %d %d %d\n", n, w, i)
				queueMu.Unlock()
				comps <- inflight{c, n, i}
			}
		}()
		go func() { // reports commits in order
			defer wg.Done()
			for f := range comps {
				if err := f.c.Wait(ctx); err != nil {
					errs <- fmt.Errorf("worker %d transaction %d: commit: %w", w, f.i, err)
					for range comps {
					}
					return
				}
				emit("C %d %d %d\n", f.gseq, w, f.i)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !t.Failed() {
		emit("DONE\n")
	}
}
