package cli

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mon"
	"github.com/cuttlestore/cuttle/internal/mon/configmon"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/prometheus/client_golang/prometheus"
)

// monServices are the replicated services a monitor runs.
func monServices(log *slog.Logger) []moncmd.Service {
	return []moncmd.Service{configmon.New(log.WithGroup("config"))}
}

// monKeys is the monitor's key server: its keyring, where every monitor
// (mon.a, mon.b, ...) authenticates with the shared monitor key.
type monKeys struct{ kr auth.Keyring }

func (k monKeys) Secret(name auth.EntityName) (auth.Secret, auth.Caps, error) {
	if name.Type == "mon" {
		name = monKeyName
	}
	e, ok := k.kr[name]
	if !ok {
		return auth.Secret{}, nil, fmt.Errorf("%w: %s", auth.ErrUnknownEntity, name)
	}
	return e.Key, e.Caps, nil
}

// monAuth turns on authentication for a monitor: peers authenticate with
// the keys in its data directory, monitors with the shared monitor key,
// and commands are checked against the caller's mon caps.
func monAuth(cfg *mon.Config, id, data string, reg prometheus.Registerer, log *slog.Logger) error {
	kr, err := auth.LoadKeyring(filepath.Join(data, keyringFile))
	if err != nil {
		return fmt.Errorf("mon.%s: %w", id, err)
	}
	monKey, ok := kr[monKeyName]
	if !ok {
		return fmt.Errorf("mon.%s: keyring has no %s key", id, monKeyName)
	}
	refusals := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuttle_auth_refusals_total",
		Help: "Authentication and authorization refusals, by reason (unknown entity, bad proof, expired ticket, forbidden, ...)."}, []string{"reason"})
	accepted := prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_auth_accepted_total", Help: "Entities authenticated."})
	reg.MustRegister(refusals, accepted)
	events := auth.Events{
		OnRefusal: func(reason auth.Reason, peer auth.EntityName, err error) {
			refusals.WithLabelValues(string(reason)).Inc()
			log.Warn("auth refused", "peer", peer.String(), "reason", string(reason), "err", err)
		},
		OnAuthenticated: func(auth.EntityName) { accepted.Inc() },
	}
	authority, err := auth.NewAuthority(auth.AuthorityConfig{Keys: monKeys{kr}, Now: time.Now, Events: events})
	if err != nil {
		return err
	}
	self := auth.EntityName{Type: "mon", ID: id}
	cfg.ServerAuth = authority.NewHandshake
	cfg.ClientAuth = func(auth.EntityName) auth.ClientHandshake {
		return auth.NewMonClient(auth.MonClientConfig{Name: self, Secret: monKey.Key})
	}
	cfg.Authorize = func(peer auth.EntityName, caps auth.Caps, cmd moncmd.Command, write bool) error {
		cc, err := auth.NewCapChecker(peer, caps, events)
		if err != nil {
			return err
		}
		access := auth.AccessRead
		if write {
			access = auth.AccessWrite
		}
		return cc.Check(auth.Request{Service: "mon", Access: access, Command: cmd.Prefix})
	}
	return nil
}
