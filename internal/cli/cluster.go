package cli

import (
	"context"
	"encoding/json"
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
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// DefaultConfPath is where commands look for the cluster configuration
// file when neither --conf nor $CUTTLE_CONF names one: the file of the
// local cluster that `cuttle cluster up` (make run) starts in the
// current directory.
const DefaultConfPath = DefaultClusterDir + "/cuttle.conf"

// clusterFlags say how commands reach a running cluster: the monitors,
// the client's name and keyring, from flags or the configuration file.
type clusterFlags struct {
	conf    string
	monHost string
	name    string
	keyring string
	timeout time.Duration
	debug   bool // the client library's debug log to stderr
	// network reaches the monitors (nil: TCP); in-process tests set it
	// to a simulated network.
	network msgr.Network

	flags       *pflag.FlagSet // the root's persistent flags: was --conf given?
	confDefault string         // --conf's default: $CUTTLE_CONF or DefaultConfPath, from main
	// stderr, if set, is told when no monitor answers for a while
	// (noMonitorYet).
	stderr io.Writer
}

// noMonitorYet is the line a command prints once when no monitor has
// answered it within a couple of seconds, instead of staying silent
// until --timeout; nil without somewhere to print.
func (f *clusterFlags) noMonitorYet() func(addrs []string) {
	if f.stderr == nil {
		return nil
	}
	w, timeout := f.stderr, f.timeout
	return func(addrs []string) {
		fmt.Fprintf(w, "cuttle: no monitor answers at %s yet; retrying until --timeout %v (is the cluster up? cuttle cluster status)\n",
			strings.Join(addrs, ", "), timeout)
	}
}

func (f *clusterFlags) register(root *cobra.Command, defaultConf string) {
	pf := root.PersistentFlags()
	f.flags, f.confDefault = pf, defaultConf
	pf.StringVar(&f.conf, "conf", defaultConf, "cluster configuration file")
	pf.StringVar(&f.monHost, "mon-host", "", "monitors as NAME=HOST:PORT,... (default: mon_host from --conf)")
	pf.StringVar(&f.name, "name", "client.admin", "the entity to act as")
	pf.StringVar(&f.keyring, "keyring", "", "keyring file with the entity's key (default: keyring from --conf)")
	pf.DurationVar(&f.timeout, "timeout", 60*time.Second, "give up on the cluster after this long")
	pf.BoolVar(&f.debug, "debug", false, "log what the client library does (sessions, resends, waits for maps) to stderr")
}

// monClient connects to the monitors named by the flags or the
// configuration file.
func (f *clusterFlags) monClient() (*monc.Client, error) {
	name, err := auth.ParseEntityName(f.name)
	if err != nil {
		return nil, err
	}
	hosts, authMode := f.monHost, "none"
	conf, err := f.loadConf()
	if err != nil {
		return nil, err
	}
	if conf != nil {
		if hosts == "" {
			hosts, _ = conf.Get(f.name, "mon_host")
		}
		if v, ok := conf.Get(f.name, "auth"); ok {
			authMode = v
		}
		if v, ok := conf.Get(f.name, "keyring"); ok && f.keyring == "" {
			f.keyring = v
		}
	}
	mons, err := monc.ParseHosts(hosts)
	if err != nil {
		return nil, err
	}
	cfg := monc.Config{Name: name, Mons: mons, Network: f.network}
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
		ca, err := clientAuth(name, f.keyring)
		if err != nil {
			return nil, err
		}
		cfg.ClientAuth = ca
	}
	return monc.New(cfg)
}

// runMon sends one command and prints its reply: the JSON document for
// --format json, the text for people otherwise. A refused command is an
// error carrying the monitor's status and code.
func runMon(ctx context.Context, f *clusterFlags, out *cmdutil.Output, cmd wire.Command) error {
	c, err := f.monClient()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	r, err := c.Run(ctx, cmd)
	if err != nil {
		return err
	}
	if err := r.Err(); err != nil {
		return named(cmd.Prefix, err)
	}
	return printReply(out, r)
}

