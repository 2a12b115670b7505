package nbd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Config is a server's configuration.
type Config struct {
	// Exports are the exports served; the first is the default export
	// (the one a client gets for the empty name). Names are unique.
	Exports []Export
	// MaxInFlight bounds the requests one connection runs at once (16);
	// a client sending more waits for replies.
	MaxInFlight int
	// MaxInFlightBytes bounds the READ and WRITE data one connection
	// holds at once (64 MiB); a request larger than it runs alone.
	MaxInFlightBytes int64
	// HandshakeTimeout bounds the handshake (10s, as qemu-nbd's
	// --handshake-limit): a client that has not chosen an export by then
	// is disconnected, so idle connections cannot pile up.
	HandshakeTimeout time.Duration
	// TLS, when set, lets clients upgrade a connection with
	// NBD_OPT_STARTTLS (proto.md "TLS support"): its certificate, and
	// ClientAuth/ClientCAs to require client certificates. Unless
	// TLSOptional, the upgrade is required (the protocol's FORCEDTLS):
	// every other option before it is answered NBD_REP_ERR_TLS_REQD
	// (NBD_OPT_ABORT excepted) and NBD_OPT_EXPORT_NAME closes the
	// connection. Without TLS, STARTTLS is NBD_REP_ERR_POLICY.
	TLS *tls.Config
	// TLSOptional serves clients that do not upgrade too (SELECTIVETLS
	// with no TLS-only export). It needs TLS.
	TLSOptional bool
	// Logger receives connection events (slog.Default() if nil).
	Logger *slog.Logger
}

func (c Config) withDefaults() (Config, error) {
	if len(c.Exports) == 0 {
		return c, errors.New("nbd: no export (EINVAL)")
	}
	seen := map[string]bool{}
	for _, e := range c.Exports {
		if seen[e.Name] {
			return c, fmt.Errorf("nbd: two exports named %q (EINVAL)", e.Name)
		}
		if e.Backend == nil {
			return c, fmt.Errorf("nbd: export %q has no backend (EINVAL)", e.Name)
		}
		seen[e.Name] = true
	}
	if c.TLSOptional && c.TLS == nil {
		return c, errors.New("nbd: TLS optional without a TLS configuration (EINVAL)")
	}
	if c.TLS != nil && len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil && c.TLS.GetConfigForClient == nil {
		return c, errors.New("nbd: the TLS configuration has no certificate (EINVAL)")
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 16
	}
	if c.MaxInFlightBytes <= 0 {
		c.MaxInFlightBytes = 64 << 20
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// Server serves exports on listeners. It is safe for concurrent use.
type Server struct {
	cfg Config
	log *slog.Logger

	mu        sync.Mutex
	closing   bool
	listeners map[net.Listener]bool
	conns     map[*conn]bool
	wg        sync.WaitGroup // the connections' goroutines
}

// NewServer returns a server of cfg's exports.
func NewServer(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, log: cfg.Logger, listeners: map[net.Listener]bool{}, conns: map[*conn]bool{}}, nil
}

// ErrServerClosed is what Serve returns after Shutdown.
var ErrServerClosed = errors.New("nbd: server closed")

// export finds an export by name; the empty name is the default export.
func (s *Server) export(name string) (*Export, bool) {
	if name == "" {
		return &s.cfg.Exports[0], true
	}
	for i := range s.cfg.Exports {
		if s.cfg.Exports[i].Name == name {
			return &s.cfg.Exports[i], true
		}
	}
	return nil, false
}

// Serve accepts connections on l until Shutdown, and returns
// ErrServerClosed then (or the listener's error).
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = true
	s.mu.Unlock()
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			delete(s.listeners, l)
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("nbd: accept: %w", err)
		}
		c := newConn(s, nc)
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Connections is how many clients are connected.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Shutdown stops accepting, stops reading new requests, waits for the
// requests in progress to be answered (or ctx to end), closes the
// connections and flushes every export.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.stop()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			c.cancel() // the requests in progress give up
			c.raw.Close()
		}
		s.mu.Unlock()
		<-done
	}
	var errs []error
	for _, e := range s.cfg.Exports {
		if e.Backend.ReadOnly() {
			continue
		}
		if err := e.Backend.Flush(ctx); err != nil {
			errs = append(errs, fmt.Errorf("nbd: flush export %q: %w", e.Name, err))
		}
	}
	return errors.Join(errs...)
}

// unblock makes a connection's blocked read return now.
func unblock(nc net.Conn) { _ = nc.SetReadDeadline(time.Unix(1, 0)) }
