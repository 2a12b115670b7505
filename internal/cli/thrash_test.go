package cli

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/balancer"
	"github.com/cuttlestore/cuttle/internal/mon/osdmon"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The thrash test: verifying workloads against a cluster of four OSDs,
// each in its own network namespace, while a thrasher injects the faults
// of thrashFaults: it kills OSDs with SIGKILL and restarts them, marks
// them out and in, overwrites bytes in an OSD's data file, cuts an OSD
// off the network and back, and splits and merges a pool's PGs. The balancer runs throughout, so upmaps
// move PGs while the faults happen. The workloads:
//
//   - a writer of versioned objects in pool rbd (surfCluster.writer);
//   - a client of pool snapped that takes self-managed snapshots,
//     writes, deletes, rolls back and removes snapshots, checking reads
//     at live snapshots (sim.SnapWorkload, shared with the chaos
//     simulation);
//   - a watcher of one object and a notifier sending a notify every
//     second (sim.WatchLoad, shared with the chaos simulation).
//
// It ends with every fault healed, the spread balanced, every PG repaired
// and deep scrubbed, the cluster HEALTH_OK, every acknowledged write
// intact, every object right at every live snapshot, every notify
// accounted for and a watch that still hears notifies, and, once the
// remaining snapshots are removed, their clones trimmed; it reports what
// it injected and verified. At most one OSD is down or cut off at a
// time: the pools keep three copies and need two.
func TestThrash(t *testing.T) {
	c := newNSCluster(t, 4)
	seed := uint64(time.Now().UnixNano())
	t.Logf("thrasher seed %d", seed)
	th := &thrasher{nsCluster: c, rng: mrand.New(mrand.NewPCG(seed, 1)), done: map[string]int{}, out: map[int]bool{}, cut: -1, primary: -2}
	// 8 PGs are the test's choice; the autoscaler (which would ask for 32
	// and warn POOL_TOO_FEW_PGS at the end) is off for the pool.
	c.cli("osd", "pool", "create", "snapped", "8", "--size", "3", "--min-size", "2", "--rule", "replicated_osd",
		"--autoscale-mode", "off")
	c.cli("config", "set", "mon", "balancer_sleep_interval", "2s")
	c.cli("balancer", "on")
	crush := th.eval()
	loads := startThrashLoads(c, seed)

	stop := c.writer()
	c.keepsWriting("before the thrashing", 40)
	for round := range 12 {
		th.round()
		c.keepsWriting(fmt.Sprintf("in round %d (%v)", round, th.done), 20)
		th.observe()
	}
	th.heal()
	loads.stop()
	stop()
	c.waitFor("every OSD up", 3*time.Minute, func() bool { return c.upOSDs() == len(c.osds) })
	// A merge asked for goes on once the PGs are clean (the balancer
	// leaves the pool alone meanwhile).
	c.waitFor("pool snapped's merge, if any, done", 5*time.Minute, func() bool {
		return c.cli("osd", "pool", "get", "snapped", "merge_status") == "merge_status: none\n"
	})
	// A split's pgp_num steps on after its PGs are clean between steps;
	// each step starts new intervals, which drop the scrubs asked for
	// below, so the steps must be over first.
	c.waitFor("pool snapped's pgp_num at its target", 5*time.Minute, th.snappedSettled)
	c.waitFor("the balancer to even out every pool", 3*time.Minute, func() bool { return th.eval().maxDeviation() <= 1 })
	c.cli("balancer", "off")
	th.observe()
	c.waitFor("every PG active+clean", 3*time.Minute, func() bool { return pgsAllActiveClean(c.cli("pg", "stat")) })
	loads.afterHeal()
	pgs := c.pgIDs()
	c.scrubAll(pgs, "repair")
	c.scrubAll(pgs, "deep-scrub")
	c.healthOK()
	c.verify()
	loads.verifyAndTrim()
	balanced := th.eval()
	c.mu.Lock()
	t.Logf("thrash: faults %v; %d writes acknowledged and read back at the end", th.done, c.writes)
	c.mu.Unlock()
	t.Logf("balancer: %d upmap tables seen, %d entries at the end; copies per OSD max deviation %.2f with CRUSH alone, %.2f balanced",
		len(th.upmaps), th.upmapEntries, crush.maxDeviation(), balanced.maxDeviation())
	loads.report(t)
	t.Logf("the watched object's primary changed %d times", th.primaryChanges)
}

