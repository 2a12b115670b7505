package s3cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/metrics"
	"github.com/cuttlestore/cuttle/internal/s3gw"
	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/rados"
)

// DialFunc connects to the cluster (cmdutil.DialFunc).
type DialFunc = cmdutil.DialFunc

// env is what every `cuttle s3` command shares.
type env struct {
	out    *cmdutil.Output
	dial   DialFunc
	pool   string
	pgNum  uint32
	stderr io.Writer
}

// AddS3Commands adds "cuttle s3", which connects with dial.
func AddS3Commands(root *cobra.Command, out *cmdutil.Output, dial DialFunc) {
	e := &env{out: out, dial: dial, stderr: root.ErrOrStderr()}
	c := &cobra.Command{
		Use:   "s3 COMMAND ...",
		Short: "Run the S3 gateway, manage its users and keys, check its buckets",
		Long: `The S3 gateway (serve) and its users and access keys. Users, keys and
buckets live in the gateway's pool (--pool, default .cuttle.s3), so every
gateway given the same pool serves the same users and buckets. docs/S3.md
says what the gateway supports and how to point aws, boto3, s3cmd or rclone
at it.`,
	}
	c.PersistentFlags().StringVar(&e.pool, "pool", s3gw.DefaultPool, "the gateway's pool (created when missing)")
	c.PersistentFlags().Uint32Var(&e.pgNum, "pg-num", 16, "placement groups of the pool when it is created")
	user := &cobra.Command{Use: "user COMMAND ...", Short: "Create, list, show and remove gateway users"}
	user.AddCommand(userCreateCommand(e), userLsCommand(e), userInfoCommand(e), userRmCommand(e))
	key := &cobra.Command{Use: "key COMMAND ...", Short: "Create and remove users' access keys"}
	key.AddCommand(keyCreateCommand(e), keyRmCommand(e))
	c.AddCommand(serveCommand(e), gcCommand(e), bucketCommand(e), lifecycleCommand(e), user, key)
	root.AddCommand(c)
}

// cliError is a failure told plainly, keeping the library's error for
// errors.Is.
type cliError struct {
	msg string
	err error
}

func (e *cliError) Error() string { return e.msg }
func (e *cliError) Unwrap() error { return e.err }

// failure is the one place the CLI words the gateway's errors, each
// ending with its errno name.
func failure(err error) error {
	errno := ""
	switch {
	case err == nil:
		return nil
	case errors.Is(err, meta.ErrNoSuchUser), errors.Is(err, meta.ErrNoSuchKey), errors.Is(err, meta.ErrNoSuchBucket):
		errno = "ENOENT"
	case errors.Is(err, meta.ErrUserExists):
		errno = "EEXIST"
	case errors.Is(err, meta.ErrUserHasBuckets):
		errno = "ENOTEMPTY"
	case errors.Is(err, meta.ErrInvalidUserName):
		errno = "EINVAL"
	case errors.Is(err, rados.ErrPermission):
		errno = "EACCES"
	case errors.Is(err, rados.ErrTimedOut):
		errno = "ETIMEDOUT"
	default:
		errno = "EIO"
	}
	return &cliError{strings.TrimPrefix(err.Error(), "s3 meta: ") + " (" + errno + ")", err}
}

// open connects and opens the gateway's pool, creating it if need be.
func (e *env) open(ctx context.Context, create bool) (*rados.Conn, *rados.IOContext, error) {
	conn, err := e.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	ioctx, err := conn.OpenIOContext(e.pool)
	if errors.Is(err, rados.ErrPoolNotFound) && create {
		if cerr := conn.CreatePool(ctx, e.pool, &rados.PoolOptions{PGNum: e.pgNum}); cerr != nil && !errors.Is(cerr, rados.ErrExists) {
			conn.Close()
			return nil, nil, fmt.Errorf("create pool %s: %w", e.pool, cerr)
		}
		ioctx, err = conn.OpenIOContext(e.pool)
	}
	if err != nil {
		conn.Close()
		if errors.Is(err, rados.ErrPoolNotFound) {
			return nil, nil, &cliError{fmt.Sprintf("pool %s does not exist: no gateway user was ever created in it (ENOENT); cuttle s3 user create NAME makes it", e.pool), err}
		}
		return nil, nil, err
	}
	return conn, ioctx, nil
}

func (e *env) withStore(cmd *cobra.Command, create bool, f func(ctx context.Context, s *meta.Store) error) error {
	conn, ioctx, err := e.open(cmd.Context(), create)
	if err != nil {
		return err
	}
	defer conn.Close()
	return failure(f(cmd.Context(), meta.NewStore(ioctx, kvConfig(), nil)))
}

// userReport is how a user prints.
type userReport struct {
	User        string      `json:"user"`
	DisplayName string      `json:"display_name"`
	Created     time.Time   `json:"created"`
	Keys        []keyReport `json:"keys"`
}

