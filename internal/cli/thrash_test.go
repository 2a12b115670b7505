package cli

import (
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The thrash test: a verifying workload against a cluster of four OSDs,
// each in its own network namespace, while a thrasher kills OSDs with
// SIGKILL and restarts them, marks them out and in, overwrites bytes in
// an OSD's data file, and cuts an OSD off the network and back. It ends
// with every fault healed, every PG repaired and deep scrubbed, the
// cluster HEALTH_OK, and every acknowledged write intact, and reports
// what it injected and verified. At most one OSD is down or cut off at a
// time: the pool keeps three copies and needs two.
func TestThrash(t *testing.T) {
	c := newNSCluster(t, 4)
	seed := uint64(time.Now().UnixNano())
	t.Logf("thrasher seed %d", seed)
	rng := mrand.New(mrand.NewPCG(seed, 1))
	stop := c.writer()
	c.keepsWriting("before the thrashing", 40)

	faults := map[string]int{}
	out := map[int]bool{}
	cut := -1
	heal := func() {
		for i := range c.osds {
			if !c.running(i) {
				c.start(i)
			}
		}
		if cut >= 0 {
			c.cut(cut, false)
			cut = -1
		}
		for o := range out {
			c.cli("osd", "in", fmt.Sprint(o))
			delete(out, o)
		}
	}
	for round := range 12 {
		osd := rng.IntN(4)
		whole := cut < 0 && c.downCount() == 0
		switch k := rng.IntN(5); {
		case k == 0 && whole:
			c.kill(osd)
			faults["kill"]++
		case k == 1 && len(out) == 0:
			c.cli("osd", "out", fmt.Sprint(osd))
			out[osd] = true
			faults["out"]++
		case k == 2:
			c.overwrite(fmt.Sprint("osd.", osd), rng)
			faults["overwritten bytes"]++
		case k == 3 && whole:
			c.cut(osd, true)
			cut = osd
			faults["partition"]++
		default:
			heal()
			faults["heal"]++
		}
		c.keepsWriting(fmt.Sprintf("in round %d (%v)", round, faults), 20)
	}
	heal()
	stop()
	c.waitFor("every OSD up", 3*time.Minute, func() bool { return c.upOSDs() == len(c.osds) })
	c.waitFor("every PG active+clean", 3*time.Minute, func() bool { return pgsAllActiveClean(c.cli("pg", "stat")) })
	pgs := c.pgIDs()
	c.scrubAll(pgs, "repair")
	c.scrubAll(pgs, "deep-scrub")
	c.healthOK()
	c.verify()
	c.mu.Lock()
	t.Logf("thrash: faults %v; %d writes acknowledged and read back at the end", faults, c.writes)
	c.mu.Unlock()
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
