package rados

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/config"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Config says how to reach a cluster and who to be. Mons is required;
// every other field has a default. LoadConfig reads one from the cluster
// configuration file.
type Config struct {
	// Mons are the monitors, each "NAME=HOST:PORT" (as mon_host in
	// cuttle.conf, which separates them with commas).
	Mons []string
	// Name is the entity to act as. Default "client.admin".
	Name string
	// Auth is "cephx" or "none". Default: cephx if Key or Keyring is
	// set, else none.
	Auth string
	// Key is the entity's secret (base64, as in a keyring). It takes
	// precedence over Keyring.
	Key string
	// Keyring is the path of a keyring file holding the entity's key.
	Keyring string
	// OpTimeout bounds every operation whose context has no deadline
	// (Ceph's rados_osd_op_timeout). Default 0: no bound.
	OpTimeout time.Duration
	// MonTimeout bounds one attempt of a monitor command at one monitor
	// before the next is tried. Default 5 s.
	MonTimeout time.Duration

	// MonitorsUnreachable, if set, is called once, from a timer's
	// goroutine, when the client has tried for about 2 s (on Clock) to
	// reach a monitor and none has answered: it gets the monitors'
	// addresses and how long it has tried, so that a tool can tell its
	// user it is still retrying (the library never prints).
	MonitorsUnreachable func(addrs []string, waited time.Duration)

	// Logger receives the client's log. Default: discard.
	Logger *slog.Logger
	// Network carries the client's connections. Default: TCP. Tests pass
	// an in-memory network (internal/msgr/memnet).
	Network msgr.Network
	// Clock times retries and ticket renewals. Default: the real clock.
	Clock clock.Clock
	// Seed seeds the client's choices of monitor and its backoff jitter.
	Seed uint64
	// Nonce and Port, when set, are the instance address the client's
	// OSD sessions carry (HOST:PORT/NONCE, what the OSD map's blocklist
	// matches; HOST is where its connections come from). A daemon that
	// reaches the OSDs through a Conn — an MDS — passes its listening
	// messenger's nonce and port, so that the fence the monitors put on
	// the address it advertises stops this Conn's writes too. Default: a
	// random nonce, port 0 (a client).
	Nonce uint64
	Port  uint16

	// ReadPolicy is where reads go (docs/OSD.md, "Reading from
	// replicas"): "" or "pool" for each pool's read_policy, else
	// "primary", "balance" or "score" for every pool (the
	// client_read_policy option). Under balance and score a replica
	// serves a read only when it holds every write the client saw and
	// every member has committed; otherwise the primary does.
	ReadPolicy string
	// CrushLocation is where the client is, as CRUSH names it: "host=h1
	// rack=r1" (Ceph's crush_location). Read policy score prefers OSDs
	// on the same host, then in the same rack.
	CrushLocation string
	// ReadScoreWeights weigh read policy score's terms; zero: the
	// client_read_score_weight_* defaults.
	ReadScoreWeights ScoreWeights
}

// LoadConfig reads the cluster configuration file at path (cuttle.conf,
// as `cuttle mon mkfs --conf-out` writes it) for entity name (""
// means client.admin): mon_host, auth and keyring, from the entity's
// section, its type's or [global].
func LoadConfig(path, name string) (Config, error) {
	if name == "" {
		name = "client.admin"
	}
	f, err := config.Load(path)
	if err != nil {
		return Config{}, fmt.Errorf("rados: %w", err)
	}
	cfg := Config{Name: name}
	hosts, ok := f.Get(name, "mon_host")
	if !ok {
		return Config{}, fmt.Errorf("rados: %s: no mon_host", path)
	}
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			cfg.Mons = append(cfg.Mons, h)
		}
	}
	cfg.Auth, _ = f.Get(name, "auth")
	cfg.Keyring, _ = f.Get(name, "keyring")
	cfg.ReadPolicy, _ = f.Get(name, optReadPolicy)
	cfg.CrushLocation, _ = f.Get(name, optCrushLocation)
	for _, w := range []struct {
		opt string
		to  *float64
	}{{optWeightDistance, &cfg.ReadScoreWeights.Distance}, {optWeightDisk, &cfg.ReadScoreWeights.Disk},
		{optWeightCPU, &cfg.ReadScoreWeights.CPU}, {optWeightMemory, &cfg.ReadScoreWeights.Memory}} {
		if v, ok := f.Get(name, w.opt); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return Config{}, fmt.Errorf("rados: %s: %s = %q: %w", path, w.opt, v, ErrInvalid)
			}
			*w.to = f
		}
	}
	return cfg, nil
}

// settings is a Config checked and with its defaults.
type settings struct {
	Config
	name       auth.EntityName
	mons       []monc.Addr
	secret     auth.Secret
	cephx      bool
	logger     *slog.Logger
	clock      clock.Clock
	netw       msgr.Network
	monTimeout time.Duration
	// The read policy (readpolicy.go).
	readPolicy    osdmap.ReadPolicy
	readPolicySet bool
	location      location
	weights       ScoreWeights
}

func (cfg Config) settings() (settings, error) {
	s := settings{Config: cfg}
	if len(cfg.Mons) == 0 {
		return s, fmt.Errorf("%w: Config.Mons is empty", ErrInvalid)
	}
	mons, err := monc.ParseHosts(strings.Join(cfg.Mons, ","))
	if err != nil {
		return s, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s.mons = mons
	name := cfg.Name
	if name == "" {
		name = "client.admin"
	}
	if s.name, err = auth.ParseEntityName(name); err != nil {
		return s, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	mode := cfg.Auth
	if mode == "" {
		mode = "none"
		if cfg.Key != "" || cfg.Keyring != "" {
			mode = "cephx"
		}
	}
	switch mode {
	case "none":
	case "cephx":
		s.cephx = true
		if s.secret, err = loadSecret(s.name, cfg.Key, cfg.Keyring); err != nil {
			return s, err
		}
	default:
		return s, fmt.Errorf("%w: auth %q (want cephx or none)", ErrInvalid, mode)
	}
	s.logger = cfg.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.clock = cfg.Clock
	if s.clock == nil {
		s.clock = clock.Real()
	}
	s.netw = cfg.Network
	if s.netw == nil {
		s.netw = &msgr.TCP{}
	}
	s.monTimeout = cfg.MonTimeout
	if s.monTimeout <= 0 {
		s.monTimeout = 5 * time.Second
	}
	if s.readPolicy, s.readPolicySet, err = parseReadPolicy(cfg.ReadPolicy); err != nil {
		return s, err
	}
	if s.location, err = parseLocation(cfg.CrushLocation); err != nil {
		return s, err
	}
	s.weights = cfg.ReadScoreWeights
	if s.weights == (ScoreWeights{}) {
		s.weights = defaultWeights()
	}
	if err := s.weights.validate(); err != nil {
		return s, err
	}
	return s, nil
}

func loadSecret(name auth.EntityName, key, keyring string) (auth.Secret, error) {
	if key != "" {
		s, err := auth.ParseSecret(key)
		if err != nil {
			return s, fmt.Errorf("%w: key: %w", ErrInvalid, err)
		}
		return s, nil
	}
	if keyring == "" {
		return auth.Secret{}, errors.New("rados: cephx needs Config.Key or Config.Keyring")
	}
	kr, err := auth.LoadKeyring(keyring)
	if err != nil {
		return auth.Secret{}, fmt.Errorf("rados: %w", err)
	}
	e, ok := kr[name]
	if !ok {
		return auth.Secret{}, fmt.Errorf("rados: keyring %s has no key for %s", keyring, name)
	}
	return e.Key, nil
}
