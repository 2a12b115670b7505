package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/loadstat"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/objectstore/devemu"
	"github.com/cuttlestore/cuttle/internal/osd"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// OSDConfigInterval is how often a running OSD fetches the central config
// (the monitors push only OSD maps): its map renewal interval, the
// default of osd.Config.MapRenew.
const OSDConfigInterval = 5 * time.Second

// checkOptionNames refuses Flags and Overrides that name no option the
// OSD reads: a typo there would otherwise be ignored.
func checkOptionNames(cfg OSDConfig) error {
	names := osd.OptionNames()
	for _, src := range []struct {
		field  string
		values map[string]string
	}{{"Flags", cfg.Flags}, {"Overrides", cfg.Overrides}} {
		for _, n := range slices.Sorted(maps.Keys(src.values)) {
			if !slices.Contains(names, n) {
				return fmt.Errorf("osd: OSDConfig.%s sets %q, not an option OSDs read", src.field, n)
			}
		}
	}
	return nil
}

// osdOptions resolves the OSD's options from what is known before it
// starts: the schema's defaults, cfg.File's sections for entity ("osd.3",
// then [osd], then [global]), cfg.Flags and cfg.Overrides. It returns
// them with those three layers, which the config.Watcher resolves again
// above each fetch of the central config. A value an option refuses is
// an error, which wraps config.ErrBadValue.
func osdOptions(cfg OSDConfig, entity string) (config.Values, []config.Layer, error) {
	names := osd.OptionNames()
	local := []config.Layer{
		config.FileLayer(cfg.File, entity, names),
		{Source: config.SourceFlag, Values: maps.Clone(cfg.Flags)},
		{Source: config.SourceOverride, Values: maps.Clone(cfg.Overrides)},
	}
	v, err := config.Resolve(names, local...)
	return v, local, err
}

// setOSDOptions sets the fields of ocfg that are options to v's values.
func setOSDOptions(ocfg *osd.Config, v config.Values) {
	o := osd.OptionsFrom(osd.Options{}, v)
	ocfg.HeartbeatInterval, ocfg.HeartbeatGrace = o.HeartbeatInterval, o.HeartbeatGrace
	ocfg.RecoveryMaxPGs, ocfg.RecoveryMaxPushes, ocfg.RecoverySleep = o.RecoveryMaxPGs, o.RecoveryMaxPushes, o.RecoverySleep
	ocfg.ScrubInterval, ocfg.DeepScrubInterval = o.ScrubInterval, o.DeepScrubInterval
	ocfg.LogEntriesPerOSD = o.LogEntriesPerOSD
	ocfg.MaxScrubs, ocfg.WatchTimeout = o.MaxScrubs, o.WatchTimeout
	ocfg.SnapTrimSleep, ocfg.SnapTrimsPerPG = o.SnapTrimSleep, o.SnapTrimsPerPG
	ocfg.AckPrimaryMaxLag = o.AckPrimaryMaxLag
	if ocfg.CacheSize = o.CacheSize; ocfg.CacheSize == 0 {
		ocfg.CacheSize = -1 // none (0 would be the default)
	}
}

// watchOSDConfig hands o its options with their sources (local, resolved
// from layers), then keeps them current with the central config, which
// it fetches through o's own monitor session every OSDConfigInterval,
// until the returned stop is called (before o closes).
func watchOSDConfig(o *osd.OSD, local config.Values, layers []config.Layer, clk clock.Clock, log *slog.Logger) (stop func()) {
	o.SetConfig(local)
	w := &config.Watcher{Names: osd.OptionNames(), Local: layers, Fetch: o.CentralConfig, Apply: o.SetConfig,
		Interval: OSDConfigInterval, Clock: clk, Logger: log.WithGroup("config")}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := w.Run(ctx); err != nil {
			log.Error("central config not followed", "err", err)
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// emulateDevice gives ocfg's store the timing of the device that
// osd_emulate_device names (hdd, ssd; none leaves it), for experiments
// on one machine: the store below keeps the data, the wrapper adds the
// device's time (docs/OSD.md, "Device emulation"). The wrapper's clock is
// the OSD's.
func emulateDevice(ocfg *osd.Config, v config.Values, log *slog.Logger) {
	prof, ok := devemu.ByName(v.String("osd_emulate_device"))
	if !ok || ocfg.Store == nil {
		return
	}
	clk := ocfg.Clock
	if clk == nil {
		clk = clock.Real()
	}
	ocfg.Store = devemu.Wrap(ocfg.Store, prof, clk)
	ocfg.EmulateDevice = prof.Name
	log.Warn("emulating a device: every read and write takes its time", "device", prof.Name,
		"latency", prof.Latency, "bandwidth_mb_s", prof.Bandwidth/1e6)
}

// measureLoad gives ocfg a load sampler (internal/loadstat) for its PG
// stats reports: the host's CPU and memory from /proc, and the disk's
// busy time where the store reports one (an emulated device). A real
// store's disk reads as idle until it reports its own busy time.
func measureLoad(ocfg *osd.Config) {
	clk := ocfg.Clock
	if clk == nil {
		clk = clock.Real()
	}
	var busy func() time.Duration
	if st, ok := ocfg.Store.(interface{ Stats() devemu.Stats }); ok {
		busy = func() time.Duration { return st.Stats().Busy }
	}
	ocfg.Load = loadstat.New(os.DirFS("/proc"), busy, clk.Now).Sample
}

// startCentralTimeout bounds the start's one look at the central config.
const startCentralTimeout = 10 * time.Second

// startCentral resolves the OSD's options again with the central config
// (below the file, flags and overrides, as the watcher does), fetched
// once through a short-lived monitor client. It reports false, and logs
// why, when the monitors do not answer in time or refuse.
func startCentral(ctx context.Context, cfg OSDConfig, self auth.EntityName, monAuth func(auth.EntityName) auth.ClientHandshake,
	layers []config.Layer, log *slog.Logger) (config.Values, bool) {
	mc, err := monc.New(monc.Config{Name: self, Mons: cfg.Mons, Network: cfg.Network, ClientAuth: monAuth,
		Attempt: startCentralTimeout / 2, Clock: cfg.Clock})
	if err != nil {
		log.Warn("central config not read at start", "err", err)
		return config.Values{}, false
	}
	defer mc.Close()
	cctx, cancel := context.WithTimeout(ctx, startCentralTimeout)
	defer cancel()
	r, err := mc.Run(cctx, wire.NewCommand("config get", "who", self.String()))
	if err == nil {
		err = r.Err()
	}
	var central map[string]string
	if err == nil {
		central, err = config.DecodeCentral(r.Data)
	}
	if err != nil {
		log.Warn("central config not read at start; the local values stand until the monitors answer", "err", err)
		return config.Values{}, false
	}
	v, err := config.Resolve(osd.OptionNames(), append([]config.Layer{{Source: config.SourceMon, Values: central}}, layers...)...)
	if err != nil {
		log.Warn("central config refused at start", "err", err)
		return config.Values{}, false
	}
	return v, true
}
