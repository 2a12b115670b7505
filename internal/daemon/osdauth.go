package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/prometheus/client_golang/prometheus"
)

// osdAuth is an OSD daemon's cephx. The OSD logs in to the monitors as
// osd.N with the key of its keyring, asking for an osd service ticket,
// which it presents to peer OSDs (its monitor client renews it by
// logging in again; osdAuth keeps the newest). The osd service's
// rotating keys, fetched with "auth get-rotating" and refreshed well
// before the newest one stops being enough, go to the Verifier that
// checks the tickets clients and peers present.
//
// osd.Start makes its own monitor client and does not share it, and the
// monitors keep one session per entity name (a second session as osd.N
// resets the first), so each fetch of the rotating keys uses a session
// of its own that lasts one command: the OSD's session is reset once
// per fetch and reconnects.
type osdAuth struct {
	self auth.EntityName
	// service is the daemon's service: "osd", or "mds" for an MDS,
	// which verifies its clients' mds tickets the same way.
	service string
	secret  auth.Secret
	mons    []monc.Addr
	netw    msgr.Network
	clk     clock.Clock
	v       *auth.Verifier
	events  auth.Events
	log     *slog.Logger
	now     func() time.Time

	mu      sync.Mutex
	tickets []auth.ServiceTicket // of the OSD's last login

	refreshFailures prometheus.Counter
	keysValid       prometheus.Gauge
}

// authEvents counts refusals and acceptances in reg, as the monitors do
// (cuttle_auth_refusals_total by reason, cuttle_auth_accepted_total),
// and logs refusals.
func authEvents(reg prometheus.Registerer, log *slog.Logger) auth.Events {
	refusals := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuttle_auth_refusals_total",
		Help: "Authentication and authorization refusals, by reason (unknown entity, bad proof, expired ticket, forbidden, ...)."}, []string{"reason"})
	accepted := prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_auth_accepted_total", Help: "Entities authenticated."})
	reg.MustRegister(refusals, accepted)
	return auth.Events{
		OnRefusal: func(reason auth.Reason, peer auth.EntityName, err error) {
			refusals.WithLabelValues(string(reason)).Inc()
			log.Warn("auth refused", "peer", peer.String(), "reason", string(reason), "err", err)
		},
		OnAuthenticated: func(auth.EntityName) { accepted.Inc() },
	}
}

// newOSDAuth wires cephx for OSD id with its secret, reaching the
// monitors over netw; nothing is sent until start.
func newOSDAuth(id int32, secret auth.Secret, mons []monc.Addr, netw msgr.Network, clk clock.Clock,
	reg prometheus.Registerer, log *slog.Logger) (*osdAuth, error) {
	return newDaemonAuth(auth.EntityName{Type: "osd", ID: fmt.Sprint(id)}, secret, mons, netw, clk, reg, log)
}

// newDaemonAuth wires cephx for the daemon self (osd.N, mds.NAME) of the
// service named by its type, with its secret.
func newDaemonAuth(self auth.EntityName, secret auth.Secret, mons []monc.Addr, netw msgr.Network, clk clock.Clock,
	reg prometheus.Registerer, log *slog.Logger) (*osdAuth, error) {
	a := &osdAuth{self: self, service: self.Type, secret: secret, log: log,
		netw: netw, clk: clk, now: clk.Now}
	a.events = authEvents(reg, log)
	a.refreshFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_" + a.service + "_rotating_keys_refresh_failures_total",
		Help: "Failed fetches of the " + a.service + " service's rotating keys from the monitors."})
	a.keysValid = prometheus.NewGauge(prometheus.GaugeOpts{Name: "cuttle_" + a.service + "_rotating_keys_valid_until_seconds",
		Help: "Unix time until which the rotating keys held verify every ticket the monitors issue."})
	reg.MustRegister(a.refreshFailures, a.keysValid)
	v, err := auth.NewVerifier(auth.VerifierConfig{Service: a.service, Now: a.now, Events: a.events})
	if err != nil {
		return nil, err
	}
	a.v = v
	a.mons = mons
	return a, nil
}

