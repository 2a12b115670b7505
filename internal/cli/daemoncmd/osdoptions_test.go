package daemoncmd

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/cli/clusterconn"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/spf13/pflag"
)

// TestOSDOptionFlags checks osd run's option flags: the flags of today's
// names set the schema's options, checked as they are parsed, and go to
// the daemon's config with the configuration file, where a value the
// schema refuses stops the OSD before it opens its store. (Which source
// wins is internal/daemon's TestOSDOptions.)
func TestOSDOptionFlags(t *testing.T) {
	given := map[string]string{}
	fl := pflag.NewFlagSet("osd run", pflag.ContinueOnError)
	addOptionFlags(fl, "osd", given)
	for _, name := range []string{"heartbeat-interval", "heartbeat-grace", "recovery-max-pgs", "recovery-max-pushes",
		"recovery-sleep", "scrub-interval", "deep-scrub-interval", "pg-log-entries"} {
		if fl.Lookup(name) == nil {
			t.Errorf("no --%s", name)
		}
	}
	if err := fl.Parse([]string{"--recovery-max-pgs", "3", "--heartbeat-interval", "2000ms"}); err != nil {
		t.Fatal(err)
	}
	if err := fl.Parse([]string{"--recovery-max-pushes", "0"}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("--recovery-max-pushes 0: %v", err)
	}
	if len(given) != 2 || given["osd_max_backfills"] != "3" || given["osd_heartbeat_interval"] != "2s" {
		t.Errorf("flags given: %v", given)
	}

	dir := filepath.Join(t.TempDir(), "osd")
	if err := daemon.MkfsOSD(context.Background(), dir, daemon.MinOSDSize, 2); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "cuttle.conf")
	if err := os.WriteFile(conf, []byte("[global]\nmon_host = a=127.0.0.1:1\n[osd]\nosd max backfills = 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := osdConfig(&clusterconn.Flags{Conf: conf}, osdRunFlags{id: -1, data: dir, memTarget: "0", options: given})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := cfg.File.Get("osd.2", "osd_max_backfills"); !ok || v != "9" || cfg.Flags["osd_max_backfills"] != "3" || cfg.ID != 2 {
		t.Errorf("the daemon's config: file %q, flags %v, id %d", v, cfg.Flags, cfg.ID)
	}

	bad := filepath.Join(t.TempDir(), "cuttle.conf")
	if err := os.WriteFile(bad, []byte("[global]\nmon_host = a=127.0.0.1:1\n[osd.2]\nosd_recovery_sleep = forever\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := OSDRunCommand(&clusterconn.Flags{Conf: bad})
	c.SetArgs([]string{"--data", dir})
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	if err := c.ExecuteContext(context.Background()); !errors.Is(err, config.ErrBadValue) ||
		!strings.Contains(err.Error(), "osd_recovery_sleep") {
		t.Errorf("a bad value in the file: %v", err)
	}
}