// thrashFault is one kind of fault the thrasher injects: whether it may
// now (with the OSD drawn for it), and doing it.
type thrashFault struct {
	name string
	may  func(th *thrasher, osd int) bool
	do   func(th *thrasher, osd int)
}

// thrashFaults are the faults a round draws from, each as likely; one
// that may not be injected now heals instead (heal stays last). A new
// kind of fault is one more entry here. The split and the merge change
// pool snapped's pg_num (8 to 16 and back) while the other faults
// happen; the merge is asked for once every PG is active+clean (else
// the monitors refuse it: a refusal, from a race, counts as "merge
// refused") and proceeds during the next rounds.
var thrashFaults = []thrashFault{
	{"split", func(th *thrasher, _ int) bool { n, target := th.snappedPGNum(); return n == 8 && target == 8 },
		func(th *thrasher, _ int) {
			th.cli("osd", "pool", "set", "snapped", "pg_num", "16")
			th.cli("osd", "pool", "set", "snapped", "pgp_num", "16")
		}},
	// A merge needs every PG clean when it is asked for: not while an
	// OSD is down or cut off (its PGs stay degraded until it returns).
	{"merge", func(th *thrasher, osd int) bool {
		n, target := th.snappedPGNum()
		return n == 16 && target == 16 && th.whole(osd)
	},
		func(th *thrasher, _ int) {
			// Asked once the PGs are clean (else it is refused), it
			// goes on while the next rounds' faults happen.
			th.waitFor("every PG active+clean before a merge", 3*time.Minute, func() bool { return pgsAllActiveClean(th.cli("pg", "stat")) })
			_, stderr, err := run(th.t, "--conf", th.conf, "osd", "pool", "set", "snapped", "pg_num", "8")
			switch {
			case err == nil:
			case strings.Contains(fmt.Sprint(err, stderr), "cannot merge PGs while"):
				th.done["merge refused"]++
			default:
				th.t.Fatalf("osd pool set snapped pg_num 8: %v %s", err, stderr)
			}
		}},
	{"kill", (*thrasher).whole, func(th *thrasher, osd int) { th.kill(osd) }},
	{"out", func(th *thrasher, _ int) bool { return len(th.out) == 0 }, func(th *thrasher, osd int) {
		th.cli("osd", "out", fmt.Sprint(osd))
		th.out[osd] = true
	}},
	{"overwritten bytes", always, func(th *thrasher, osd int) { th.overwrite(fmt.Sprint("osd.", osd), th.rng) }},
	{"partition", (*thrasher).whole, func(th *thrasher, osd int) {
		th.nsCluster.cut(osd, true)
		th.cut = osd
	}},
	{"heal", always, func(th *thrasher, _ int) { th.heal() }},
}

func always(*thrasher, int) bool { return true }

// thrasher is the fault injector's state: the OSDs it marked out, the
// one it cut off (-1: none), what it did, and what it saw of the
// balancer and the watched object's primary.
type thrasher struct {
	*nsCluster
	rng  *mrand.Rand
	done map[string]int
	out  map[int]bool
	cut  int

	upmaps         map[string]bool // the distinct pg_upmap_items tables seen
	upmapEntries   int             // in the last one
	primary        int32           // the watched object's, last seen (-2: not yet)
	primaryChanges int
}

// snappedPGNum returns pool snapped's pg_num and pg_num_target.
func (th *thrasher) snappedPGNum() (pgNum, target int) {
	var v struct {
		PGNum  int `json:"pg_num"`
		Target int `json:"pg_num_target"`
	}
	if err := json.Unmarshal([]byte(th.cli("--format", "json", "osd", "pool", "get", "snapped", "all")), &v); err != nil {
		th.t.Fatalf("osd pool get snapped: %v", err)
	}
	return v.PGNum, v.Target
}

// snappedSettled reports whether pool snapped's pg_num and pgp_num are
// where they are headed, and equal: no split or merge step is left.
func (th *thrasher) snappedSettled() bool {
	var v struct {
		PGNum        uint32 `json:"pg_num"`
		PGPNum       uint32 `json:"pgp_num"`
		PGNumTarget  uint32 `json:"pg_num_target"`
		PGPNumTarget uint32 `json:"pgp_num_target"`
	}
	if err := json.Unmarshal([]byte(th.cli("--format", "json", "osd", "pool", "get", "snapped", "all")), &v); err != nil {
		th.t.Fatalf("osd pool get snapped: %v", err)
	}
	at := func(n, target uint32) bool { return target == 0 || target == n }
	return v.PGPNum == v.PGNum && at(v.PGNum, v.PGNumTarget) && at(v.PGPNum, v.PGPNumTarget)
}

