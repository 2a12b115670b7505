package config

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
)

// Watcher keeps a running daemon's options current with the central
// config. Every Interval it fetches what the monitors hold for the
// daemon, resolves it with the sources that do not change while the
// daemon runs (Local: its file's and its flags' values), and hands the
// result to Apply whenever it differs from what Apply was last given.
//
// The monitors offer subscriptions to the OSD map only, so the Watcher
// polls: a change reaches the daemon within Interval (Ceph's monitors
// push config changes to the daemons instead). While the monitors cannot
// be reached the values in effect stay.
type Watcher struct {
	// Names are the options the daemon reads.
	Names []string
	// Local are the layers above the central config (SourceFile,
	// SourceFlag).
	Local []Layer
	// Fetch returns the central config as it applies to the daemon:
	// option name to value, from the daemon's own section, its type's or
	// global, as the monitors resolve them. It is given at most Interval.
	Fetch func(ctx context.Context) (map[string]string, error)
	// Apply receives the resolved values, the first time and after each
	// change. It runs on Run's goroutine.
	Apply func(Values)
	// Interval is how often the central config is fetched.
	Interval time.Duration
	Clock    clock.Clock  // default clock.Real()
	Logger   *slog.Logger // default: discard
}

// Run fetches at once, then every Interval, until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	if w.Fetch == nil || w.Apply == nil || w.Interval <= 0 {
		return errors.New("config: a Watcher needs Fetch, Apply and an Interval")
	}
	clk, log := w.Clock, w.Logger
	if clk == nil {
		clk = clock.Real()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var st watchState
	for {
		fctx, cancel := context.WithTimeout(ctx, w.Interval)
		central, err := w.Fetch(fctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if v, ok := st.step(w, central, err, log); ok {
			w.Apply(v)
		}
		t := clk.NewTimer(w.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// watchState is what a Watcher remembers between fetches.
type watchState struct {
	applied  bool
	last     Values
	failing  bool   // the last fetch failed
	rejected string // the bad values last logged, so each is logged once
}

// step takes one fetch's result and returns the values to apply, if they
// changed. It logs a failure streak's start and end, and bad central
// values once each.
func (st *watchState) step(w *Watcher, central map[string]string, err error, log *slog.Logger) (Values, bool) {
	if err != nil {
		if !st.failing {
			log.Warn("central config not fetched; the values in effect stay", "err", err)
		}
		st.failing = true
		return Values{}, false
	}
	if st.failing {
		log.Info("central config fetched again")
		st.failing = false
	}
	v, err := Resolve(w.Names, append([]Layer{{Source: SourceMon, Values: central}}, w.Local...)...)
	if err != nil && !errors.Is(err, ErrBadValue) {
		log.Error("options not resolved", "err", err) // a name not in the schema: a bug
		return Values{}, false
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg != st.rejected && msg != "" {
		log.Warn("central config values ignored", "err", err)
	}
	st.rejected = msg
	if st.applied && v.Equal(st.last) {
		return Values{}, false
	}
	st.applied, st.last = true, v
	return v, true
}
