package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/objectstore/devemu"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/osd"
)

// An OSDConfig that cannot work is refused before anything is opened.
func TestOSDConfigRefused(t *testing.T) {
	mons := []monc.Addr{{Name: "a", Addr: "127.0.0.1:1"}}
	st := memstore.New(memstore.Options{})
	for _, c := range []struct {
		cfg  OSDConfig
		want string
	}{
		{OSDConfig{Mons: mons}, "Data or OSDConfig.Store is required"},
		{OSDConfig{Data: t.TempDir(), Store: st, Mons: mons}, "exclude each other"},
		{OSDConfig{ID: -1, Store: st, Mons: mons}, "bad id -1"},
		{OSDConfig{Store: st}, "Mons is required"},
		{OSDConfig{Store: st, Mons: mons, MemoryTarget: 2 << 50}, "memory target"},
		{OSDConfig{Store: st, Mons: mons, CacheBytes: 2 << 50}, "cache size"},
		{OSDConfig{Store: st, Mons: mons, LogEntries: -1}, "PG log entries"},
		{OSDConfig{Store: st, Mons: mons, Flags: map[string]string{"osd_max_backfils": "2"}}, `Flags sets "osd_max_backfils", not an option`},
		{OSDConfig{Store: st, Mons: mons, Overrides: map[string]string{"mon_max_pg_per_osd": "9"}}, `Overrides sets "mon_max_pg_per_osd"`},
		{OSDConfig{Store: st, Mons: mons, Overrides: map[string]string{"osd_max_backfills": "0"}}, "osd_max_backfills"},
		{OSDConfig{Store: st, Mons: mons, Auth: "kerberos"}, `auth "kerberos"`},
	} {
		if _, err := StartOSD(context.Background(), c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// The defaults fill in what the daemon needs and leave the rest to the
// OSD.
func TestOSDConfigDefaults(t *testing.T) {
	cfg, err := OSDConfig{Store: memstore.New(memstore.Options{}), Mons: []monc.Addr{{Name: "a", Addr: "x:1"}}}.validate()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth != "none" || cfg.Host == "" || cfg.Network == nil || cfg.Clock == nil || cfg.Logger == nil || cfg.Metrics == nil || cfg.Classes == nil {
		t.Errorf("defaults: %+v", cfg)
	}
	if cfg.LogEntries != 0 || cfg.Flags != nil || cfg.Overrides != nil {
		t.Errorf("the OSD's own defaults were overridden: %+v", cfg)
	}
}

// The OSD's options come from the highest source that sets them:
// Overrides over Flags over the file's own section, its type's and
// [global], over the defaults; a refused value is an error at start.
func TestOSDOptions(t *testing.T) {
	file, err := config.Parse([]byte("[global]\nosd recovery sleep = 2s\nosd heartbeat grace = 40s\n" +
		"[osd]\nosd max backfills = 9\nosd recovery max active = 7\nosd heartbeat grace = 30s\nosd max scrubs = 2\nosd emulate device = hdd\n" +
		"[osd.2]\nosd_scrub_interval = 12h\n[osd.3]\nosd_deep_scrub_interval = 1h\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := OSDConfig{File: file,
		Flags:     map[string]string{"osd_max_backfills": "3", "osd_heartbeat_interval": "2s"},
		Overrides: map[string]string{"osd_heartbeat_interval": "1s"}}
	v, layers, err := osdOptions(cfg, "osd.2")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		value  string
		source config.Source
	}{
		"osd_max_backfills":                 {"3", config.SourceFlag},
		"osd_heartbeat_interval":            {"1s", config.SourceOverride},
		"osd_recovery_max_active":           {"7", config.SourceFile},
		"osd_heartbeat_grace":               {"30s", config.SourceFile},
		"osd_recovery_sleep":                {"2s", config.SourceFile},
		"osd_scrub_interval":                {"12h0m0s", config.SourceFile},
		"osd_deep_scrub_interval":           {"168h0m0s", config.SourceDefault},
		"osd_target_pg_log_entries_per_osd": {"100000", config.SourceDefault},
		"osd_max_scrubs":                    {"2", config.SourceFile},
		"osd_client_watch_timeout":          {"30s", config.SourceDefault},
		"osd_snap_trim_sleep":               {"0s", config.SourceDefault},
		"osd_pg_max_concurrent_snap_trims":  {"2", config.SourceDefault},
		"osd_ack_primary_max_lag":           {"64", config.SourceDefault},
		"osd_emulate_device":                {"hdd", config.SourceFile},
		"osd_cache_size":                    {"1073741824", config.SourceDefault},
	}
	for _, got := range v.All() {
		if w := want[got.Name]; got.Value != w.value || got.Source != w.source {
			t.Errorf("%s = %s from %s, want %s from %s", got.Name, got.Value, got.Source, w.value, w.source)
		}
	}
	if len(v.All()) != len(want) {
		t.Errorf("%d options resolved, want %d", len(v.All()), len(want))
	}
	// The layers resolve the same again above any central config.
	again, err := config.Resolve(osd.OptionNames(), append(layers, config.Layer{Source: config.SourceMon,
		Values: map[string]string{"osd_max_backfills": "5", "osd_target_pg_log_entries_per_osd": "5000"}})...)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := again.Get("osd_max_backfills"); b.Value != "3" {
		t.Errorf("the central config won over a flag: %+v", b)
	}
	if l, _ := again.Get("osd_target_pg_log_entries_per_osd"); l.Value != "5000" || l.Source != config.SourceMon {
		t.Errorf("the central config did not win over the default: %+v", l)
	}

	var ocfg osd.Config
	setOSDOptions(&ocfg, v)
	if ocfg.RecoveryMaxPGs != 3 || ocfg.RecoveryMaxPushes != 7 || ocfg.HeartbeatInterval != time.Second ||
		ocfg.HeartbeatGrace != 30*time.Second || ocfg.RecoverySleep != 2*time.Second || ocfg.ScrubInterval != 12*time.Hour ||
		ocfg.DeepScrubInterval != 7*24*time.Hour || ocfg.LogEntriesPerOSD != 100_000 || ocfg.MaxScrubs != 2 || ocfg.WatchTimeout != 30*time.Second {
		t.Errorf("osd.Config: %+v", ocfg)
	}

	// osd_emulate_device wraps the store with the device's timing.
	ocfg.Store = memstore.New(memstore.Options{})
	emulateDevice(&ocfg, v, slog.New(slog.DiscardHandler))
	if st, ok := ocfg.Store.(*devemu.Store); !ok || st.Profile() != devemu.HDD || ocfg.EmulateDevice != "hdd" {
		t.Errorf("osd_emulate_device hdd: store %T, EmulateDevice %q", ocfg.Store, ocfg.EmulateDevice)
	}
	plain := osd.Config{Store: memstore.New(memstore.Options{})}
	none, _, err := osdOptions(OSDConfig{}, "osd.2")
	if err != nil {
		t.Fatal(err)
	}
	if emulateDevice(&plain, none, slog.New(slog.DiscardHandler)); plain.EmulateDevice != "" {
		t.Errorf("osd_emulate_device none: %T %q", plain.Store, plain.EmulateDevice)
	}
	if _, _, err := osdOptions(OSDConfig{Flags: map[string]string{"osd_emulate_device": "tape"}}, "osd.2"); !errors.Is(err, config.ErrBadValue) {
		t.Errorf("osd_emulate_device tape: %v", err)
	}
	if _, _, err := osdOptions(OSDConfig{Flags: map[string]string{"osd_max_backfills": "many"}}, "osd.2"); !errors.Is(err, config.ErrBadValue) {
		t.Errorf("a bad flag value: %v", err)
	}
	bad, err := config.Parse([]byte("[osd.2]\nosd_recovery_sleep = forever\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := osdOptions(OSDConfig{File: bad}, "osd.2"); !errors.Is(err, config.ErrBadValue) {
		t.Errorf("a bad file value: %v", err)
	}
	if _, _, err := osdOptions(OSDConfig{File: bad}, "osd.3"); err != nil {
		t.Errorf("another OSD's section was read: %v", err)
	}
}

// The store caches a quarter of the memory target, at least 32 MiB,
// 256 MiB without a target, or what it is given.
func TestStoreCache(t *testing.T) {
	for _, c := range []struct{ target, asked, want uint64 }{
		{0, 0, 256 << 20},
		{1 << 30, 0, 256 << 20},
		{64 << 20, 0, 32 << 20},
		{4 << 30, 0, 1 << 30},
		{4 << 30, 100 << 20, 100 << 20},
	} {
		if got := storeCache(c.target, c.asked); got != c.want {
			t.Errorf("storeCache(%d, %d) = %d, want %d", c.target, c.asked, got, c.want)
		}
	}
}

// A data directory is checked before the store is opened: it must be a
// complete OSD, the one asked for.
func TestStartOSDChecksDataDir(t *testing.T) {
	mons := []monc.Addr{{Name: "a", Addr: "127.0.0.1:1"}}
	if _, err := StartOSD(context.Background(), OSDConfig{ID: -1, Data: t.TempDir(), Mons: mons}); err == nil ||
		!strings.Contains(err.Error(), "not an OSD's data directory") {
		t.Errorf("an empty directory: %v", err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{osdWhoamiFile: "7\n", osdReadyFile: "ready\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := StartOSD(context.Background(), OSDConfig{ID: 3, Data: dir, Mons: mons}); err == nil ||
		!strings.Contains(err.Error(), "holds osd.7, not osd.3") {
		t.Errorf("another OSD's directory: %v", err)
	}
}

// With cephx the OSD's key comes from the config, a keyring or the data
// directory's keyring, which must hold it.
func TestOSDKey(t *testing.T) {
	key := auth.NewSecret()
	if got, err := osdKey(OSDConfig{ID: 2, Key: &key}); err != nil || got != key {
		t.Errorf("given key: %v", err)
	}
	if _, err := osdKey(OSDConfig{ID: 2}); err == nil || !strings.Contains(err.Error(), "needs a key") {
		t.Errorf("no key anywhere: %v", err)
	}
	dir := t.TempDir()
	kr := auth.Keyring{{Type: "osd", ID: "2"}: {Key: key}}
	if err := auth.SaveKeyring(filepath.Join(dir, KeyringFile), kr); err != nil {
		t.Fatal(err)
	}
	if got, err := osdKey(OSDConfig{ID: 2, Data: dir}); err != nil || got != key {
		t.Errorf("the data directory's keyring: %v", err)
	}
	if _, err := osdKey(OSDConfig{ID: 3, Data: dir}); err == nil || !strings.Contains(err.Error(), "has no key for it") {
		t.Errorf("a keyring without osd.3: %v", err)
	}
	if _, err := osdKey(OSDConfig{ID: 2, Data: dir, KeyringPath: filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing keyring was read")
	}
}

// MkfsOSD makes a directory ReadOSDDir accepts and CheckOSDDir refuses.
func TestMkfsOSD(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "osd")
	if err := MkfsOSD(context.Background(), dir, MinOSDSize-OSDAllocUnit, 4); err == nil {
		t.Error("a store below the minimum size was made")
	}
	if err := MkfsOSD(context.Background(), dir, MinOSDSize, 4); err != nil {
		t.Fatal(err)
	}
	if id, err := ReadOSDDir(dir); err != nil || id != 4 {
		t.Errorf("ReadOSDDir = %d, %v", id, err)
	}
	if err := CheckOSDDir(dir); err == nil {
		t.Error("CheckOSDDir accepts a made OSD")
	}
	if fi, err := os.Stat(filepath.Join(dir, OSDBlockFile)); err != nil || fi.Size() != MinOSDSize {
		t.Errorf("data file: %v, %v", fi, err)
	}
}