// monHandshake is the OSD's login to a monitor, asking for an osd
// ticket; the ticket is kept when the login completes.
func (a *osdAuth) monHandshake(auth.EntityName) auth.ClientHandshake {
	return &ticketKeeper{MonClient: auth.NewMonClient(auth.MonClientConfig{Name: a.self, Secret: a.secret,
		Services: []string{a.service}, Events: a.events}), a: a}
}

// ticketKeeper is a monitor login that hands the tickets it got to
// osdAuth. It keeps Tickets, so the monitor client renews them too.
type ticketKeeper struct {
	*auth.MonClient
	a *osdAuth
}

func (h *ticketKeeper) Step(in []byte) ([]byte, bool, error) {
	out, done, err := h.MonClient.Step(in)
	if done && err == nil {
		if ts := h.MonClient.Tickets(); len(ts) > 0 {
			h.a.mu.Lock()
			h.a.tickets = ts
			h.a.mu.Unlock()
		}
	}
	return out, done, err
}

// serviceTicket is the osd ticket of the OSD's last login.
func (a *osdAuth) serviceTicket() (auth.ServiceTicket, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range a.tickets {
		if t.Service == a.service {
			return t, true
		}
	}
	return auth.ServiceTicket{}, false
}

// peerHandshake is the OSD's handshake with a peer OSD: the osd ticket
// of its last login.
func (a *osdAuth) peerHandshake(auth.EntityName) auth.ClientHandshake {
	t, ok := a.serviceTicket()
	if !ok {
		return failedHandshake{fmt.Errorf("%s: no %s service ticket from the monitors yet", a.self, a.service)}
	}
	return auth.NewServiceClient(auth.ServiceClientConfig{Ticket: t, Now: a.now, Events: a.events})
}

// serverHandshake authenticates a client or peer by its osd ticket.
func (a *osdAuth) serverHandshake() auth.ServerHandshake { return a.v.NewHandshake() }

// failedHandshake is a client handshake that fails at once.
type failedHandshake struct{ err error }

func (h failedHandshake) Step([]byte) ([]byte, bool, error) { return nil, false, h.err }
func (h failedHandshake) SessionKey() []byte                { return nil }

// fetch asks the monitors for the osd service's rotating keys, in a
// session of its own, and installs them.
func (a *osdAuth) fetch(ctx context.Context) (*auth.RotatingKeys, error) {
	mc, err := monc.New(monc.Config{Name: a.self, Mons: a.mons, Network: a.netw, Clock: a.clk, Logger: a.log,
		ClientAuth: func(auth.EntityName) auth.ClientHandshake {
			return auth.NewMonClient(auth.MonClientConfig{Name: a.self, Secret: a.secret, Events: a.events})
		}})
	if err != nil {
		return nil, err
	}
	defer mc.Close()
	r, err := mc.Run(ctx, wire.NewCommand("auth get-rotating", "service", a.service))
	if err != nil {
		return nil, err
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("auth get-rotating: %w", err)
	}
	keys, err := openServiceRotating(r.Data, a.secret, a.service)
	if err != nil {
		return nil, err
	}
	if err := a.v.SetKeys(keys); err != nil {
		return nil, err
	}
	if until, ok := keysGoodUntil(keys); ok {
		a.keysValid.Set(float64(until.Unix()))
	}
	return keys, nil
}

// openRotating opens the reply of "auth get-rotating": JSON whose
// "sealed" box holds the keys sealed with the daemon's secret.
func openRotating(data []byte, secret auth.Secret) (*auth.RotatingKeys, error) {
	return openServiceRotating(data, secret, "osd")
}

