package sim

import (
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// The simulated OSDs follow the central config as `cuttle osd run` does,
// since both are assembled by internal/daemon: "config set" reaches every
// running OSD within daemon.OSDConfigInterval, an OSD's own section wins
// over its type's, an OSD that restarts starts from the central config,
// what the cluster's Options fix (SourceOverride) stays, and "config rm"
// brings the default back. With cephx, so the OSDs' own caps let them
// read their config.
func TestConfigSetReachesSimulatedOSDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDsWith(t, Options{Cephx: true, RecoveryMaxPushes: 2})
		// settle lets every OSD poll once more (virtual time).
		settle := func() {
			time.Sleep(daemon.OSDConfigInterval + time.Second)
			synctest.Wait()
		}
		check := func(id int32, name, value, source string) {
			t.Helper()
			for _, s := range c.OSDs[id].D.ShowConfig() {
				if s.Name == name {
					if s.Value != value || s.Source != source {
						t.Errorf("osd.%d: %s = %s from %s, want %s from %s", id, name, s.Value, s.Source, value, source)
					}
					return
				}
			}
			t.Errorf("osd.%d shows no %s", id, name)
		}
		// slots is the OSD's number of recovery slots, osd_max_backfills
		// as it took effect.
		slots := func(id int32) int {
			t.Helper()
			r := c.OSDs[id].D.Command(wire.NewCommand("status"))
			var st struct {
				Max int `json:"recovery_max_pgs"`
			}
			if err := json.Unmarshal(r.Data, &st); err != nil {
				t.Fatal(err)
			}
			return st.Max
		}

		check(0, "osd_max_backfills", "1", "default")
		check(0, "osd_recovery_max_active", "2", "override")

		c.Run("config set", "who", "osd", "name", "osd_max_backfills", "value", "4")
		c.Run("config set", "who", "osd", "name", "osd_recovery_max_active", "value", "8")
		c.Run("config set", "who", "osd.1", "name", "osd_max_backfills", "value", "6")
		settle()
		for id, want := range map[int32]int{0: 4, 1: 6, 2: 4} {
			if got := slots(id); got != want {
				t.Errorf("osd.%d has %d recovery slots, want %d", id, got, want)
			}
			check(id, "osd_recovery_max_active", "2", "override")
		}
		check(1, "osd_max_backfills", "6", "mon")
		check(2, "osd_max_backfills", "4", "mon")

		// A restarted OSD fetches the central config as it starts, the
		// options it reads only then included: osd_emulate_device set
		// centrally wraps its store when it restarts, not before.
		c.Run("config set", "who", "osd.2", "name", "osd_emulate_device", "value", "ssd")
		settle()
		if got := c.OSDs[2].D.EmulatedDevice(); got != "none" {
			t.Errorf("osd.2 emulates %s before its restart; want none (read at start only)", got)
		}
		c.KillOSD(2)
		c.StartOSD(2)
		synctest.Wait()
		check(2, "osd_max_backfills", "4", "mon")
		if got := c.OSDs[2].D.EmulatedDevice(); got != "ssd" {
			t.Errorf("osd.2 restarted emulates %s, want ssd from the central config", got)
		}

		c.Run("config rm", "who", "osd", "name", "osd_max_backfills")
		settle()
		check(0, "osd_max_backfills", "1", "default")
		check(1, "osd_max_backfills", "6", "mon")
		if got := slots(0); got != 1 {
			t.Errorf("osd.0 has %d recovery slots after config rm, want 1", got)
		}
	})
}
