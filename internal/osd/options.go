package osd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// The OSD's options are those internal/config's schema says OSDs read
// (config.ForDaemon("osd")). Config's fields give their values at Start;
// SetConfig changes them while the OSD runs, and each takes effect at its
// next use:
//
//	osd_heartbeat_interval, osd_heartbeat_grace  the next heartbeat tick
//	osd_max_backfills        at once, on both sides of the reservations:
//	                         waiting PGs (and members' waiting requests)
//	                         get new slots; those beyond a lowered
//	                         limit finish
//	osd_recovery_max_active  each recovering PG's next push
//	osd_recovery_sleep       the next rest after a push
//	osd_scrub_interval, osd_deep_scrub_interval  the next look for a due scrub
//	osd_target_pg_log_entries_per_osd  at once: each log trims to its
//	                         new share at its PG's next write
//	osd_max_scrubs           at once: waiting scrubs start; scrubs
//	                         beyond a lowered limit finish
//	osd_client_watch_timeout a watch's next ping, reconnect or
//	                         registration (watches.go)
//	osd_snap_trim_sleep      the next rest after a trim (snaptrim.go)
//	osd_pg_max_concurrent_snap_trims  the next object a trimming PG
//	                         takes up
//	osd_ack_primary_max_lag  each PG's next write (acklag.go)
//	osd_emulate_device       at the daemon's start only: it wraps the
//	                         store (internal/objectstore/devemu)
//	osd_cache_size           at the daemon's start only: the store's
//	                         data cache (blockstore.Options.DataCacheBytes)
//
// The OSD never asks for them itself: the daemon's wiring resolves them
// (the schema's default, the central config, the file, flags; a
// config.Watcher polling CentralConfig) and hands them to SetConfig.

// Options are the OSD's options a running OSD reads at each use.
type Options struct {
	HeartbeatInterval time.Duration // osd_heartbeat_interval
	HeartbeatGrace    time.Duration // osd_heartbeat_grace
	RecoveryMaxPGs    int           // osd_max_backfills
	RecoveryMaxPushes int           // osd_recovery_max_active
	RecoverySleep     time.Duration // osd_recovery_sleep
	ScrubInterval     time.Duration // osd_scrub_interval
	DeepScrubInterval time.Duration // osd_deep_scrub_interval
	LogEntriesPerOSD  int           // osd_target_pg_log_entries_per_osd
	MaxScrubs         int           // osd_max_scrubs
	WatchTimeout      time.Duration // osd_client_watch_timeout
	SnapTrimSleep     time.Duration // osd_snap_trim_sleep
	SnapTrimsPerPG    int           // osd_pg_max_concurrent_snap_trims
	AckPrimaryMaxLag  int           // osd_ack_primary_max_lag
	EmulateDevice     string        // osd_emulate_device (read at start)
	CacheSize         int64         // osd_cache_size (read at start)
}

// optionField ties an option of the schema to its field of Options.
type optionField struct {
	name string
	get  func(Options) string               // the field in the schema's canonical form
	set  func(*Options, config.Values) bool // false: the value is out of the field's range
}

func durationField(name string, field func(*Options) *time.Duration, zeroOK bool) optionField {
	return optionField{name: name,
		get: func(o Options) string { return field(&o).String() },
		set: func(o *Options, v config.Values) bool {
			d := v.Duration(name)
			if d < 0 || d == 0 && !zeroOK {
				return false
			}
			*field(o) = d
			return true
		}}
}

func intField(name string, field func(*Options) *int) optionField {
	return optionField{name: name,
		get: func(o Options) string { return strconv.Itoa(*field(&o)) },
		set: func(o *Options, v config.Values) bool {
			n := v.Int(name)
			if n < 1 || n > 1<<31-1 {
				return false
			}
			*field(o) = int(n)
			return true
		}}
}

