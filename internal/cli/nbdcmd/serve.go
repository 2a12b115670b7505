package nbdcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cuttlestore/cuttle/internal/cli/cmdutil"
	"github.com/cuttlestore/cuttle/internal/nbd"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/rbd"
)

// spec is a parsed "POOL/IMAGE[@SNAP]".
type spec struct{ pool, image, snap string }

func (s spec) String() string {
	out := s.pool + "/" + s.image
	if s.snap != "" {
		out += "@" + s.snap
	}
	return out
}

func parseSpec(arg string) (spec, error) {
	var s spec
	pool, rest, ok := strings.Cut(arg, "/")
	if !ok {
		pool, rest = "rbd", arg
	}
	s.pool, s.image = pool, rest
	if i, sn, ok := strings.Cut(rest, "@"); ok {
		s.image, s.snap = i, sn
		if sn == "" {
			return s, fmt.Errorf("bad image spec %q: want [POOL/]IMAGE[@SNAP] (EINVAL)", arg)
		}
	}
	if s.pool == "" || s.image == "" || strings.Contains(s.image, "/") {
		return s, fmt.Errorf("bad image spec %q: want [POOL/]IMAGE[@SNAP] (EINVAL)", arg)
	}
	return s, nil
}

// exportReport describes an export in the startup line.
type exportReport struct {
	Name     string `json:"name"`
	Image    string `json:"image"`
	Size     uint64 `json:"size"`
	ReadOnly bool   `json:"read_only"`
}

// startup is serve's startup line: what is exported, and where.
type startup struct {
	Exports []exportReport `json:"exports"`
	Listen  []string       `json:"listen"`
	// TLS is require, optional or off; ClientCerts says client
	// certificates are required (--tls-ca).
	TLS         string `json:"tls"`
	ClientCerts bool   `json:"tls_client_certs,omitempty"`
}