type keyReport struct {
	User      string `json:"user"`
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
}

func report(u meta.User) userReport {
	r := userReport{User: u.Name, DisplayName: u.DisplayName, Created: u.Created, Keys: []keyReport{}}
	for _, k := range u.Keys {
		r.Keys = append(r.Keys, keyReport{User: u.Name, AccessKey: k.Access, SecretKey: k.Secret})
	}
	return r
}

func (e *env) printUser(u meta.User) error {
	r := report(u)
	return e.out.Print(r, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "user:\t%s\n", r.User)
		fmt.Fprintf(tw, "display name:\t%s\n", r.DisplayName)
		fmt.Fprintf(tw, "created:\t%s\n", r.Created.Format(time.RFC3339))
		for _, k := range r.Keys {
			fmt.Fprintf(tw, "access key:\t%s\n", k.AccessKey)
			fmt.Fprintf(tw, "secret key:\t%s\n", k.SecretKey)
		}
		return tw.Flush()
	})
}

func userCreateCommand(e *env) *cobra.Command {
	var display string
	c := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a user with a new access key, and print the key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withStore(cmd, true, func(ctx context.Context, s *meta.Store) error {
				u, err := s.CreateUser(ctx, args[0], display)
				if err != nil {
					return err
				}
				return e.printUser(u)
			})
		},
	}
	c.Flags().StringVar(&display, "display-name", "", "the user's display name (default NAME)")
	return c
}

func userLsCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "List the users",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withStore(cmd, false, func(ctx context.Context, s *meta.Store) error {
				names, err := s.ListUsers(ctx)
				if err != nil {
					return err
				}
				if names == nil {
					names = []string{}
				}
				return e.out.Print(names, func(w io.Writer) error {
					for _, n := range names {
						fmt.Fprintln(w, n)
					}
					return nil
				})
			})
		},
	}
}

func userInfoCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "info NAME",
		Short: "Show a user and its keys",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withStore(cmd, false, func(ctx context.Context, s *meta.Store) error {
				u, err := s.GetUser(ctx, args[0])
				if err != nil {
					return err
				}
				return e.printUser(u)
			})
		},
	}
}

func userRmCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a user that owns no bucket, and its keys",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withStore(cmd, false, func(ctx context.Context, s *meta.Store) error {
				if err := s.RemoveUser(ctx, args[0]); err != nil {
					return err
				}
				return e.out.Print(map[string]string{"removed": args[0]}, func(io.Writer) error { return nil })
			})
		},
	}
}

func keyCreateCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "create USER",
		Short: "Give a user another access key, and print it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withStore(cmd, false, func(ctx context.Context, s *meta.Store) error {
				k, err := s.CreateKey(ctx, args[0])
				if err != nil {
					return err
				}
				r := keyReport{User: args[0], AccessKey: k.Access, SecretKey: k.Secret}
				return e.out.Print(r, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "access key: %s\nsecret key: %s\n", r.AccessKey, r.SecretKey)
					return err
				})
			})
		},
	}
}

func keyRmCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "rm USER ACCESS_KEY",
		Short: "Remove a user's access key (gateways stop taking it within 10 seconds)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withStore(cmd, false, func(ctx context.Context, s *meta.Store) error {
				if err := s.RemoveKey(ctx, args[0], args[1]); err != nil {
					return err
				}
				return e.out.Print(map[string]string{"removed": args[1]}, func(io.Writer) error { return nil })
			})
		},
	}
}

// serveReport is what serve prints once it listens.
type serveReport struct {
	Addr string `json:"addr"`
	Pool string `json:"pool"`
	TLS  bool   `json:"tls"`
}