// optionFields lists every option the OSD reads.
func optionFields() []optionField {
	return []optionField{
		durationField("osd_heartbeat_interval", func(o *Options) *time.Duration { return &o.HeartbeatInterval }, false),
		durationField("osd_heartbeat_grace", func(o *Options) *time.Duration { return &o.HeartbeatGrace }, false),
		intField("osd_max_backfills", func(o *Options) *int { return &o.RecoveryMaxPGs }),
		intField("osd_recovery_max_active", func(o *Options) *int { return &o.RecoveryMaxPushes }),
		durationField("osd_recovery_sleep", func(o *Options) *time.Duration { return &o.RecoverySleep }, true),
		durationField("osd_scrub_interval", func(o *Options) *time.Duration { return &o.ScrubInterval }, false),
		durationField("osd_deep_scrub_interval", func(o *Options) *time.Duration { return &o.DeepScrubInterval }, false),
		intField("osd_target_pg_log_entries_per_osd", func(o *Options) *int { return &o.LogEntriesPerOSD }),
		intField("osd_max_scrubs", func(o *Options) *int { return &o.MaxScrubs }),
		durationField("osd_client_watch_timeout", func(o *Options) *time.Duration { return &o.WatchTimeout }, false),
		durationField("osd_snap_trim_sleep", func(o *Options) *time.Duration { return &o.SnapTrimSleep }, true),
		intField("osd_pg_max_concurrent_snap_trims", func(o *Options) *int { return &o.SnapTrimsPerPG }),
		intField("osd_ack_primary_max_lag", func(o *Options) *int { return &o.AckPrimaryMaxLag }),
		{name: "osd_emulate_device", get: func(o Options) string { return o.EmulateDevice },
			set: func(o *Options, v config.Values) bool { o.EmulateDevice = v.String("osd_emulate_device"); return true }},
		{name: "osd_cache_size", get: func(o Options) string { return strconv.FormatInt(o.CacheSize, 10) },
			set: func(o *Options, v config.Values) bool {
				o.CacheSize = v.Size("osd_cache_size")
				return o.CacheSize >= 0
			}},
	}
}

// EmulatedDevice names the device timing the OSD's store has
// (osd_emulate_device as it was at start: none, hdd or ssd).
func (o *OSD) EmulatedDevice() string { return o.cfg.EmulateDevice }

// OptionNames lists the options of the schema the OSD reads.
func OptionNames() []string {
	var out []string
	for _, f := range optionFields() {
		out = append(out, f.name)
	}
	return out
}

// OptionsFrom returns the options v holds, over base: an option v does
// not hold, or holds out of its field's range, keeps base's value.
func OptionsFrom(base Options, v config.Values) Options {
	for _, f := range optionFields() {
		if _, ok := v.Get(f.name); ok {
			next := base
			if f.set(&next, v) {
				base = next
			}
		}
	}
	return base
}

// options returns the Options of cfg (its defaults already filled in).
func (cfg Config) options() Options {
	return Options{HeartbeatInterval: cfg.HeartbeatInterval, HeartbeatGrace: cfg.HeartbeatGrace,
		RecoveryMaxPGs: cfg.RecoveryMaxPGs, RecoveryMaxPushes: cfg.RecoveryMaxPushes, RecoverySleep: cfg.RecoverySleep,
		ScrubInterval: cfg.ScrubInterval, DeepScrubInterval: cfg.DeepScrubInterval, LogEntriesPerOSD: cfg.LogEntriesPerOSD,
		MaxScrubs: cfg.MaxScrubs, WatchTimeout: cfg.WatchTimeout, SnapTrimSleep: cfg.SnapTrimSleep, SnapTrimsPerPG: cfg.SnapTrimsPerPG,
		AckPrimaryMaxLag: cfg.AckPrimaryMaxLag, EmulateDevice: cfg.EmulateDevice, CacheSize: max(cfg.CacheSize, 0)}
}

// DefaultCacheSize is osd_cache_size's default: 1 GiB, so that three
// OSDs' caches take at most an eighth of a 24 GiB machine (docs/OSD.md,
// "Small overwrites and the data cache").
const DefaultCacheSize = 1 << 30

