package clusterconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// DefaultClusterDir is where `cuttle cluster up` keeps a local cluster
// (DefaultConfPath is the configuration file in it).
const DefaultClusterDir = "./.cuttle"

// DefaultConfPath is where commands look for the cluster configuration
// file when neither --conf nor $CUTTLE_CONF names one: the file of the
// local cluster that `cuttle cluster up` (make run) starts in the
// current directory.
const DefaultConfPath = DefaultClusterDir + "/cuttle.conf"

// Flags say how commands reach a running cluster: the monitors, the
// client's name and keyring, from flags or the configuration file.
// [Flags.Register] binds them to the root's persistent flags; commands
// that run a cluster of their own (cluster up, status) fill one in
// directly.
type Flags struct {
	Conf    string        // --conf: the cluster configuration file
	MonHost string        // --mon-host: NAME=HOST:PORT,... (default: mon_host from Conf)
	Name    string        // --name: the entity to act as
	Keyring string        // --keyring (default: keyring from Conf)
	Timeout time.Duration // --timeout: give up on the cluster after this long
	Debug   bool          // --debug: the client library's debug log to stderr
	// Network reaches the monitors (nil: TCP); in-process tests set it
	// to a simulated network.
	Network msgr.Network
	// Stderr, if set, is told when no monitor answers for a while
	// (noMonitorYet).
	Stderr io.Writer

	flags       *pflag.FlagSet // the root's persistent flags: was --conf given?
	confDefault string         // --conf's default: $CUTTLE_CONF or DefaultConfPath, from main
}

// noMonitorYet is the line a command prints once when no monitor has
// answered it within a couple of seconds, instead of staying silent
// until --timeout; nil without somewhere to print.
func (f *Flags) noMonitorYet() func(addrs []string) {
	if f.Stderr == nil {
		return nil
	}
	w, timeout := f.Stderr, f.Timeout
	return func(addrs []string) {
		fmt.Fprintf(w, "cuttle: no monitor answers at %s yet; retrying until --timeout %v (is the cluster up? cuttle cluster status)\n",
			strings.Join(addrs, ", "), timeout)
	}
}

// Register adds the cluster flags to root's persistent flags (--conf,
// --mon-host, --name, --keyring, --timeout, --debug), binding them to f;
// defaultConf is --conf's default.
func (f *Flags) Register(root *cobra.Command, defaultConf string) {
	pf := root.PersistentFlags()
	f.flags, f.confDefault = pf, defaultConf
	pf.StringVar(&f.Conf, "conf", defaultConf, "cluster configuration file")
	pf.StringVar(&f.MonHost, "mon-host", "", "monitors as NAME=HOST:PORT,... (default: mon_host from --conf)")
	pf.StringVar(&f.Name, "name", "client.admin", "the entity to act as")
	pf.StringVar(&f.Keyring, "keyring", "", "keyring file with the entity's key (default: keyring from --conf)")
	pf.DurationVar(&f.Timeout, "timeout", 60*time.Second, "give up on the cluster after this long")
	pf.BoolVar(&f.Debug, "debug", false, "log what the client library does (sessions, resends, waits for maps) to stderr")
}

// MonClient connects to the monitors named by the flags or the
// configuration file.
func (f *Flags) MonClient() (*monc.Client, error) {
	name, err := auth.ParseEntityName(f.Name)
	if err != nil {
		return nil, err
	}
	hosts, authMode := f.MonHost, "none"
	conf, err := f.LoadConf()
	if err != nil {
		return nil, err
	}
	if conf != nil {
		if hosts == "" {
			hosts, _ = conf.Get(f.Name, "mon_host")
		}
		if v, ok := conf.Get(f.Name, "auth"); ok {
			authMode = v
		}
		if v, ok := conf.Get(f.Name, "keyring"); ok && f.Keyring == "" {
			f.Keyring = v
		}
	}
	mons, err := monc.ParseHosts(hosts)
	if err != nil {
		return nil, err
	}
	cfg := monc.Config{Name: name, Mons: mons, Network: f.Network}
	if say := f.noMonitorYet(); say != nil {
		cfg.Unreachable = func(mons []monc.Addr, _ time.Duration) {
			addrs := make([]string, len(mons))
			for i, m := range mons {
				addrs[i] = m.Addr
			}
			say(addrs)
		}
	}
	if authMode != "none" {
		ca, err := clientAuth(name, f.Keyring)
		if err != nil {
			return nil, err
		}
		cfg.ClientAuth = ca
	}
	return monc.New(cfg)
}

// clientAuth returns the cephx-style handshake for name with its key
// from the keyring file.
func clientAuth(name auth.EntityName, keyringPath string) (func(auth.EntityName) auth.ClientHandshake, error) {
	if keyringPath == "" {
		return nil, fmt.Errorf("the cluster requires authentication: give --keyring, or keyring in --conf")
	}
	kr, err := auth.LoadKeyring(keyringPath)
	if err != nil {
		return nil, err
	}
	e, ok := kr[name]
	if !ok {
		return nil, fmt.Errorf("keyring %s has no key for %s", keyringPath, name)
	}
	return func(auth.EntityName) auth.ClientHandshake {
		return auth.NewMonClient(auth.MonClientConfig{Name: name, Secret: e.Key})
	}, nil
}

// RadosConfig is the client configuration the cluster flags give:
// --conf (mon_host, auth, keyring for --name), overridden by --mon-host
// and --keyring; --timeout bounds the connection and every operation.
func (f *Flags) RadosConfig() (rados.Config, error) {
	var cfg rados.Config
	conf, err := f.LoadConf()
	if err != nil {
		return cfg, err
	}
	if conf != nil {
		c, err := rados.LoadConfig(f.Conf, f.Name)
		if err != nil && f.MonHost == "" {
			return cfg, Shown(fmt.Sprintf(
				"no monitors: %s has no mon_host for %s; give --mon-host or add mon_host to it", f.Conf, f.Name), err)
		}
		if err == nil {
			cfg = c
		}
	}
	cfg.Name = f.Name
	if f.MonHost != "" {
		cfg.Mons = strings.Split(f.MonHost, ",")
	}
	if len(cfg.Mons) == 0 {
		return cfg, errors.New("no monitors: give --mon-host or --conf")
	}
	if f.Keyring != "" {
		cfg.Keyring = f.Keyring
	}
	cfg.OpTimeout = f.Timeout
	if say := f.noMonitorYet(); say != nil {
		cfg.MonitorsUnreachable = func(addrs []string, _ time.Duration) { say(addrs) }
	}
	if f.Debug {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	cfg.Network = f.Network // nil: TCP
	return cfg, nil
}

// Dial connects with the configuration of the flags, giving up after
// --timeout.
func (f *Flags) Dial(ctx context.Context) (*rados.Conn, error) {
	cfg, err := f.RadosConfig()
	if err != nil {
		return nil, err
	}
	if p, ok := cmdutil.ReadPolicy(ctx); ok {
		cfg.ReadPolicy = p
	}
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	conn, err := rados.Connect(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the cluster: %w", err)
	}
	return conn, nil
}
