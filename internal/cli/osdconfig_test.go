package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/osd"
)

// TestConfigSetReachesRunningOSD is the bug of issue 36, item 4: "cuttle
// config set osd osd_max_backfills 4" changed nothing on a running OSD,
// which read its limits from flags only. Now the OSD follows the central
// config: its recovery slots (tell osd.N status; the slots it grants
// primaries pushing to it, dump_recovery_reservations) and tell osd.N config
// show change within its poll interval, an OSD's own section wins over
// its type's, and config rm brings the default back.
func TestConfigSetReachesRunningOSD(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0")
	if out, stderr, err := cuttleProc(t, "cluster", "up", "--fs=false", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osds", "1", "--osd-size", "256M"); err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	conf := filepath.Join(dir, "cuttle.conf")
	cli := func(args ...string) string {
		t.Helper()
		out, stderr, err := run(t, append([]string{"--conf", conf}, args...)...)
		if err != nil {
			t.Fatalf("cuttle %s: %v %s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	shown := func() map[string]osd.OptionShow {
		t.Helper()
		var opts []osd.OptionShow
		if err := json.Unmarshal([]byte(cli("--format", "json", "tell", "osd.0", "config", "show")), &opts); err != nil {
			t.Fatal(err)
		}
		m := map[string]osd.OptionShow{}
		for _, o := range opts {
			m[o.Name] = o
		}
		return m
	}
	slots := func() int {
		t.Helper()
		var st struct {
			Max int `json:"recovery_max_pgs"`
		}
		if err := json.Unmarshal([]byte(cli("--format", "json", "tell", "osd.0", "status")), &st); err != nil {
			t.Fatal(err)
		}
		var res struct {
			Remote struct {
				Limit int `json:"max_allowed"`
			} `json:"remote_reservations"`
		}
		if err := json.Unmarshal([]byte(cli("--format", "json", "tell", "osd.0", "dump_recovery_reservations")), &res); err != nil {
			t.Fatal(err)
		}
		if res.Remote.Limit != st.Max { // both sides of the reservations follow the option
			return -1
		}
		return st.Max
	}
	// await waits, at most three poll intervals, until osd.0 shows
	// osd_max_backfills = value from source, and has that many slots.
	await := func(value, source string, n int) {
		t.Helper()
		deadline := time.Now().Add(3 * daemon.OSDConfigInterval)
		for {
			got := shown()["osd_max_backfills"]
			if got.Value == value && got.Source == source && slots() == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("osd_max_backfills is %+v with %d slots; want %s from %s", got, slots(), value, source)
			}
			time.Sleep(100 * time.Millisecond) // polling what another process shows
		}
	}

	before := shown()
	if len(before) != len(osd.OptionNames()) {
		t.Fatalf("config show lists %d options, want %d: %+v", len(before), len(osd.OptionNames()), before)
	}
	await("1", "default", 1)
	if text := cli("tell", "osd.0", "config", "show"); !strings.Contains(text, "osd_recovery_max_active") || !strings.Contains(text, "SOURCE") {
		t.Errorf("config show as text:\n%s", text)
	}

	cli("config", "set", "osd", "osd_max_backfills", "4")
	await("4", "mon", 4)
	cli("config", "set", "osd.0", "osd_max_backfills", "6")
	await("6", "mon", 6)
	cli("config", "rm", "osd.0", "osd_max_backfills")
	await("4", "mon", 4)
	cli("config", "rm", "osd", "osd_max_backfills")
	await("1", "default", 1)
	if log, _ := os.ReadFile(filepath.Join(dir, "log", "osd.0.log")); !strings.Contains(string(log), `name=osd_max_backfills from=1 to=4 source=mon`) {
		t.Errorf("osd.0's log does not show the change:\n%s", lastLines(string(log), 20))
	}
}