func serveCommand(out *cmdutil.Output, dial DialFunc) *cobra.Command {
	var listen, names []string
	var readOnly, cache bool
	var all string
	var maxInFlight int
	var shutdownTimeout time.Duration
	var tlsFlags serveTLS
	c := &cobra.Command{
		Use:   "serve [POOL/]IMAGE[@SNAP] ... | --all POOL",
		Short: "Export images (snapshots read-only) over NBD until SIGTERM",
		Long: `Export block images over the NBD protocol. Each image is an export named
IMAGE (IMAGE@SNAP for a snapshot, always read-only) unless --name names
it; --all POOL exports every image of a pool. The server listens on
` + DefaultListen + ` unless --listen says otherwise (repeat it to
listen on several addresses, e.g. --listen unix:///run/cuttle-nbd.sock).
It prints one line (--format json: a JSON document) once it listens,
and runs until SIGINT or SIGTERM, when it answers the requests in
progress, flushes the images and exits. With --tls-cert and --tls-key
clients must upgrade to TLS (NBD_OPT_STARTTLS; nbds:// URIs), or may
with --tls optional; --tls-ca requires client certificates its CAs
signed.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (all == "") == (len(args) == 0) {
				return fmt.Errorf("name the images to export, or --all POOL (EINVAL)")
			}
			if len(names) > 0 && len(names) != len(args) {
				return fmt.Errorf("%d --name for %d images: give one --name per image, in order (EINVAL)", len(names), len(args))
			}
			var specs []spec
			for _, a := range args {
				s, err := parseSpec(a)
				if err != nil {
					return err
				}
				specs = append(specs, s)
			}
			if len(listen) == 0 {
				listen = []string{DefaultListen}
			}
			var addrs []listenAddr
			for _, l := range listen {
				a, err := parseListen(l)
				if err != nil {
					return err
				}
				addrs = append(addrs, a)
			}
			tlsConf, tlsOptional, tlsMode, err := tlsFlags.config()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			conn, err := dial(ctx)
			if err != nil {
				return err
			}
			defer conn.Close()
			if all != "" {
				p, err := rbd.NewPool(conn, all, rbd.Options{})
				if err != nil {
					return failure(err)
				}
				imgs, err := p.List(ctx)
				if err != nil {
					return failure(err)
				}
				if len(imgs) == 0 {
					return fmt.Errorf("pool %q has no image to export; cuttle rbd create makes one (ENOENT)", all)
				}
				for _, name := range imgs {
					specs = append(specs, spec{pool: all, image: name})
				}
			}
			exports, report, err := openExports(ctx, conn, specs, names, readOnly, cache)
			// The images are closed last, after the server's shutdown
			// (or a failure to open one of them): that releases their
			// exclusive locks at once rather than when the watches time
			// out.
			defer func() {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
				defer cancel()
				for _, e := range exports {
					if err := e.Backend.(*nbd.RBD).Close(cctx); err != nil {
						fmt.Fprintf(cmd.ErrOrStderr(), "cuttle: close %s: %v\n", e.Description, err)
					}
				}
			}()
			if err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
			srv, err := nbd.NewServer(nbd.Config{Exports: exports, MaxInFlight: maxInFlight, Logger: log, TLS: tlsConf, TLSOptional: tlsOptional})
			if err != nil {
				return err
			}
			st := startup{Exports: report, TLS: tlsMode, ClientCerts: tlsFlags.ca != ""}
			return serve(ctx, srv, addrs, out, st, shutdownTimeout, log)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&listen, "listen", nil, "address to listen on: tcp://HOST:PORT or unix:///path, repeatable (default "+DefaultListen+")")
	f.StringArrayVar(&names, "name", nil, "export name of each image, in order (default IMAGE, or IMAGE@SNAP)")
	f.BoolVar(&readOnly, "read-only", false, "refuse writes to every export (snapshots always refuse them)")
	f.BoolVar(&cache, "cache", false, "open the images with the write-back cache (rbd_cache's defaults: 32 MiB, write-through until the client's first FLUSH; FUA writes go through)")
	f.StringVar(&all, "all", "", "export every image of this pool")
	f.IntVar(&maxInFlight, "max-in-flight", 16, "requests one connection runs at once")
	f.DurationVar(&shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long SIGTERM waits for requests in progress before closing connections")
	tlsFlags.addFlags(f)
	return c
}

// openExports opens each image and names its export. It returns the
// exports opened even when it fails, for the caller to close.
func openExports(ctx context.Context, conn *rados.Conn, specs []spec, names []string, readOnly, cache bool) ([]nbd.Export, []exportReport, error) {
	pools := map[string]*rbd.Pool{}
	seen := map[string]string{}
	var exports []nbd.Export
	var report []exportReport
	for i, s := range specs {
		p, ok := pools[s.pool]
		if !ok {
			var err error
			if p, err = rbd.NewPool(conn, s.pool, rbd.Options{}); err != nil {
				return exports, nil, failure(err)
			}
			pools[s.pool] = p
		}
		o := rbd.OpenOptions{ReadOnly: readOnly, Snap: s.snap}
		if cache {
			co := rbd.DefaultCacheOptions()
			o.Cache = &co
		}
		img, err := p.Open(ctx, s.image, o)
		if err != nil {
			return exports, nil, failure(err)
		}
		name := s.image
		if s.snap != "" {
			name += "@" + s.snap
		}
		if i < len(names) {
			name = names[i]
		}
		b := nbd.NewRBD(img, readOnly)
		if prev, ok := seen[name]; ok {
			_ = b.Close(ctx)
			return exports, nil, fmt.Errorf("%s and %s would both be export %q: name them apart with --name (EINVAL)", prev, s, name)
		}
		seen[name] = s.String()
		exports = append(exports, nbd.Export{Name: name, Description: s.String(), Backend: b})
		report = append(report, exportReport{Name: name, Image: s.String(), Size: b.Size(), ReadOnly: b.ReadOnly()})
	}
	return exports, report, nil
}

// serve listens, prints the startup line, serves until ctx ends, then
// shuts the server down (flushing the images).
func serve(ctx context.Context, srv *nbd.Server, addrs []listenAddr, out *cmdutil.Output, st startup, timeout time.Duration, log *slog.Logger) error {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for _, a := range addrs {
		l, err := listen(a)
		if err != nil {
			return err
		}
		ls = append(ls, l)
		st.Listen = append(st.Listen, listenAddr{a.network, l.Addr().String()}.String())
	}
	errs := make(chan error, len(ls))
	for _, l := range ls {
		go func() { errs <- srv.Serve(l) }()
	}
	if err := out.Print(st, func(w io.Writer) error {
		for _, e := range st.Exports {
			mode := "read-write"
			if e.ReadOnly {
				mode = "read-only"
			}
			if _, err := fmt.Fprintf(w, "exporting %s as %q (%s, %s)\n", e.Image, e.Name, cmdutil.FormatSize(e.Size), mode); err != nil {
				return err
			}
		}
		_, err := fmt.Fprintf(w, "listening on %s%s\n", strings.Join(st.Listen, ", "), tlsNote(st))
		return err
	}); err != nil {
		return err
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errs:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err == nil && serveErr == nil {
		log.Info("nbd: stopped; every export flushed")
	}
	return errors.Join(serveErr, err)
}

// listen listens on a; a Unix socket file left by a server that is gone
// is removed first.
func listen(a listenAddr) (net.Listener, error) {
	if a.network == "unix" {
		if fi, err := os.Stat(a.addr); err == nil && fi.Mode()&os.ModeSocket != 0 {
			if c, err := net.Dial("unix", a.addr); err == nil {
				c.Close()
				return nil, fmt.Errorf("%s: a server already listens there; stop it or pick another --listen (EADDRINUSE)", a)
			}
			_ = os.Remove(a.addr)
		}
	}
	l, err := net.Listen(a.network, a.addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w; pick another --listen", a, err)
	}
	return l, nil
}

// cliError is a failure told plainly, keeping the library's error for
// errors.Is.
type cliError struct {
	msg string
	err error
}

func (e *cliError) Error() string { return e.msg }
func (e *cliError) Unwrap() error { return e.err }

// failure tells the library's errors as cuttle rbd does: their messages
// already name the image and end with the errno; a missing pool says how
// to list them.
func failure(err error) error {
	msg := strings.TrimPrefix(err.Error(), "rbd: ")
	if errors.Is(err, rados.ErrPoolNotFound) {
		msg += " (ENOENT); cuttle osd pool ls lists the pools"
	}
	return &cliError{msg, err}
}
