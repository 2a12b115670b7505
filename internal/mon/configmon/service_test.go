package configmon

import (
	"bytes"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

func TestCommands(t *testing.T) {
	type step struct {
		prefix string
		args   []string
		code   int32
		status string // substring of Status
		text   string // exact Text, if set
		data   string // exact Data, if set
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"set and get", []step{
			{prefix: "config set", args: []string{"who", "osd", "name", "osd_max_backfills", "value", "4"}, status: "set osd osd_max_backfills = 4"},
			{prefix: "config get", args: []string{"who", "osd.3", "name", "osd_max_backfills"}, text: "4\n",
				data: `{"section":"osd","name":"osd_max_backfills","value":"4","can_update_at_runtime":true}`},
			{prefix: "config get", args: []string{"who", "mon", "name", "osd_max_backfills"}, text: "1\n",
				data: `{"section":"default","name":"osd_max_backfills","value":"1","can_update_at_runtime":true}`},
			{prefix: "config set", args: []string{"who", "osd.3", "name", "osd_max_backfills", "value", "2"}},
			{prefix: "config get", args: []string{"who", "osd.3", "name", "osd_max_backfills"}, text: "2\n"},
			{prefix: "config get", args: []string{"who", "osd.3"},
				data: `[{"section":"osd.3","name":"osd_max_backfills","value":"2","can_update_at_runtime":true}]`},
		}},
		{"canonical values", []step{
			{prefix: "config set", args: []string{"who", "global", "name", "mon_osd_down_out_interval", "value", "300"}},
			{prefix: "config get", args: []string{"who", "mon", "name", "mon_osd_down_out_interval"}, text: "5m0s\n"},
			{prefix: "config set", args: []string{"who", "global", "name", "mon_osd_down_out_interval", "value", "5m"}, status: "already 5m0s"},
			{prefix: "config set", args: []string{"who", "mon", "name", "mon_allow_pool_delete", "value", "1"}},
			{prefix: "config get", args: []string{"who", "mon.a", "name", "mon_allow_pool_delete"}, text: "true\n"},
		}},
		{"dump and rm", []step{
			{prefix: "config dump", data: `[]`, text: "WHO  OPTION  VALUE  RO\n"},
			{prefix: "config set", args: []string{"who", "osd", "name", "osd_objectstore", "value", "memstore"}, status: "restart"},
			{prefix: "config set", args: []string{"who", "global", "name", "osd_heartbeat_grace", "value", "30s"}},
			{prefix: "config dump", text: "WHO     OPTION               VALUE     RO\nglobal  osd_heartbeat_grace  30s       \nosd     osd_objectstore      memstore  *\n"},
			{prefix: "config rm", args: []string{"who", "osd", "name", "osd_objectstore"}, status: "removed osd osd_objectstore"},
			{prefix: "config rm", args: []string{"who", "osd", "name", "osd_objectstore"}, status: "is not set"},
			{prefix: "config dump", data: `[{"section":"global","name":"osd_heartbeat_grace","value":"30s","can_update_at_runtime":true}]`},
		}},
		{"refusals", []step{
			{prefix: "config set", args: []string{"who", "osd", "name", "no_such_option", "value", "1"}, code: moncmd.EINVAL, status: "unrecognized config option"},
			{prefix: "config set", args: []string{"who", "osd", "name", "osd_max_backfills", "value", "lots"}, code: moncmd.EINVAL, status: "not an integer"},
			{prefix: "config set", args: []string{"who", "osd", "name", "osd_max_backfills", "value", "0"}, code: moncmd.EINVAL, status: "out of range"},
			{prefix: "config set", args: []string{"who", "osd", "name", "mon_allow_pool_delete", "value", "maybe"}, code: moncmd.EINVAL, status: "not true or false"},
			{prefix: "config set", args: []string{"who", "osd", "name", "osd_heartbeat_grace", "value", "soon"}, code: moncmd.EINVAL, status: "not a duration"},
			{prefix: "config set", args: []string{"who", "osd", "name", "osd_objectstore", "value", "filestore"}, code: moncmd.EINVAL, status: "not one of"},
			{prefix: "config set", args: []string{"who", "osd.x", "name", "osd_max_backfills", "value", "1"}, code: moncmd.EINVAL, status: "osd id is a number"},
			{prefix: "config set", args: []string{"who", "toaster", "name", "osd_max_backfills", "value", "1"}, code: moncmd.EINVAL, status: "want global"},
			{prefix: "config set", args: []string{"who", "osd", "name", "osd_max_backfills"}, code: moncmd.EINVAL, status: `missing "value"`},
			{prefix: "config rm", args: []string{"who", "osd", "name", "nope"}, code: moncmd.EINVAL, status: "unrecognized"},
			{prefix: "config get", args: []string{"who", "osd", "name", "nope"}, code: moncmd.EINVAL, status: "unrecognized"},
			{prefix: "config get", code: moncmd.EINVAL, status: `missing "who"`},
			{prefix: "config help", args: []string{"name", "nope"}, code: moncmd.ENOENT},
		}},
		{"help", []step{
			{prefix: "config help", args: []string{"name", "osd_heartbeat_grace"},
				text: "osd_heartbeat_grace (secs, default 20s)\n    how long an OSD must be reported failed before it is marked down\n",
				data: `{"name":"osd_heartbeat_grace","type":"secs","default":"20s","desc":"how long an OSD must be reported failed before it is marked down","can_update_at_runtime":true,"min":1,"max":1048576}`},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMon(t)
			for i, s := range tc.steps {
				r := m.run(s.prefix, s.args...)
				if r.Code != s.code || !strings.Contains(r.Status, s.status) {
					t.Fatalf("step %d %s %v: code %d status %q, want code %d status ~%q", i, s.prefix, s.args, r.Code, r.Status, s.code, s.status)
				}
				if s.text != "" && r.Text != s.text {
					t.Errorf("step %d: text\n%q\nwant\n%q", i, r.Text, s.text)
				}
				if s.data != "" && string(r.Data) != s.data {
					t.Errorf("step %d: data\n%s\nwant\n%s", i, r.Data, s.data)
				}
			}
		})
	}
}

