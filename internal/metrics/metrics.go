// Package metrics gives each daemon its own Prometheus registry and
// serves it over HTTP at /metrics. There is no global registry: a
// daemon makes one with NewRegistry, registers its collectors on it and
// passes it down, so tests that run several daemons in one process keep
// their figures apart. Serve also serves Go's profiler at /debug/pprof/.
//
// It knows nothing of what the daemons measure: they define and register
// their own collectors. Registries are Prometheus's, safe for concurrent
// use; Serve runs the HTTP server on goroutines of its own that end when
// its context does.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry returns a registry with the Go runtime and process
// collectors, and constLabels (e.g. daemon="mon.a") on every series the
// daemon registers through Wrap.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Serve serves reg at http://addr/metrics until ctx ends and returns the
// address it listens on (addr may use port 0).
func Serve(ctx context.Context, addr string, reg *prometheus.Registry, log *slog.Logger) (net.Addr, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	return l.Addr(), nil
}