func serveCommand(e *env) *cobra.Command {
	var addr, domain, region, metricsAddr string
	given := map[string]string{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run an S3 gateway until interrupted",
		Long: `Serve the S3 API on --addr (default :7480) over the gateway's pool,
creating the pool if it is missing. --domain turns on virtual-host
addressing (bucket.DOMAIN); path-style always works. It prints the
address it listens on, then serves until interrupted.

The gateway also runs the buckets' lifecycle rules: it looks for due
passes at start and every tenth of a lifecycle day (at most 10 minutes);
--lifecycle-day shortens the day to try rules quickly. Its options
(docs/CONFIG.md, read by s3) come from these flags, else the
configuration file's [client.s3], [client] or [global] section.
--metrics-addr serves Prometheus metrics (cuttle_s3_lifecycle_*).

With --cert and --key (PEM files) it serves HTTPS only (TLS 1.2 and
later). --access-log FILE appends a JSON line per request to FILE (-:
stderr), reopened on SIGHUP so logrotate can move it away.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			opts, err := gatewayOptions(cmd, given)
			if err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("daemon", "s3")
			tlsConfig, err := serverTLS(opts.String("s3_ssl_certificate"), opts.String("s3_ssl_private_key"))
			if err != nil {
				return err
			}
			access, err := openAccessLog(ctx, opts.String("s3_access_log"), log)
			if err != nil {
				return err
			}
			conn, ioctx, err := e.open(ctx, true)
			if err != nil {
				return err
			}
			defer conn.Close()
			reg := metrics.NewRegistry()
			gw, err := s3gw.New(s3gw.Config{IO: ioctx, Domain: domain, Region: region, Logger: log, KV: kvConfig(), Metrics: reg, AccessLog: access,
				Lifecycle: s3gw.LifecycleConfig{Day: opts.Duration("s3_lifecycle_day"), MaxOps: opts.Float("s3_lifecycle_max_ops")}})
			if err != nil {
				return err
			}
			if metricsAddr != "" {
				if _, err := metrics.Serve(ctx, metricsAddr, reg, log); err != nil {
					return fmt.Errorf("s3 serve: --metrics-addr: %w", err)
				}
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("s3 serve: listen on %s: %w (EADDRINUSE?); give another --addr", addr, err)
			}
			srv := &http.Server{
				Handler:           gw,
				ReadHeaderTimeout: 30 * time.Second,
				MaxHeaderBytes:    64 << 10,
				BaseContext:       func(net.Listener) context.Context { return ctx },
				TLSConfig:         tlsConfig,
			}
			r := serveReport{Addr: ln.Addr().String(), Pool: e.pool, TLS: tlsConfig != nil}
			if err := e.out.Print(r, func(w io.Writer) error {
				scheme := "http"
				if r.TLS {
					scheme = "https"
				}
				_, err := fmt.Fprintf(w, "s3 gateway listening on %s (pool %s, %s)\n", r.Addr, r.Pool, scheme)
				return err
			}); err != nil {
				return err
			}
			done := make(chan error, 1)
			go func() {
				if tlsConfig != nil {
					done <- srv.ServeTLS(ln, "", "")
					return
				}
				done <- srv.Serve(ln)
			}()
			go collectLoop(ctx, gw, log)
			lc := time.NewTicker(gw.LifecycleCheckInterval())
			defer lc.Stop()
			go gw.LifecycleLoop(ctx, lc.C)
			select {
			case err := <-done:
				return fmt.Errorf("s3 serve: %w", err)
			case <-ctx.Done():
				sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				_ = srv.Shutdown(sctx)
				gw.Quiesce()
				return nil
			}
		},
	}
	c.Flags().StringVar(&addr, "addr", ":7480", "address to listen on")
	c.Flags().StringVar(&domain, "domain", "", "the gateway's DNS name, for virtual-host addressing (bucket.DOMAIN)")
	c.Flags().StringVar(&region, "region", "us-east-1", "the region the gateway reports")
	c.Flags().StringVar(&metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (default: off)")
	addOptionFlags(c.Flags(), given, "s3_")
	return c
}

// gcInterval is how often a serving gateway goes through the garbage list.
const gcInterval = 10 * time.Minute

// collectLoop collects garbage now and every gcInterval until ctx ends.
func collectLoop(ctx context.Context, gw *s3gw.Gateway, log *slog.Logger) {
	t := time.NewTicker(gcInterval)
	defer t.Stop()
	for {
		res, err := gw.CollectGarbage(ctx, s3gw.DefaultGarbageAge)
		if err != nil && ctx.Err() == nil {
			log.Warn("garbage collection", "err", err)
		} else if res.Removed+res.Kept > 0 {
			log.Info("garbage collection", "removed", res.Removed, "kept", res.Kept, "young", res.Young)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func gcCommand(e *env) *cobra.Command {
	var minAge time.Duration
	c := &cobra.Command{
		Use:   "gc",
		Short: "Remove the data that overwrites, deletes and crashed gateways left behind",
		Long: `Go through the gateway's garbage list once (serving gateways do it every
10 minutes): data of records older than --min-age that no object and no
upload in progress names are removed. Lower --min-age only when no
upload is running: a record younger than an upload in flight may be
its data.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			conn, ioctx, err := e.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer conn.Close()
			gw, err := s3gw.New(s3gw.Config{IO: ioctx, KV: kvConfig()})
			if err != nil {
				return err
			}
			res, err := gw.CollectGarbage(cmd.Context(), minAge)
			if err != nil {
				return failure(err)
			}
			r := gcReport{Removed: res.Removed, Kept: res.Kept, Young: res.Young}
			return e.out.Print(r, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "removed %d, kept %d in use, %d younger than %s\n", r.Removed, r.Kept, r.Young, minAge)
				return err
			})
		},
	}
	c.Flags().DurationVar(&minAge, "min-age", s3gw.DefaultGarbageAge, "leave records younger than this")
	return c
}

// gcReport is what gc prints.
type gcReport struct {
	Removed int `json:"removed"`
	Kept    int `json:"kept"`
	Young   int `json:"young"`
}
