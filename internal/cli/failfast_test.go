package cli

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/osdmon"
	"github.com/cuttlestore/cuttle/internal/osd"
)

// An OSD of a three-OSD cluster killed with SIGKILL is marked down long
// before a heartbeat could have found it: its two peers' connections to
// it break, their redials are refused, and their two immediate reports
// are enough. The bound is the OSDs' heartbeat interval, the earliest a
// silent peer is even pinged (the grace, 20 s by default, is when it
// would be reported); the monitor's log says the reports were refusals.
func TestKilledOSDMarkedDownBeforeTheHeartbeatInterval(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	c := upLocalCluster(t)
	var opts []osd.OptionShow
	if err := json.Unmarshal([]byte(c.cli("--format", "json", "tell", "osd.0", "config", "show")), &opts); err != nil {
		t.Fatal(err)
	}
	var interval time.Duration
	for _, o := range opts {
		if o.Name == "osd_heartbeat_interval" {
			d, err := time.ParseDuration(o.Value)
			if err != nil {
				t.Fatalf("osd_heartbeat_interval %q: %v", o.Value, err)
			}
			interval = d
		}
	}
	if interval == 0 {
		t.Fatal("osd.0 shows no osd_heartbeat_interval")
	}
	upCount := func() int {
		var st osdmon.StatView
		if err := json.Unmarshal([]byte(c.cli("--format", "json", "osd", "stat")), &st); err != nil {
			t.Fatal(err)
		}
		return st.NumUp
	}
	if n := upCount(); n != 3 {
		t.Fatalf("%d OSDs up before the kill, want 3", n)
	}
	victim := localStatus(t, c.dir)["osd.1"]
	start := time.Now()
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := start.Add(interval)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for upCount() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("osd.1 still up %v after SIGKILL, the heartbeat interval", interval)
		}
		<-tick.C
	}
	t.Logf("osd.1 marked down within %v of SIGKILL (heartbeat interval %v)", time.Since(start).Round(time.Millisecond), interval)
	monLog, err := os.ReadFile(localStatus(t, c.dir)["mon.a"].Log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(monLog), "marked down osd.1: 2 of 2 reporters' failure domains (2 refused by it)") {
		t.Errorf("the monitor's log does not show osd.1 marked down on two refused reporters:\n%s", lastLines(string(monLog), 20))
	}
}
