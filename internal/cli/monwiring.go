package cli

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mon"
	"github.com/cuttlestore/cuttle/internal/mon/authmon"
	"github.com/cuttlestore/cuttle/internal/mon/configmon"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/osdmon"
	"github.com/cuttlestore/cuttle/internal/mon/pgmon"
	"github.com/prometheus/client_golang/prometheus"
)

// monServices are the replicated services a monitor runs (the auth
// database is added by addAuthService), and the commands that create a
// new cluster's state: the first OSD map, with an empty hierarchy under
// root "default" and the rule replicated_rule. The PG statistics read
// the OSD map as applied.
func monServices(fsid string, log *slog.Logger) ([]moncmd.Service, []moncmd.Command, error) {
	conf := configmon.New(log.WithGroup("config"))
	osd, err := osdmon.New(osdmon.Config{Options: conf.View("mon"), Logger: log.WithGroup("osdmap")})
	if err != nil {
		return nil, nil, err
	}
	pgs := pgmon.New(pgmon.Config{Map: osd.Map, Logger: log.WithGroup("pgmap")})
	return []moncmd.Service{osd, pgs, conf}, []moncmd.Command{moncmd.New("osdmap create", "fsid", fsid)}, nil
}

// monKeys is the monitor's key server: the auth database's, where every
// monitor (mon.a, mon.b, ...) authenticates with the shared monitor key.
type monKeys struct{ ks auth.KeyServer }

func (k monKeys) Secret(name auth.EntityName) (auth.Secret, auth.Caps, error) {
	if name.Type == "mon" {
		name = monKeyName
	}
	return k.ks.Secret(name)
}

// monRotationPeriod is how long each rotating service key seals tickets;
// the Authority and the auth database agree on it.
const monRotationPeriod = time.Hour

// addAuthService adds the auth database (authmon) to the monitor's
// services and, with cephx, turns on authentication.
func addAuthService(cfg *mon.Config, mode, id, data string, reg prometheus.Registerer, log *slog.Logger) error {
	if mode != "cephx" {
		svc, err := authmon.New(authmon.Config{Logger: log})
		if err != nil {
			return err
		}
		cfg.Services = append(cfg.Services, svc)
		return nil
	}
	return monAuth(cfg, id, data, reg, log)
}

// monAuth turns on authentication for a monitor: peers authenticate with
// the keys of the auth database, monitors with the shared monitor key,
// and commands are checked against the caller's mon caps. The keyring in
// the data directory seeds the database at the cluster's first start
// (the first leader imports it) and answers only until then, so the
// monitors can authenticate to each other and elect that leader.
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
	keys := authmon.NewKeyServer(kr)
	authority, err := auth.NewAuthority(auth.AuthorityConfig{Keys: monKeys{keys}, Now: time.Now, Events: events,
		RotationPeriod: monRotationPeriod})
	if err != nil {
		return err
	}
	svc, err := authmon.New(authmon.Config{Logger: log, Keys: keys, Authority: authority, Seed: kr,
		RotationPeriod: monRotationPeriod})
	if err != nil {
		return fmt.Errorf("mon.%s: %w", id, err)
	}
	cfg.Services = append(cfg.Services, svc)
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
		if strings.HasPrefix(cmd.Prefix, "auth ") && cmd.Prefix != "auth get-rotating" {
			// (get-rotating hands a daemon only its own service's
			// keys, sealed with its own secret: reading is enough.)
			// The auth commands read and write secrets: they need x
			// as well, as in Ceph (rx to read, rwx to change).
			access |= auth.AccessRead | auth.AccessExec
		}
		return cc.Check(auth.Request{Service: "mon", Access: access, Command: cmd.Prefix})
	}
	return nil
}