func TestView(t *testing.T) {
	m := newTestMon(t)
	v := m.svc.View("mon")
	if got := v.Duration("mon_osd_down_out_interval"); got != 10*time.Minute {
		t.Errorf("default down out interval %v", got)
	}
	if got := v.Int("mon_osd_min_down_reporters"); got != 2 {
		t.Errorf("default reporters %d", got)
	}
	if got := v.String("mon_osd_reporter_subtree_level"); got != "host" {
		t.Errorf("default subtree level %q", got)
	}
	must(t, m.run("config set", "who", "global", "name", "mon_osd_min_down_reporters", "value", "3"))
	must(t, m.run("config set", "who", "mon", "name", "mon_osd_min_down_reporters", "value", "4"))
	must(t, m.run("config set", "who", "mon.a", "name", "mon_osd_min_down_reporters", "value", "5"))
	if got := v.Int("mon_osd_min_down_reporters"); got != 4 {
		t.Errorf("mon section should win over global: %d", got)
	}
	if got := m.svc.View("mon.a").Int("mon_osd_min_down_reporters"); got != 5 {
		t.Errorf("mon.a %d", got)
	}
	if got := m.svc.View("osd.1").Int("mon_osd_min_down_reporters"); got != 3 {
		t.Errorf("osd.1 falls back to global: %d", got)
	}
	if v.Int("no_such_option") != 0 || v.Bool("mon_osd_min_down_reporters") {
		t.Error("unknown names and wrong types should read as zero")
	}
	if !(View{s: m.svc, who: "mon"}).Bool("mon_allow_pool_delete") == false {
		t.Error("mon_allow_pool_delete defaults to false")
	}
}

