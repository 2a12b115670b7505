package sim

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/pgmon"
)

var pgpJump = flag.Bool("pgstep.jump", false, "TestPGPNumStepsUnderMisplacedRatio also sets pgp_num_actual, jumping to the target at once (which fails it)")

// "osd pool set POOL pgp_num N" sets a target the monitors' leader steps
// pgp_num toward: pgp_num reaches it through several small steps, and
// the share of object copies misplaced or degraded stays within
// target_max_misplaced_ratio plus the one step that may start just below
// it (a step moves about 1/pg_num of the data), rather than jumping to
// most of the pool as one pgp_num change would.
func TestPGPNumStepsUnderMisplacedRatio(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.AddOSD("h4")
		c.settle(t, "with four OSDs")
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for i := range 256 {
			if err := io.WriteFull(ctx, fmt.Sprint("obj-", i), make([]byte, 4096)); err != nil {
				t.Fatal(err)
			}
		}
		const limit, pgNum = 0.06, 32
		c.Run("config set", "who", "mon", "name", "target_max_misplaced_ratio", "value", fmt.Sprint(limit))
		// Slow backfill (a rest after each push), so that moved copies stay
		// misplaced for seconds and the ratio is what gates the steps.
		c.Run("config set", "who", "osd", "name", "osd_recovery_sleep", "value", "500ms")
		c.Run("osd pool set", "pool", "rbd", "var", "pg_num", "val", fmt.Sprint(pgNum))
		c.settle(t, "after pg_num grows")
		if r := c.Run("osd pool set", "pool", "rbd", "var", "pgp_num", "val", fmt.Sprint(pgNum)); r.Code != 0 {
			t.Fatalf("osd pool set pgp_num: %d %s", r.Code, r.Status)
		}
		if *pgpJump {
			c.Run("osd pool set", "pool", "rbd", "var", "pgp_num_actual", "val", fmt.Sprint(pgNum))
		}
		unclean := func() float64 {
			var st pgmon.StatView
			r := c.Run("pg stat", "format", "json")
			if err := json.Unmarshal(r.Data, &st); err != nil {
				t.Fatalf("pg stat: %v (%s)", err, r.Data)
			}
			if st.ObjectCopies == 0 {
				return 0
			}
			return float64(st.Degraded+st.Misplaced) / float64(st.ObjectCopies)
		}
		var steps []uint32
		worst := 0.0
		for range 4800 {
			time.Sleep(250 * time.Millisecond)
			synctest.Wait()
			worst = max(worst, unclean())
			p := c.Map().PoolByName("rbd")
			if len(steps) == 0 || steps[len(steps)-1] != p.PGPNum {
				steps = append(steps, p.PGPNum)
			}
			if p.PGPNum == pgNum && len(c.uncleanPGs()) == 0 {
				break
			}
		}
		t.Logf("pgp_num went %v; most unclean %.3f", steps, worst)
		if last := steps[len(steps)-1]; last != pgNum {
			t.Fatalf("pgp_num %d, not at its target %d, after 20 minutes (steps %v)", last, pgNum, steps)
		}
		if bound := limit + 1.0/pgNum; worst > bound {
			t.Fatalf("%.3f of the object copies were unclean at once, above the limit %.2f plus one step (%.3f)", worst, limit, bound)
		}
		if len(steps) < 4 {
			t.Fatalf("pgp_num went %v: not stepped", steps)
		}
		// With limit 0.06 and 32 PGs a step moves max(1, ⌊32 × 0.03⌋) = 1 PG.
		for i := 1; i < len(steps); i++ {
			if steps[i]-steps[i-1] > 1 {
				t.Fatalf("pgp_num went %v: a step of more than one PG", steps)
			}
		}
		c.settle(t, "after pgp_num reaches its target")
	})
}
