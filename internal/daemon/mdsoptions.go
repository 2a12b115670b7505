package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"maps"

	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// mdsLocalLayers are the sources of an MDS's options known before it
// reaches the monitors: cfg.File's sections for entity ("mds.a", then
// [mds], then [global]), cfg.Flags and cfg.Overrides.
func mdsLocalLayers(cfg MDSConfig, entity string) []config.Layer {
	names := mdsOptionNames()
	return []config.Layer{
		config.FileLayer(cfg.File, entity, names),
		{Source: config.SourceFlag, Values: maps.Clone(cfg.Flags)},
		{Source: config.SourceOverride, Values: maps.Clone(cfg.Overrides)},
	}
}

// mdsOptions resolves the MDS's options from the local layers above the
// central config (central: what `config get who=mds.NAME` answered; nil
// when it is not known) and the defaults. A value the schema refuses is
// skipped (the source below it stands) and reported in the error, which
// wraps config.ErrBadValue; the Values are complete either way.
func mdsOptions(local []config.Layer, central map[string]string) (config.Values, error) {
	layers := local
	if central != nil {
		layers = append([]config.Layer{{Source: config.SourceMon, Values: central}}, local...)
	}
	return config.Resolve(mdsOptionNames(), layers...)
}

// fetchCentral asks the monitors, through run, for the central config
// of who (`config get`), for at most startCentralTimeout.
func fetchCentral(ctx context.Context, run func(context.Context, wire.Command) (wire.Reply, error), who string) (map[string]string, error) {
	cctx, cancel := context.WithTimeout(ctx, startCentralTimeout)
	defer cancel()
	r, err := run(cctx, wire.NewCommand("config get", "who", who))
	if err == nil {
		err = r.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("config get who=%s: %w", who, err)
	}
	return config.DecodeCentral(r.Data)
}

// mdsCentralOptions resolves the MDS's options again with the central
// config, fetched once through run as the daemon starts. Without an
// answer (logged) the local values stand: they are returned as they
// were.
func mdsCentralOptions(ctx context.Context, run func(context.Context, wire.Command) (wire.Reply, error), who string,
	local []config.Layer, localValues config.Values, log *slog.Logger) config.Values {
	central, err := fetchCentral(ctx, run, who)
	if err != nil {
		log.Warn("central config not read at start; the local values stand", "err", err)
		return localValues
	}
	v, err := mdsOptions(local, central)
	if err != nil {
		log.Warn("central config value refused; the value below it stands", "err", err)
	}
	return v
}