func printReply(out *cmdutil.Output, r wire.Reply) error {
	if out.Format == cmdutil.FormatJSON {
		var v any = map[string]string{"status": r.Status}
		if len(r.Data) > 0 {
			if err := json.Unmarshal(r.Data, &v); err != nil {
				return fmt.Errorf("cli: the monitor's reply is not JSON: %w", err)
			}
		}
		return out.Print(v, nil)
	}
	return out.Print(nil, func(w io.Writer) error {
		text := r.Text
		if text == "" {
			text = r.Status
		}
		if text != "" && text[len(text)-1] != '\n' {
			text += "\n"
		}
		_, err := io.WriteString(w, text)
		return err
	})
}

// monCommand returns a cobra command that sends prefix with the
// positional arguments named by argNames (a trailing "..." name takes
// the rest, space-joined) and the given string flags as arguments.
func monCommand(f *clusterFlags, out *cmdutil.Output, use, short, prefix string, argNames []string, flags ...string) *cobra.Command {
	values := make([]string, len(flags))
	minArgs, maxArgs := len(argNames), len(argNames)
	variadic := len(argNames) > 0 && len(argNames[len(argNames)-1]) > 3 && argNames[len(argNames)-1][len(argNames[len(argNames)-1])-3:] == "..."
	optional := 0
	for _, a := range argNames {
		if len(a) > 0 && a[0] == '?' {
			optional++
		}
	}
	minArgs -= optional
	args := cobra.RangeArgs(minArgs, maxArgs)
	if variadic {
		args = cobra.MinimumNArgs(minArgs)
	}
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, pos []string) error {
			wc := wire.NewCommand(prefix)
			for i, v := range pos {
				name := argNames[min(i, len(argNames)-1)]
				name = trimArgName(name)
				if prev, ok := wc.Args[name]; ok && variadic {
					v = prev + " " + v
				}
				wc.Args[name] = v
			}
			for i, fl := range flags {
				if cmd.Flags().Changed(fl) {
					wc.Args[flagArg(fl)] = values[i]
				}
			}
			return runMon(cmd.Context(), f, out, wc)
		},
	}
	for i, fl := range flags {
		c.Flags().StringVar(&values[i], fl, "", "")
	}
	return c
}

func trimArgName(n string) string {
	if len(n) > 0 && n[0] == '?' {
		n = n[1:]
	}
	if len(n) > 3 && n[len(n)-3:] == "..." {
		n = n[:len(n)-3]
	}
	return n
}

// flagArg maps a flag name (min-size) to its argument name (min_size).
func flagArg(fl string) string {
	b := []byte(fl)
	for i := range b {
		if b[i] == '-' {
			b[i] = '_'
		}
	}
	return string(b)
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

// radosConfig is the client configuration the cluster flags give:
// --conf (mon_host, auth, keyring for --name), overridden by --mon-host
// and --keyring; --timeout bounds the connection and every operation.
func (f *clusterFlags) radosConfig() (rados.Config, error) {
	var cfg rados.Config
	conf, err := f.loadConf()
	if err != nil {
		return cfg, err
	}
	if conf != nil {
		c, err := rados.LoadConfig(f.conf, f.name)
		if err != nil && f.monHost == "" {
			return cfg, &shownError{err: err, msg: fmt.Sprintf(
				"no monitors: %s has no mon_host for %s; give --mon-host or add mon_host to it", f.conf, f.name)}
		}
		if err == nil {
			cfg = c
		}
	}
	cfg.Name = f.name
	if f.monHost != "" {
		cfg.Mons = strings.Split(f.monHost, ",")
	}
	if len(cfg.Mons) == 0 {
		return cfg, errors.New("no monitors: give --mon-host or --conf")
	}
	if f.keyring != "" {
		cfg.Keyring = f.keyring
	}
	cfg.OpTimeout = f.timeout
	if say := f.noMonitorYet(); say != nil {
		cfg.MonitorsUnreachable = func(addrs []string, _ time.Duration) { say(addrs) }
	}
	if f.debug {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	cfg.Network = f.network // nil: TCP
	return cfg, nil
}

// dial connects with the configuration of the flags, giving up after
// --timeout.
func (f *clusterFlags) dial(ctx context.Context) (*rados.Conn, error) {
	cfg, err := f.radosConfig()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	conn, err := rados.Connect(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the cluster: %w", err)
	}
	return conn, nil
}
