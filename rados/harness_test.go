package rados_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/cls"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
	"github.com/cuttlestore/cuttle/rados"
)

// The scripted cluster the client's tests talk to: one monitor that
// serves OSD maps and a few commands, and OSDs that follow the protocol
// contract of docs/RADOS.md (acting primary check, ESTALE, applied and
// committed replies, resends answered once) over one shared memstore,
// as if replication were perfect. Tests script it: new epochs known to
// the OSDs before the monitor publishes them, per-op actions (ignore,
// apply without replying, drop the session, answer ESTALE, reply twice),
// and held commits. It runs on memnet, inside synctest bubbles or on
// real time (the Examples).

// action is what a scripted OSD does with one op.
type action int

const (
	actServe         action = iota // handle it as the contract says
	actIgnore                      // receive it and do nothing
	actApplyNoReply                // apply a write, send no reply
	actDropBefore                  // close the client's session without handling it
	actApplyThenDrop               // apply a write, then close the session without replying
	actStale                       // answer ESTALE with the OSD's epoch
	actDupReplies                  // serve it, sending every reply twice
)

// received is one op as an OSD saw it.
type received struct {
	osd  int32
	op   wire.OSDOp
	from *msgr.Session // the OSD's session to the client
}

type clusterConfig struct {
	osds  int
	pgNum uint32
	cephx bool
	// ticketTTL bounds tickets in the cephx mode (default 1 h).
	ticketTTL time.Duration
	mons      int // default 1
}

// reporter is the part of testing.TB the cluster uses; the Examples,
// which have no T, pass stderrReporter.
type reporter interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Fatal(args ...any)
}

type cluster struct {
	t    reporter
	net  *memnet.Network
	cfg  clusterConfig
	mons []*fakeMon
	osds []*fakeOSD

	authority *auth.Authority
	keyring   auth.Keyring
	clientKey string

	store   objectstore.Store
	classes *objclass.Registry

	mu       sync.Mutex
	maps     []*osdmap.Map // every epoch; the OSDs know them all
	pubEpoch osdmap.Epoch  // the newest epoch the monitors serve
	counter  uint64
	done     map[wire.ReqID]*wire.OSDOpReply // writes applied, for resends
	applies  map[wire.ReqID]int
	recv     []received
	script   func(osd int32, op *wire.OSDOp) action
	hold     chan struct{} // while non-nil, commits wait for it to close
	subs     []subRecord
	commands []wire.Command
	// pgStates are what "pg query" answers, by PG ("1.3"); a PG not in
	// it is refused.
	pgStates map[string]string
}

const testPool = "data"

func (c *cluster) logf(format string, args ...any) { c.t.Logf(format, args...) }

