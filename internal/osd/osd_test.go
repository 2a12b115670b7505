package osd

import (
	"errors"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

func TestConfigRequired(t *testing.T) {
	for name, cfg := range map[string]Config{
		"negative id": {ID: -1},
		"no store":    {ID: 1},
		"no listen":   {ID: 1, Store: memstore.New(memstore.Options{}), Network: &msgr.TCP{}},
	} {
		if _, err := cfg.withDefaults(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// capsMap is a map with pool 1 "rbd" and pool 2 "other".
func capsMap(t *testing.T) *osdmap.Map {
	t.Helper()
	spec, err := crush.BuildLayout(crush.Layout{Hosts: 1, OSDsPerHost: 1})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := crush.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := osdmap.NewSimple(cm, 1,
		osdmap.Pool{ID: 1, Name: "rbd", Type: osdmap.PoolReplicated, Size: 1, MinSize: 1, PGNum: 8, PGPNum: 8},
		osdmap.Pool{ID: 2, Name: "other", Type: osdmap.PoolReplicated, Size: 1, MinSize: 1, PGNum: 8, PGPNum: 8})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAuthorize(t *testing.T) {
	m := capsMap(t)
	// The OSD knows only the classes it is given: here a test class with
	// a read-only and a write method.
	classes := objclass.NewRegistry()
	noop := func(objclass.Context, []byte) ([]byte, error) { return nil, nil }
	if err := classes.Register("t", "read", objclass.Method{Run: noop}); err != nil {
		t.Fatal(err)
	}
	if err := classes.Register("t", "write", objclass.Method{Write: true, Run: noop}); err != nil {
		t.Fatal(err)
	}
	o := &OSD{cfg: Config{Classes: classes}, checkers: map[*msgr.Session]*auth.CapChecker{}}
	peer := msgr.Peer{Name: auth.EntityName{Type: "client", ID: "ro"}, Caps: auth.Caps{"osd": "allow r pool=rbd, allow rw pool=rbd namespace=scratch"}}
	op := func(pool int64, ns string, codes ...wire.ObjectOpCode) *wire.OSDOp {
		o := &wire.OSDOp{PG: osdmap.PG{Pool: pool}, Object: objid.Object(pool, ns, "x")}
		for _, c := range codes {
			name := ""
			if c == wire.OpCall {
				name = "t.read"
			}
			o.Ops = append(o.Ops, wire.ObjectOp{Code: c, Name: name})
		}
		return o
	}
	for _, tc := range []struct {
		op *wire.OSDOp
		ok bool
	}{
		{op(1, "", wire.OpRead), true},
		{op(1, "", wire.OpRead, wire.OpWrite), false},
		{op(1, "scratch", wire.OpWrite), true},
		{op(2, "", wire.OpRead), false},
		{op(1, "", wire.OpCall), false}, // class-read is not r
		{op(9, "", wire.OpRead), false}, // no such pool
	} {
		err := o.authorize(peer, m, tc.op)
		if (err == nil) != tc.ok {
			t.Errorf("pool %d ns %q ops %v: %v", tc.op.PG.Pool, tc.op.Object.Namespace, tc.op.Ops, err)
		}
		if err != nil && tc.op.PG.Pool != 9 && !errors.Is(err, auth.ErrDenied) {
			t.Errorf("refusal is not ErrDenied: %v", err)
		}
	}
	for name, want := range map[string]auth.Access{"t.read": auth.AccessClassRead, "t.write": auth.AccessClassWrite, "lock.info": auth.AccessClassWrite} {
		if got := o.access([]wire.ObjectOp{{Code: wire.OpCall, Name: name}}); got != want {
			t.Errorf("access of %s: %v, want %v (a method the OSD was not given needs class-write)", name, got, want)
		}
	}
}

// Peering that starts over takes the OSD's published map only if it is
// newer than its own: a PG learns a map before the OSD publishes it, and
// the older published map would show the OSDs that just booted as down,
// so peering would not activate them (and waited peerAnswerWait for
// their answers when a whole cluster restarted).
func TestPeeringNeverGoesBackToAnOlderMap(t *testing.T) {
	older := capsMap(t)
	newer, err := older.Apply(older.NewIncremental())
	if err != nil {
		t.Fatal(err)
	}
	o := &OSD{osdmap: older}
	p := &pg{o: o, id: osdmap.PG{Pool: 1}}
	if got := p.newerMap(newer); got != newer {
		t.Errorf("published epoch %d, peering's %d: got epoch %d", older.Epoch(), newer.Epoch(), got.Epoch())
	}
	o.osdmap = newer
	if got := p.newerMap(older); got != newer {
		t.Errorf("published epoch %d, peering's %d: got epoch %d", newer.Epoch(), older.Epoch(), got.Epoch())
	}
}

// The buffer a write arrived in goes back to the messenger's pool once
// the write is committed everywhere, but never when the write is
// abandoned with its interval: rep ops that send its data by reference
// may still be queued for a replica.
func TestAbandonedWriteKeepsItsBuffer(t *testing.T) {
	o := &OSD{}
	p := &pg{o: o, writes: map[uint64]*write{}, queue: newOpQueue(opq.Today{})}
	released := map[string]bool{}
	newReq := func(name string) *request {
		return &request{o: o, release: func() { released[name] = true }}
	}
	done, abandoned := newReq("done"), newReq("abandoned")
	p.writes[1] = &write{tid: 1, reqs: []*request{abandoned}}
	p.mu.Lock()
	stale := p.endIntervalLocked()
	p.mu.Unlock()
	if len(stale) != 1 || stale[0] != work(abandoned) {
		t.Fatalf("endIntervalLocked returned %d requests, want the abandoned write's", len(stale))
	}
	done.releaseWhenStored()
	abandoned.releaseWhenStored()
	if !released["done"] || released["abandoned"] {
		t.Fatalf("released %v; want the finished write's buffer only", released)
	}
}

// A PG log over its limit goes back a sixteenth of it (1 to 64 entries)
// below, so that trims come in batches; it never trims the newest entry.
func TestLogTrim(t *testing.T) {
	for _, c := range []struct{ n, limit, want int }{
		{3000, 3000, 0},
		{3001, 3000, 64},
		{251, 250, 15},
		{11, 10, 1},
		{2, 1, 1},
		{5000, 3000, 2063},
		{1, 0, 0},
	} {
		if got := logTrim(c.n, c.limit); got != c.want {
			t.Errorf("logTrim(%d, %d) = %d, want %d", c.n, c.limit, got, c.want)
		}
	}
}
