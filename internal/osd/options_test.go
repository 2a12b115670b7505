package osd

import (
	"encoding/json"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/osd/slots"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// TestOptionsAreTheSchemas checks that the OSD reads every option the
// schema says OSDs read, and no other: an option declared for OSDs that
// the OSD ignored would let "config set" change nothing.
func TestOptionsAreTheSchemas(t *testing.T) {
	var want []string
	for _, o := range config.ForDaemon("osd") {
		want = append(want, o.Name)
	}
	got := slices.Sorted(slices.Values(OptionNames()))
	if !slices.Equal(got, want) {
		t.Errorf("the OSD reads %v; the schema says OSDs read %v", got, want)
	}
}

// testConfig is a Config with its defaults filled in.
func testConfig(t *testing.T) Config {
	t.Helper()
	cfg, err := Config{ID: 1, Store: memstore.New(memstore.Options{}), Network: &msgr.TCP{}, Listen: "x", Host: "h",
		Mons: []monc.Addr{{Name: "a", Addr: "x"}}, Logger: slog.New(slog.DiscardHandler)}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestOptionDefaults checks that the OSD's own defaults (Config's) are
// the schema's, so that an OSD that reads no source behaves as before.
func TestOptionDefaults(t *testing.T) {
	cfg := testConfig(t)
	defaults, err := config.Resolve(OptionNames())
	if err != nil {
		t.Fatal(err)
	}
	if got := OptionsFrom(Options{}, defaults); got != cfg.options() {
		t.Errorf("schema defaults %+v, Config's %+v", got, cfg.options())
	}
	for _, v := range cfg.options().values().All() {
		if v.Source != config.SourceDefault {
			t.Errorf("%s: %+v differs from the schema's default", v.Name, v)
		}
	}
	cfg.RecoveryMaxPGs = 8
	if v, _ := cfg.options().values().Get("osd_max_backfills"); v.Value != "8" || v.Source != config.SourceOverride {
		t.Errorf("a Config field set: %+v", v)
	}
}

// TestSetConfig changes options of an OSD: the recovery slots (both
// sides of the reservations) and the PG
// logs' share follow at once, and config show names the sources.
func TestSetConfig(t *testing.T) {
	cfg := testConfig(t)
	o := &OSD{cfg: cfg, log: cfg.Logger, pgs: map[osdmap.PG]*pg{}, res: newReservations(cfg.RecoveryMaxPGs),
		scrubSlots: slots.New(cfg.MaxScrubs)}
	o.initOptions()
	o.mu.Lock()
	o.setLogLimitLocked()
	o.mu.Unlock()
	if _, limit := o.res.localState(); limit != 1 || o.logLimit.Load() != 3000 {
		t.Fatalf("at start: %d slots, log limit %d", limit, o.logLimit.Load())
	}
	v, err := config.Resolve(OptionNames(),
		config.Layer{Source: config.SourceMon, Values: map[string]string{"osd_max_backfills": "4", "osd_target_pg_log_entries_per_osd": "1000", "osd_recovery_sleep": "0.5",
			"osd_max_scrubs": "3", "osd_client_watch_timeout": "5"}},
		config.Layer{Source: config.SourceFlag, Values: map[string]string{"osd_recovery_max_active": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	o.SetConfig(v)
	opts := o.options()
	if _, limit := o.res.localState(); limit != 4 || opts.RecoveryMaxPGs != 4 {
		t.Errorf("osd_max_backfills 4: %d slots, options %+v", limit, opts)
	}
	if d := o.dumpReservations(); d.Remote.Limit != 4 {
		t.Errorf("osd_max_backfills 4: the members' side has %d slots", d.Remote.Limit)
	}
	if _, limit := o.scrubSlots.State(); limit != 3 || opts.MaxScrubs != 3 {
		t.Errorf("osd_max_scrubs 3: %d scrub slots, options %+v", limit, opts)
	}
	if opts.WatchTimeout != 5*time.Second {
		t.Errorf("osd_client_watch_timeout 5: options %+v", opts)
	}
	if opts.RecoveryMaxPushes != 2 || opts.RecoverySleep.Seconds() != 0.5 || opts.HeartbeatInterval != cfg.HeartbeatInterval {
		t.Errorf("options %+v", opts)
	}
	if o.logLimit.Load() != 1000 {
		t.Errorf("log limit %d, want 1000 (the new budget, no PG held)", o.logLimit.Load())
	}
	r := o.Command(wire.NewCommand("config show"))
	var shown []OptionShow
	if err := json.Unmarshal(r.Data, &shown); err != nil || len(shown) != len(OptionNames()) {
		t.Fatalf("config show: %v %s", err, r.Data)
	}
	want := map[string]OptionShow{
		"osd_max_backfills":       {Name: "osd_max_backfills", Value: "4", Source: "mon", Default: "1", Runtime: true},
		"osd_recovery_max_active": {Name: "osd_recovery_max_active", Value: "2", Source: "cmdline", Default: "4", Runtime: true},
		"osd_heartbeat_interval":  {Name: "osd_heartbeat_interval", Value: "6s", Source: "default", Default: "6s", Runtime: true},
	}
	for _, s := range shown {
		if w, ok := want[s.Name]; ok && s != w {
			t.Errorf("config show: %+v, want %+v", s, w)
		}
	}
}

// A PG in ack primary mode answers ahead of its replicas at most
// osd_ack_primary_max_lag writes, and at most half its log.
func TestAckPrimaryLagLimit(t *testing.T) {
	for _, c := range []struct {
		opt      int
		logLimit int64
		want     int
	}{{64, 3000, 64}, {64, 100, 50}, {1000, 3000, 1000}, {5000, 3000, 1500}, {64, 1, 1}, {0, 3000, 1}} {
		if got := ackPrimaryLagLimit(c.opt, c.logLimit); got != c.want {
			t.Errorf("ackPrimaryLagLimit(%d, %d) = %d, want %d", c.opt, c.logLimit, got, c.want)
		}
	}
}