// newCluster starts a cluster with cfg.osds OSDs (default 3), all up,
// and one replicated pool "data" (id 1) of size min(3, osds) with
// cfg.pgNum PGs (default 8).
func newCluster(t testing.TB, cfg clusterConfig) *cluster {
	t.Helper()
	c, err := startCluster(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	return c
}

func startCluster(t reporter, cfg clusterConfig) (*cluster, error) {
	if cfg.osds == 0 {
		cfg.osds = 3
	}
	if cfg.pgNum == 0 {
		cfg.pgNum = 8
	}
	if cfg.mons == 0 {
		cfg.mons = 1
	}
	if cfg.ticketTTL == 0 {
		cfg.ticketTTL = time.Hour
	}
	c := &cluster{t: t, cfg: cfg, net: memnet.New(memnet.Config{Seed: 1}),
		store: memstore.New(memstore.Options{}), classes: cls.Standard(),
		done: map[wire.ReqID]*wire.OSDOpReply{}, applies: map[wire.ReqID]int{}}
	if err := c.classes.Register("test", "echo", objclass.Method{Run: func(_ objclass.Context, in []byte) ([]byte, error) {
		return append([]byte("echo:"), in...), nil
	}}); err != nil {
		return nil, err
	}
	layout, err := crush.BuildLayout(crush.Layout{Hosts: cfg.osds, OSDsPerHost: 1})
	if err != nil {
		return nil, err
	}
	cm, err := crush.New(layout)
	if err != nil {
		return nil, err
	}
	spec := osdmap.Spec{Epoch: 1, FSID: osdmap.FSID{1, 2, 3}, Crush: cm,
		Created: time.Unix(1e9, 0), Modified: time.Unix(1e9, 0)}
	for i := range cfg.osds {
		spec.OSDs = append(spec.OSDs, osdmap.OSD{State: osdmap.OSDExists | osdmap.OSDUp, Weight: osdmap.WeightIn,
			PrimaryAffinity: osdmap.DefaultPrimaryAffinity, Addr: osdAddr(int32(i)), UpFrom: 1})
	}
	size := min(3, cfg.osds)
	spec.Pools = []osdmap.Pool{{ID: 1, Name: testPool, Type: osdmap.PoolReplicated, Size: size, MinSize: 1,
		PGNum: cfg.pgNum, PGPNum: cfg.pgNum, Flags: osdmap.PoolHashPSPool}}
	m, err := osdmap.New(spec)
	if err != nil {
		return nil, err
	}
	c.maps, c.pubEpoch = []*osdmap.Map{m}, m.Epoch()
	if err := c.createCollections(m.Pools()[0]); err != nil {
		return nil, err
	}
	if cfg.cephx {
		if err := c.setupAuth(); err != nil {
			return nil, err
		}
	}
	for i := range cfg.mons {
		mon, err := c.startMon(string(rune('a' + i)))
		if err != nil {
			c.close()
			return nil, err
		}
		c.mons = append(c.mons, mon)
	}
	for i := range cfg.osds {
		o, err := c.startOSD(int32(i))
		if err != nil {
			c.close()
			return nil, err
		}
		c.osds = append(c.osds, o)
	}
	return c, nil
}

func osdAddr(id int32) string { return fmt.Sprintf("osd-%d:6800", id) }

func (c *cluster) createCollections(p osdmap.Pool) error {
	var txn objectstore.Transaction
	for seed := range p.PGNum {
		txn.CreateCollection(objectstore.PGCollection(p.ID, seed))
	}
	return objectstore.Apply(context.Background(), c.store, &txn)
}

func (c *cluster) setupAuth() error {
	now := time.Now()
	client := auth.EntityName{Type: "client", ID: "admin"}
	secret := auth.NewSecret()
	c.keyring = auth.Keyring{client: auth.KeyEntry{Key: secret, Caps: auth.Caps{"mon": "allow *", "osd": "allow *"}}}
	c.clientKey = secret.Base64()
	a, err := auth.NewAuthority(auth.AuthorityConfig{Keys: c.keyring, Now: time.Now, TicketTTL: c.cfg.ticketTTL})
	if err != nil {
		return err
	}
	a.Rotate(now)
	c.authority = a
	return nil
}

// close stops the daemons.
func (c *cluster) close() {
	for _, m := range c.mons {
		m.ms.Close()
	}
	for _, o := range c.osds {
		o.ms.Close()
	}
	c.net.Close()
	c.store.Close()
}

// monHosts returns the monitors as Config.Mons wants them.
func (c *cluster) monHosts() []string {
	var out []string
	for _, m := range c.mons {
		out = append(out, m.name+"="+m.addr)
	}
	return out
}

// config returns a client configuration for the cluster.
func (c *cluster) config() rados.Config {
	cfg := rados.Config{Mons: c.monHosts(), Network: c.net.Host("client"), MonTimeout: 2 * time.Second}
	if c.cfg.cephx {
		cfg.Key = c.clientKey
	}
	return cfg
}

// connect connects a client and opens an IOContext on the test pool.
func (c *cluster) connect(t testing.TB) (*rados.Conn, *rados.IOContext) {
	t.Helper()
	conn, err := rados.Connect(t.Context(), c.config())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	io, err := conn.OpenIOContext(testPool)
	if err != nil {
		t.Fatalf("open pool: %v", err)
	}
	return conn, io
}

// newest returns the newest map (the OSDs').
func (c *cluster) newest() *osdmap.Map {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maps[len(c.maps)-1]
}

// advance makes a new epoch with change, known to the OSDs at once and
// to clients only after publish.
func (c *cluster) advance(change func(m *osdmap.Map, inc *osdmap.Incremental)) *osdmap.Map {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.maps[len(c.maps)-1]
	inc := m.NewIncremental()
	change(m, inc)
	next, err := m.Apply(inc)
	if err != nil {
		c.t.Fatalf("advance map: %v", err)
	}
	c.maps = append(c.maps, next)
	return next
}

// publish makes the monitors serve every epoch and push it to
// subscribers.
func (c *cluster) publish() {
	c.mu.Lock()
	c.pubEpoch = c.maps[len(c.maps)-1].Epoch()
	c.mu.Unlock()
	for _, m := range c.mons {
		m.pushAll()
	}
}

// newEpoch advances and publishes.
func (c *cluster) newEpoch(change func(m *osdmap.Map, inc *osdmap.Incremental)) *osdmap.Map {
	m := c.advance(change)
	c.publish()
	return m
}

// movePrimary returns a change that makes osd the acting primary of pg.
func movePrimary(pg osdmap.PG, osd int32) func(*osdmap.Map, *osdmap.Incremental) {
	return func(_ *osdmap.Map, inc *osdmap.Incremental) {
		inc.NewPrimaryTemp = map[osdmap.PG]int32{pg: osd}
	}
}

// objectPG returns the PG and acting primary of a test pool object in
// the newest map.
func (c *cluster) objectPG(name string) (osdmap.PG, int32) {
	m := c.newest()
	pg, err := m.ObjectIDToPG(objid.Object(1, "", name))
	if err != nil {
		c.t.Fatal(err)
	}
	var s osdmap.Scratch
	mp, err := m.PGToUpActing(pg, &s)
	if err != nil {
		c.t.Fatal(err)
	}
	return pg, mp.ActingPrimary
}

// otherOSD returns an OSD of the acting set of pg other than osd.
func (c *cluster) otherOSD(pg osdmap.PG, osd int32) int32 {
	var s osdmap.Scratch
	mp, _ := c.newest().PGToUpActing(pg, &s)
	for _, o := range mp.Acting {
		if o != osd {
			return o
		}
	}
	c.t.Fatalf("pg %v has no OSD but osd.%d", pg, osd)
	return -1
}

// setScript sets the per-op script (nil: serve everything).
func (c *cluster) setScript(f func(osd int32, op *wire.OSDOp) action) {
	c.mu.Lock()
	c.script = f
	c.mu.Unlock()
}

// holdCommits makes writes wait before their committed reply until the
// returned function is called.
func (c *cluster) holdCommits() (release func()) {
	ch := make(chan struct{})
	c.mu.Lock()
	c.hold = ch
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.hold = nil
		c.mu.Unlock()
		close(ch)
	}
}