// openServiceRotating is openRotating for service's keys.
func openServiceRotating(data []byte, secret auth.Secret, service string) (*auth.RotatingKeys, error) {
	var v struct {
		Service string `json:"service"`
		Sealed  []byte `json:"sealed"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("auth get-rotating: the reply is not JSON: %w", err)
	}
	if len(v.Sealed) == 0 {
		return nil, errors.New("auth get-rotating: the reply holds no keys")
	}
	keys, err := auth.OpenRotatingKeys(secret[:], v.Sealed)
	if err != nil {
		return nil, fmt.Errorf("auth get-rotating: %w", err)
	}
	if keys.Service() != service {
		return nil, fmt.Errorf("auth get-rotating: got the keys of service %q, not %s", keys.Service(), service)
	}
	return keys, nil
}

// keysGoodUntil is when keys stop being enough. A key seals tickets for
// one period and is accepted for one more, and the monitors hand out the
// next key a period before it starts sealing; so the successor of the
// newest key in the set, which the set lacks, starts sealing one period
// before the newest key expires. ok is false for an empty set.
func keysGoodUntil(keys *auth.RotatingKeys) (time.Time, bool) {
	ks := keys.Keys()
	if len(ks) == 0 {
		return time.Time{}, false
	}
	newest := ks[0].Expires
	for _, k := range ks[1:] {
		if k.Expires.After(newest) {
			newest = k.Expires
		}
	}
	return newest.Add(-keys.Period()), true
}

// Bounds of the rotating keys' refresh schedule.
const (
	minKeysRefresh = 5 * time.Second
	maxKeysRefresh = 15 * time.Minute
	// keysRetry is how soon a failed fetch is tried again.
	keysRetry = 5 * time.Second
)

// refreshAfter is how long to wait before fetching the rotating keys
// again: half the time they remain good for, so a refresh that fails
// has many retries before the keys run out, at most a quarter of their
// period and maxKeysRefresh, at least minKeysRefresh.
func refreshAfter(keys *auth.RotatingKeys, now time.Time) time.Duration {
	until, ok := keysGoodUntil(keys)
	if !ok {
		return minKeysRefresh
	}
	d := min(until.Sub(now)/2, keys.Period()/4, maxKeysRefresh)
	return max(d, minKeysRefresh)
}

// start fetches the rotating keys, trying again every keysRetry until it
// succeeds or ctx ends (the monitors may not run yet), and then keeps
// them fresh in the background until run ends.
func (a *osdAuth) start(ctx, run context.Context) error {
	for {
		keys, err := a.fetchOnce(ctx)
		if err == nil {
			a.log.Info("got the service's rotating keys", "service", a.service, "keys", len(keys.Keys()))
			go a.refresh(run, keys)
			return nil
		}
		if errors.Is(err, errRefused) {
			return err
		}
		a.log.Warn("cannot get the service's rotating keys yet", "service", a.service, "err", err, "retry_in", keysRetry)
		if !a.wait(ctx, keysRetry) {
			return fmt.Errorf("%s: no rotating keys from the monitors: %w", a.self, ctx.Err())
		}
	}
}

// errRefused marks a fetch the monitors refused for good (bad key, no
// such entity, caps), which retrying cannot fix.
var errRefused = errors.New("refused")

// fetchOnce is one fetch bounded by keysRetry twice over. A refusal of
// the login (msgr.ErrRefused: an unknown entity or a wrong key) or of
// the command (EACCES: the caps) is errRefused; anything else (no
// monitor answers, the keys are not made yet) may pass.
func (a *osdAuth) fetchOnce(ctx context.Context) (*auth.RotatingKeys, error) {
	fctx, cancel := context.WithTimeout(ctx, 2*keysRetry)
	defer cancel()
	keys, err := a.fetch(fctx)
	if err == nil {
		return keys, nil
	}
	var werr *wire.Error
	if errors.Is(err, msgr.ErrRefused) || errors.As(err, &werr) && werr.Code == wire.EACCES {
		return nil, fmt.Errorf("%s: %w: %w", a.self, errRefused, err)
	}
	a.refreshFailures.Inc()
	return nil, err
}

// refresh keeps the rotating keys fresh until ctx ends.
func (a *osdAuth) refresh(ctx context.Context, keys *auth.RotatingKeys) {
	wait := refreshAfter(keys, a.now())
	for a.wait(ctx, wait) {
		k, err := a.fetchOnce(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			a.log.Warn("refresh of the rotating keys failed", "err", err, "retry_in", keysRetry)
			wait = keysRetry
			continue
		}
		keys = k
		wait = refreshAfter(keys, a.now())
		a.log.Debug("refreshed the rotating keys", "next_in", wait)
	}
}

// wait waits for d or the end of ctx and reports whether d passed.
func (a *osdAuth) wait(ctx context.Context, d time.Duration) bool {
	t := a.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}