// values returns opts as config.Values: the options that differ from the
// schema's default come from SourceOverride (set by whoever built the
// Config), the others from SourceDefault.
func (opts Options) values() config.Values {
	set := map[string]string{}
	for _, f := range optionFields() {
		o, ok := config.Lookup(f.name)
		if v := f.get(opts); !ok || v != o.Default {
			set[f.name] = v
		}
	}
	v, _ := config.Resolve(OptionNames(), config.Layer{Source: config.SourceOverride, Values: set})
	return v
}

// initOptions puts the options of o.cfg in effect.
func (o *OSD) initOptions() {
	opts := o.cfg.options()
	shown := opts.values()
	o.opts.Store(&opts)
	o.conf.Store(&shown)
}

// options returns the options in effect.
func (o *OSD) options() Options { return *o.opts.Load() }

// SetConfig applies the OSD's options as the daemon resolved them: each
// takes effect at its next use (see above). Options v does not hold keep
// their values. Safe for concurrent use.
func (o *OSD) SetConfig(v config.Values) {
	o.setMu.Lock()
	defer o.setMu.Unlock()
	old := o.options()
	next := OptionsFrom(old, v)
	next.EmulateDevice = old.EmulateDevice // read at start only: the store is wrapped then
	next.CacheSize = old.CacheSize         // read at start only: the store is opened then
	o.opts.Store(&next)
	shown := o.conf.Load().With(v)
	o.conf.Store(&shown)
	o.sendGrants(o.res.setLimit(next.RecoveryMaxPGs))
	o.scrubSlots.SetLimit(next.MaxScrubs)
	if next.WatchTimeout != old.WatchTimeout {
		o.setWatchTimeout(next.WatchTimeout)
	}
	if next.LogEntriesPerOSD != old.LogEntriesPerOSD {
		o.mu.Lock()
		o.setLogLimitLocked()
		o.mu.Unlock()
	}
	for _, f := range optionFields() {
		if was, now := f.get(old), f.get(next); was != now {
			src, _ := v.Get(f.name)
			o.log.Info("option changed", "name", f.name, "from", was, "to", now, "source", src.Source.String())
		}
	}
}

// CentralConfig returns what the monitors' central config sets for this
// OSD, by option name: from its own section (osd.N), else osd, else
// global, as the monitors resolve them ("config get who=osd.N"). It asks
// through the OSD's own monitor session (the monitors keep one session
// per entity name). A config.Watcher's Fetch.
func (o *OSD) CentralConfig(ctx context.Context) (map[string]string, error) {
	if o.mon == nil {
		return nil, errors.New("osd: not started")
	}
	r, err := o.mon.Run(ctx, wire.NewCommand("config get", "who", o.self.String()))
	if err == nil {
		err = r.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("osd.%d: config get: %w", o.cfg.ID, err)
	}
	out, err := config.DecodeCentral(r.Data)
	if err != nil {
		return nil, fmt.Errorf("osd.%d: %w", o.cfg.ID, err)
	}
	return out, nil
}

// OptionShow is one option in the answer to "config show".
type OptionShow struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	Source  string `json:"source"`
	Default string `json:"default"`
	Runtime bool   `json:"can_update_at_runtime"`
}

// ShowConfig returns the OSD's options: each value in effect, where it
// came from, and its default.
func (o *OSD) ShowConfig() []OptionShow {
	o.setMu.Lock()
	defer o.setMu.Unlock()
	var out []OptionShow
	for _, v := range o.conf.Load().All() {
		s := OptionShow{Name: v.Name, Value: v.Value, Source: v.Source.String()}
		if opt, ok := config.Lookup(v.Name); ok {
			s.Default, s.Runtime = opt.Default, opt.Runtime
		}
		out = append(out, s)
	}
	return out
}

// configShow answers "config show".
func (o *OSD) configShow() wire.Reply {
	opts := o.ShowConfig()
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE\tSOURCE\tDEFAULT")
	for _, s := range opts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Value, s.Source, s.Default)
	}
	_ = tw.Flush()
	return jsonReply(opts, b.String())
}