// received returns the ops the OSDs received, in order of arrival.
func (c *cluster) received() []received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.recv)
}

// receivedFor returns the arrivals of the request with tid that named
// object name.
func (c *cluster) receivedFor(name string) []received {
	var out []received
	for _, r := range c.received() {
		if r.op.Object.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// appliedCount returns how many times the write req was applied.
func (c *cluster) appliedCount(req wire.ReqID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applies[req]
}

// subRecord is a subscription a monitor received.
type subRecord struct {
	mon string
	wire.MonSubscribe
}

// subscriptions returns the subscriptions the monitors received.
func (c *cluster) subscriptions() []subRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.subs)
}

func serverAuth(c *cluster, service string) func() auth.ServerHandshake {
	if !c.cfg.cephx {
		return func() auth.ServerHandshake { return &auth.NoneServer{} }
	}
	if service == "mon" {
		return func() auth.ServerHandshake {
			c.authority.Rotate(time.Now())
			return c.authority.NewHandshake()
		}
	}
	return func() auth.ServerHandshake {
		c.authority.Rotate(time.Now())
		keys, _ := c.authority.ServiceKeys(service)
		v, err := auth.NewVerifier(auth.VerifierConfig{Service: service, Keys: keys, Now: time.Now})
		if err != nil {
			return failingServer{err}
		}
		return v.NewHandshake()
	}
}

type failingServer struct{ err error }

func (f failingServer) Step([]byte) ([]byte, bool, error) { return nil, false, f.err }
func (failingServer) Peer() auth.EntityName               { return auth.EntityName{} }
func (failingServer) Caps() auth.Caps                     { return nil }
func (failingServer) SessionKey() []byte                  { return nil }

func newDaemonMessenger(c *cluster, name auth.EntityName, addr string, d msgr.Dispatcher, service string) (*msgr.Messenger, error) {
	ms, err := msgr.New(msgr.Config{Name: name, Network: c.net.Host(addr), Dispatcher: d,
		ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: name} },
		ServerAuth: serverAuth(c, service)})
	if err != nil {
		return nil, err
	}
	if _, err := ms.Listen(context.Background(), addr); err != nil {
		ms.Close()
		return nil, err
	}
	return ms, nil
}

// connectOnly connects without the test's cleanup.
func connectOnly(ctx context.Context, cfg rados.Config) (*rados.Conn, error) {
	return rados.Connect(ctx, cfg)
}