// TestReload checks that a restarted service reads what was applied.
func TestReload(t *testing.T) {
	m := newTestMon(t)
	must(t, m.run("config set", "who", "osd", "name", "osd_max_backfills", "value", "7"))
	must(t, m.run("config set", "who", "global", "name", "osd_heartbeat_grace", "value", "25"))
	again := New(nil)
	if err := again.Load(m.st); err != nil {
		t.Fatal(err)
	}
	if again.Version() != 2 || again.View("osd.0").Int("osd_max_backfills") != 7 ||
		again.View("osd.0").Duration("osd_heartbeat_grace") != 25*time.Second {
		t.Errorf("reloaded version %d, values %v", again.Version(), again.db.values)
	}
}

// TestStaleProposal checks that a proposal prepared before another change
// committed is refused with EAGAIN and changes nothing.
func TestStaleProposal(t *testing.T) {
	m := newTestMon(t)
	p1, _ := m.svc.Prepare(moncmd.New("config set", "who", "osd", "name", "osd_max_backfills", "value", "2"), time.Time{})
	p2, _ := m.svc.Prepare(moncmd.New("config set", "who", "osd", "name", "osd_max_backfills", "value", "3"), time.Time{})
	must(t, m.commit(p1))
	before, _ := m.st.Get(ServiceName, []byte(keyDB))
	if r := m.commit(p2); r.Code != moncmd.EAGAIN {
		t.Fatalf("stale proposal: code %d %s", r.Code, r.Status)
	}
	after, _ := m.st.Get(ServiceName, []byte(keyDB))
	if !bytes.Equal(before, after) || m.svc.View("osd").Int("osd_max_backfills") != 2 {
		t.Error("stale proposal changed the database")
	}
}

// TestDeterminism applies the same proposals on two monitors and compares
// their stores byte for byte.
func TestDeterminism(t *testing.T) {
	a, b := newTestMon(t), newTestMon(t)
	for _, c := range []moncmd.Command{
		moncmd.New("config set", "who", "osd", "name", "osd_max_backfills", "value", "2"),
		moncmd.New("config set", "who", "global", "name", "osd_heartbeat_grace", "value", "30"),
		moncmd.New("config set", "who", "osd.1", "name", "osd_recovery_max_active", "value", "9"),
		moncmd.New("config rm", "who", "osd", "name", "osd_max_backfills"),
	} {
		p, r := a.svc.Prepare(c, time.Time{})
		if p == nil {
			t.Fatalf("%s: %s", c, r.Status)
		}
		ra, rb := a.commit(p), b.commit(p)
		if ra.Code != 0 || ra.Status != rb.Status {
			t.Fatalf("%s: %+v vs %+v", c, ra, rb)
		}
	}
	va, _ := a.st.Get(ServiceName, []byte(keyDB))
	vb, _ := b.st.Get(ServiceName, []byte(keyDB))
	if !bytes.Equal(va, vb) {
		t.Error("stores differ")
	}
}

func FuzzDecodeProposal(f *testing.F) {
	f.Add(proposal{base: 3, op: opSet, section: "osd.1", name: "osd_max_backfills", value: "2"}.encode())
	f.Add(proposal{op: opRm, section: "global", name: "x"}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeProposal(b)
		if err != nil {
			return
		}
		if q, err := decodeProposal(p.encode()); err != nil || q != p {
			t.Fatalf("round trip: %+v %v", q, err)
		}
	})
}

func FuzzDecodeDB(f *testing.F) {
	d := newDB()
	d.version = 4
	d.values[entryKey{"osd", "osd_max_backfills"}] = "2"
	d.values[entryKey{"global", "osd_heartbeat_grace"}] = "20s"
	f.Add(d.encode())
	empty := newDB()
	f.Add(empty.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeDB(b)
		if err != nil {
			return
		}
		again, err := decodeDB(d.encode())
		if err != nil || again.version != d.version || !maps.Equal(again.values, d.values) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
