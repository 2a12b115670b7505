package osdmon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/mon/configmon"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/osdmap"
	pb "go.etcd.io/raft/v3/raftpb"
)

// testFSID is the cluster id of test clusters.
const testFSID = "c0ffee00-0000-4000-8000-000000000001"

// t0 is the time test clusters are created at.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) // read-only

// testMon is one monitor without Raft: the config and OSD-map services
// over a real store. A write is prepared, appended to the log as the next
// entry, applied and committed: the path of a single-monitor cluster.
type testMon struct {
	t     testing.TB
	st    *monstore.Store
	cfg   *configmon.Service
	svc   *Service
	index uint64
	now   time.Time
}

func newTestMon(t testing.TB) *testMon {
	t.Helper()
	st, err := monstore.Open(monstore.Options{FS: vfs.NewMem(), Dir: "mon"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := configmon.New(nil)
	svc, err := New(Config{Options: cfg.View("mon")})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []moncmd.Service{cfg, svc} {
		if err := s.Load(st); err != nil {
			t.Fatal(err)
		}
	}
	return &testMon{t: t, st: st, cfg: cfg, svc: svc, now: t0}
}

// newCluster returns a monitor whose cluster is created.
func newCluster(t testing.TB) *testMon {
	t.Helper()
	m := newTestMon(t)
	fsid, err := ParseFSID(testFSID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Initial(fsid, m.now, osdmap.DefaultRatios())
	if err != nil {
		t.Fatal(err)
	}
	must(t, m.commit(m.svc, p))
	return m
}

// newBootedCluster returns a cluster with n OSDs, osd.i up and in on host
// h<i/perHost>.
func newBootedCluster(t testing.TB, n, perHost int) *testMon {
	t.Helper()
	m := newCluster(t)
	for i := range n {
		must(t, m.run("osd create"))
		must(t, m.run("osd boot", "id", fmt.Sprint(i), "addr", fmt.Sprintf("10.0.0.%d:6800", i),
			"host", fmt.Sprintf("h%d", i/perHost)))
	}
	return m
}

// service returns the service that handles prefix.
func (m *testMon) service(prefix string) (moncmd.Service, bool) {
	for _, s := range []moncmd.Service{m.cfg, m.svc} {
		if ok, write := s.Handles(prefix); ok {
			return s, write
		}
	}
	m.t.Fatalf("%s: no service handles it", prefix)
	return nil, false
}

// run sends a command as the driver does.
func (m *testMon) run(prefix string, kv ...string) moncmd.Reply {
	m.t.Helper()
	c := moncmd.New(prefix, kv...)
	s, write := m.service(prefix)
	if !write {
		return s.Query(c)
	}
	p, r := s.Prepare(c, m.now)
	if p == nil {
		return r
	}
	return m.commit(s, p)
}

// commit appends the proposal as the next log entry, applies and commits.
func (m *testMon) commit(s moncmd.Service, p []byte) moncmd.Reply {
	m.t.Helper()
	m.index++
	i := m.index
	if err := m.st.Append(&pb.HardState{Term: new(uint64(1)), Commit: new(i)},
		[]*pb.Entry{{Index: new(i), Term: new(uint64(1)), Type: pb.EntryNormal.Enum(), Data: p}}, nil); err != nil {
		m.t.Fatal(err)
	}
	b := m.st.NewBatch()
	r, err := s.Apply(b, p, m.now)
	if err != nil {
		m.t.Fatal(err)
	}
	if err := m.st.Commit(i, b); err != nil {
		m.t.Fatal(err)
	}
	return r
}

// tick runs the service's Tick at now and sends what it returns.
func (m *testMon) tick() []moncmd.Reply {
	m.t.Helper()
	var out []moncmd.Reply
	for _, c := range m.svc.Tick(m.now) {
		out = append(out, m.run(c.Prefix, flatten(c.Args)...))
	}
	return out
}

func flatten(args map[string]string) []string {
	var kv []string
	for k, v := range args {
		kv = append(kv, k, v)
	}
	return kv
}

// dumpStore returns every key and value of the osdmap service.
func (m *testMon) dumpStore() string {
	var b strings.Builder
	if err := m.st.Scan(ServiceName, nil, func(k, v []byte) error {
		fmt.Fprintf(&b, "%s=%x\n", k, v)
		return nil
	}); err != nil {
		m.t.Fatal(err)
	}
	return b.String()
}

func must(t testing.TB, r moncmd.Reply) moncmd.Reply {
	t.Helper()
	if r.Code != moncmd.OK {
		t.Fatalf("code %d: %s", r.Code, r.Status)
	}
	return r
}

// osd returns osd id's entry in the applied map.
func (m *testMon) osd(id int32) osdmap.OSD { return m.svc.Map().OSD(id) }

// step is one command of a table test and what it must answer.
type step struct {
	prefix string
	args   []string
	code   int32
	status string // substring of Status
	text   string // exact Text, if set
	data   string // exact Data, if set
}

func runSteps(t *testing.T, m *testMon, steps []step) {
	t.Helper()
	for i, s := range steps {
		r := m.run(s.prefix, s.args...)
		if r.Code != s.code || !strings.Contains(r.Status, s.status) {
			t.Fatalf("step %d %s %v: code %d status %q, want code %d status ~%q", i, s.prefix, s.args, r.Code, r.Status, s.code, s.status)
		}
		if s.text != "" && r.Text != s.text {
			t.Errorf("step %d %s: text\n%s\nwant\n%s", i, s.prefix, r.Text, s.text)
		}
		if s.data != "" && string(r.Data) != s.data {
			t.Errorf("step %d %s: data\n%s\nwant\n%s", i, s.prefix, r.Data, s.data)
		}
	}
}