// whole reports whether every OSD runs and none is cut off.
func (th *thrasher) whole(int) bool { return th.cut < 0 && th.downCount() == 0 }

// round injects one fault drawn from thrashFaults.
func (th *thrasher) round() {
	osd := th.rng.IntN(len(th.osds))
	f := thrashFaults[th.rng.IntN(len(thrashFaults))]
	if !f.may(th, osd) {
		th.t.Logf("thrash: %s may not now; healing instead", f.name)
		f = thrashFaults[len(thrashFaults)-1]
	}
	f.do(th, osd)
	th.done[f.name]++
}

// heal ends every fault: stopped OSDs start, the cut link mends, OSDs
// marked out come in.
func (th *thrasher) heal() {
	for i := range th.osds {
		if !th.running(i) {
			th.start(i)
		}
	}
	if th.cut >= 0 {
		th.nsCluster.cut(th.cut, false)
		th.cut = -1
	}
	for o := range th.out {
		th.cli("osd", "in", fmt.Sprint(o))
		delete(th.out, o)
	}
}

// observe notes the map's upmap table and the watched object's acting
// primary.
func (th *thrasher) observe() {
	var dump osdmon.DumpView
	if err := json.Unmarshal([]byte(th.cli("--format", "json", "osd", "dump")), &dump); err != nil {
		th.t.Fatalf("osd dump: %v", err)
	}
	if th.upmaps == nil {
		th.upmaps = map[string]bool{}
	}
	b, _ := json.Marshal(dump.PGUpmapItems)
	th.upmaps[string(b)] = true
	th.upmapEntries = len(dump.PGUpmapItems)

	file := filepath.Join(th.dir, "thrash-osdmap")
	th.cli("osd", "getmap", "-o", file)
	data, err := os.ReadFile(file)
	if err != nil {
		th.t.Fatal(err)
	}
	m, err := osdmap.UnmarshalMap(data)
	if err != nil {
		th.t.Fatalf("osd getmap: %v", err)
	}
	pool, _ := th.conn.LookupPool("rbd")
	pg, err := m.ObjectToPG(pool, thrashWatched, "", "")
	if err != nil {
		th.t.Fatal(err)
	}
	mp, err := m.PGToUpActing(pg, &osdmap.Scratch{})
	if err != nil {
		th.t.Fatal(err)
	}
	if th.primary != -2 && mp.ActingPrimary != th.primary {
		th.primaryChanges++
	}
	th.primary = mp.ActingPrimary
}

// thrashEval is balancer eval's answer.
type thrashEval balancer.Evaluation

// eval runs balancer eval.
func (th *thrasher) eval() thrashEval {
	var ev balancer.Evaluation
	if err := json.Unmarshal([]byte(th.cli("--format", "json", "balancer", "eval")), &ev); err != nil || len(ev.Pools) != 2 {
		th.t.Fatalf("balancer eval: %v %+v", err, ev)
	}
	return thrashEval(ev)
}

// maxDeviation is the largest of the pools' deviations of an OSD's
// copies from its target.
func (ev thrashEval) maxDeviation() float64 {
	var d float64
	for _, p := range ev.Pools {
		d = max(d, p.MaxDeviation)
	}
	return d
}

// downCount counts the OSDs whose process is not running.
func (c *nsCluster) downCount() int {
	n := 0
	for i := range c.osds {
		if !c.running(i) {
			n++
		}
	}
	return n
}

// pgsAllActiveClean reports whether a pg stat line counts only
// active+clean PGs ("32 pgs: 32 active+clean; ...").
func pgsAllActiveClean(stat string) bool {
	_, rest, ok := strings.Cut(stat, "pgs: ")
	if !ok {
		return false
	}
	states, _, _ := strings.Cut(rest, ";")
	return !strings.Contains(states, ",") && strings.HasSuffix(strings.TrimSpace(states), " active+clean")
}

// overwrite writes 256 KiB of random bytes at a random place in the first
// 4 MiB of an OSD's data file, where the workload's objects live.
func (s *surfCluster) overwrite(name string, rng *mrand.Rand) {
	s.t.Helper()
	f, err := os.OpenFile(filepath.Join(s.dir, name, "block"), os.O_WRONLY, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	junk := make([]byte, 256<<10)
	rand.Read(junk)
	if _, err := f.WriteAt(junk, int64(rng.IntN(16))*(256<<10)); err != nil {
		s.t.Fatal(err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		s.t.Fatal(err)
	}
}
