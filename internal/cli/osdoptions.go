package cli

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/osd"
	"github.com/spf13/pflag"
)

// osdConfigInterval is how often a running OSD fetches the central config
// (the monitors push only OSD maps): its map renewal interval, the
// default of osd.Config.MapRenew.
const osdConfigInterval = 5 * time.Second

// optionFlag is a flag that sets an option of the schema: its type, its
// default and its help come from the option, and a value given is checked
// against it as it is parsed.
type optionFlag struct {
	opt   config.Option
	value string            // shown as the flag's value
	given map[string]string // option name to the canonical value given
}

func (f *optionFlag) String() string { return f.value }
func (f *optionFlag) Type() string   { return f.opt.Type.String() }
func (f *optionFlag) Set(s string) error {
	v, err := f.opt.Parse(s)
	if err != nil {
		return err
	}
	f.value, f.given[f.opt.Name] = v, v
	return nil
}

// addOptionFlags adds a flag for each option of the schema daemons of
// type typ read that names one; the values given land in given.
func addOptionFlags(fl *pflag.FlagSet, typ string, given map[string]string) {
	for _, o := range config.ForDaemon(typ) {
		if o.Flag == "" {
			continue
		}
		fl.Var(&optionFlag{opt: o, value: o.Default, given: given}, o.Flag, o.Desc+" (option "+o.Name+")")
	}
}

// osdLocalOptions resolves the OSD's options from what is known before it
// starts: the schema's defaults, the configuration file ([osd.N], [osd],
// [global]) and the flags given. It returns them with the two layers,
// which the Watcher resolves again above each fetch of the central config.
func osdLocalOptions(file *config.File, entity string, flags map[string]string) (config.Values, []config.Layer, error) {
	local := []config.Layer{config.FileLayer(file, entity, osd.OptionNames()), {Source: config.SourceFlag, Values: flags}}
	v, err := config.Resolve(osd.OptionNames(), local...)
	return v, local, err
}

// setOSDOptions sets the fields of cfg that are options.
func setOSDOptions(cfg *osd.Config, v config.Values) {
	o := osd.OptionsFrom(osd.Options{}, v)
	cfg.HeartbeatInterval, cfg.HeartbeatGrace = o.HeartbeatInterval, o.HeartbeatGrace
	cfg.RecoveryMaxPGs, cfg.RecoveryMaxPushes, cfg.RecoverySleep = o.RecoveryMaxPGs, o.RecoveryMaxPushes, o.RecoverySleep
	cfg.ScrubInterval, cfg.DeepScrubInterval = o.ScrubInterval, o.DeepScrubInterval
	cfg.LogEntriesPerOSD = o.LogEntriesPerOSD
}

// watchOSDConfig hands o its options with their sources, then keeps them
// current with the central config until the returned stop is called
// (before o closes).
func watchOSDConfig(ctx context.Context, o *osd.OSD, local config.Values, layers []config.Layer, log *slog.Logger) (stop func()) {
	o.SetConfig(local)
	w := &config.Watcher{Names: osd.OptionNames(), Local: layers, Fetch: o.CentralConfig, Apply: o.SetConfig,
		Interval: osdConfigInterval, Logger: log.WithGroup("config")}
	ctx, cancel := context.WithCancel(ctx)
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
