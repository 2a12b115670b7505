package authmon

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

func TestCommands(t *testing.T) {
	type step struct {
		prefix string
		args   []string
		code   int32
		status string // substring of Status
		text   string // substring of Text, if set
		data   string // substring of Data, if set
	}
	app := []string{"entity", "client.app", "caps.mon", "allow r", "caps.osd", "allow rw pool=rbd"}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"add get ls rm", []step{
			{prefix: "auth add", args: app, status: "added key for client.app"},
			{prefix: "auth add", args: app, status: "exists with the same caps"},
			{prefix: "auth add", args: []string{"entity", "client.app", "caps.mon", "allow  r", "caps.osd", "allow rw pool=rbd"}, status: "same caps"},
			{prefix: "auth add", args: []string{"entity", "client.app", "caps.mon", "allow rw"}, code: moncmd.EEXIST, status: `other caps (mon="allow r" osd="allow rw pool=rbd")`},
			{prefix: "auth get", args: []string{"entity", "client.app"}, text: "[client.app]\n\tkey = ",
				data: `"caps":{"mon":"allow r","osd":"allow rw pool=rbd"}`},
			{prefix: "auth get", args: []string{"entity", "client.app"}, text: "\tcaps mon = \"allow r\"\n\tcaps osd = \"allow rw pool=rbd\"\n"},
			{prefix: "auth ls", text: "client.app\n\tkey: ", data: `{"auth_dump":[{"entity":"client.app"`},
			{prefix: "auth ls", text: "\tcaps: [mon] allow r\n\tcaps: [osd] allow rw pool=rbd\n"},
			{prefix: "auth rm", args: []string{"entity", "client.app"}, status: "removed client.app"},
			{prefix: "auth get", args: []string{"entity", "client.app"}, code: moncmd.ENOENT, status: "unknown entity client.app"},
			{prefix: "auth rm", args: []string{"entity", "client.app"}, code: moncmd.ENOENT, status: "unknown entity client.app"},
			{prefix: "auth print-key", args: []string{"entity", "client.app"}, code: moncmd.ENOENT, status: "unknown entity"},
			{prefix: "auth ls", data: `{"auth_dump":[]}`},
		}},
		{"caps", []step{
			{prefix: "auth add", args: []string{"entity", "client.x"}, status: "added"},
			{prefix: "auth get", args: []string{"entity", "client.x"}, data: `"caps":{}`},
			{prefix: "auth caps", args: []string{"entity", "client.x", "caps.mon", "allow r"}, status: "updated caps for client.x"},
			{prefix: "auth caps", args: []string{"entity", "client.x", "caps.mon", "allow r"}, status: "already"},
			{prefix: "auth caps", args: []string{"entity", "client.x", "caps.osd", "allow rwx"}, status: "updated"},
			{prefix: "auth get", args: []string{"entity", "client.x"}, data: `"caps":{"osd":"allow rwx"}`},
			{prefix: "auth caps", args: []string{"entity", "client.x", "caps.osd", ""}, status: "updated"},
			{prefix: "auth get", args: []string{"entity", "client.x"}, data: `"caps":{}`},
			{prefix: "auth caps", args: []string{"entity", "client.x"}, code: moncmd.EINVAL, status: "no caps given"},
			{prefix: "auth caps", args: []string{"entity", "client.nobody", "caps.mon", "allow r"}, code: moncmd.ENOENT, status: "unknown entity client.nobody"},
			{prefix: "auth caps", args: []string{"entity", "client.x", "caps.osd", "allow rw pool"}, code: moncmd.EINVAL, status: "bad capabilities"},
		}},
		{"get-or-create and print-key", []step{
			{prefix: "auth get-or-create", args: app, text: "[client.app]\n\tkey = ", data: `[{"entity":"client.app","key":"`},
			{prefix: "auth get-or-create", args: app, text: "[client.app]"},
			{prefix: "auth get-or-create", args: []string{"entity", "client.app"}, code: moncmd.EEXIST},
			{prefix: "auth print-key", args: []string{"entity", "client.app"}, data: `{"key":"`},
		}},
		{"refusals", []step{
			{prefix: "auth add", args: []string{"entity", "client.a", "caps.mon", "allow sideways"}, code: moncmd.EINVAL, status: "bad capabilities"},
			{prefix: "auth add", args: []string{"entity", "client.a", "caps.toaster", "allow r"}, code: moncmd.EINVAL, status: "unknown service"},
			{prefix: "auth add", args: []string{"entity", "client.a", "mon", "allow r"}, code: moncmd.EINVAL, status: `unknown argument "mon"`},
			{prefix: "auth add", args: []string{"entity", "toaster.a"}, code: moncmd.EINVAL, status: "bad entity name"},
			{prefix: "auth add", args: []string{"entity", "client.a b"}, code: moncmd.EINVAL, status: "may not hold spaces"},
			{prefix: "auth add", code: moncmd.EINVAL, status: `missing "entity"`},
			{prefix: "auth get", code: moncmd.EINVAL, status: `missing "entity"`},
			{prefix: "auth add", args: []string{"entity", "mon.*", "caps.mon", "allow r"}, code: moncmd.EPERM, status: "monitors' key"},
			{prefix: "auth get-or-create", args: []string{"entity", "mon.b"}, code: moncmd.EPERM},
			{prefix: "auth import", code: moncmd.EINVAL, status: `missing "keyring"`},
			{prefix: "auth import", args: []string{"keyring", "[client.x]\n"}, code: moncmd.EINVAL, status: "has no key"},
			{prefix: "auth import", args: []string{"keyring", "# nothing\n"}, code: moncmd.EINVAL, status: "no entities"},
			{prefix: "auth import", args: []string{"keyring", "x", "bootstrap", "yes"}, code: moncmd.EINVAL, status: "want true or false"},
			{prefix: "auth ls", args: nil},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMon(t, nil)
			for i, s := range tc.steps {
				r := m.run(s.prefix, s.args...)
				if r.Code != s.code || !strings.Contains(r.Status, s.status) {
					t.Fatalf("step %d %s %v: code %d status %q, want code %d status ~%q", i, s.prefix, s.args, r.Code, r.Status, s.code, s.status)
				}
				if !strings.Contains(r.Text, s.text) {
					t.Errorf("step %d: text\n%q\nwant to contain\n%q", i, r.Text, s.text)
				}
				if !strings.Contains(string(r.Data), s.data) {
					t.Errorf("step %d: data\n%s\nwant to contain\n%s", i, r.Data, s.data)
				}
			}
		})
	}
}

// entityOf decodes the JSON of auth get.
func entityOf(t *testing.T, r moncmd.Reply) entityView {
	t.Helper()
	var v []entityView
	if err := json.Unmarshal(must(t, r).Data, &v); err != nil || len(v) != 1 {
		t.Fatalf("auth get data %s: %v", r.Data, err)
	}
	return v[0]
}

// TestKeysAreKept checks that a key, once created, is what get,
// print-key, get-or-create and the keyring text give, and that caps
// changes keep it.
func TestKeysAreKept(t *testing.T) {
	m := newTestMon(t, nil)
	must(t, m.run("auth add", "entity", "client.k", "caps.mon", "allow r"))
	key := entityOf(t, m.run("auth get", "entity", "client.k")).Key
	if pk := must(t, m.run("auth print-key", "entity", "client.k")).Text; pk != key+"\n" {
		t.Errorf("print-key %q, get %q", pk, key)
	}
	must(t, m.run("auth caps", "entity", "client.k", "caps.mon", "allow rw"))
	if got := entityOf(t, m.run("auth get-or-create", "entity", "client.k", "caps.mon", "allow rw")).Key; got != key {
		t.Error("caps change or get-or-create changed the key")
	}
	kr, err := auth.ParseKeyring([]byte(must(t, m.run("auth get", "entity", "client.k")).Text))
	if err != nil || kr[name("client.k")].Key.Base64() != key || kr[name("client.k")].Caps["mon"] != "allow rw" {
		t.Fatalf("auth get text is not the entity's keyring: %v %v", kr, err)
	}
	must(t, m.run("auth add", "entity", "client.other"))
	if entityOf(t, m.run("auth get", "entity", "client.other")).Key == key {
		t.Error("two entities got the same key")
	}
}

func TestImport(t *testing.T) {
	m := newTestMon(t, nil)
	kr := auth.Keyring{
		name("client.a"): {Key: auth.NewSecret(), Caps: auth.Caps{"mon": "allow r"}},
		name("client.b"): {Key: auth.NewSecret()},
	}
	text, _ := kr.Marshal()
	if r := must(t, m.run("auth import", "keyring", string(text))); !strings.Contains(r.Status, "imported keyring (2 entities)") {
		t.Errorf("import: %q", r.Status)
	}
	if r := must(t, m.run("auth import", "keyring", string(text))); !strings.Contains(r.Status, "already present") {
		t.Errorf("import again: %q", r.Status)
	}
	for n, e := range kr {
		s, caps, err := m.svc.KeyServer().Secret(n)
		if err != nil || s != e.Key || !capsEqual(caps, e.Caps) {
			t.Errorf("%s: %v %v", n, caps, err)
		}
	}
	// Import replaces an entity's key and caps.
	kr2 := auth.Keyring{name("client.a"): {Key: auth.NewSecret(), Caps: auth.Caps{"osd": "allow r"}}}
	text2, _ := kr2.Marshal()
	if r := must(t, m.run("auth import", "keyring", string(text2))); !strings.Contains(r.Status, "(1 entities)") {
		t.Errorf("import over: %q", r.Status)
	}
	if s, caps, _ := m.svc.KeyServer().Secret(name("client.a")); s != kr2[name("client.a")].Key || caps["osd"] != "allow r" || caps["mon"] != "" {
		t.Errorf("client.a after import: %v", caps)
	}
}

// TestMonitorsKey checks the monitors' key is out of the commands' reach
// once bootstrap put it in, and that an import may repeat it unchanged.
func TestMonitorsKey(t *testing.T) {
	seed := seedKeyring()
	m := newTestMon(t, seed)
	m.tick()
	if !m.svc.Seeded() {
		t.Fatal("not seeded")
	}
	for _, c := range []moncmd.Command{
		moncmd.New("auth rm", "entity", "mon.*"),
		moncmd.New("auth caps", "entity", "mon.*", "caps.mon", "allow r"),
		moncmd.New("auth add", "entity", "mon.a"),
		moncmd.New("auth import", "keyring", "[mon.*]\n\tkey = "+auth.NewSecret().Base64()+"\n"),
	} {
		if r := m.runCmd(c); r.Code != moncmd.EPERM {
			t.Errorf("%s: code %d %s", c, r.Code, r.Status)
		}
	}
	text, _ := seed.Marshal()
	if r := must(t, m.run("auth import", "keyring", string(text))); !strings.Contains(r.Status, "already present") {
		t.Errorf("import of the seed again: %s", r.Status)
	}
	if s, _, err := m.svc.KeyServer().Secret(name("mon.*")); err != nil || s != seed[name("mon.*")].Key {
		t.Errorf("mon.* changed: %v", err)
	}
	// client.admin is not protected (as in Ceph): its caps may change.
	must(t, m.run("auth caps", "entity", "client.admin", "caps.mon", "allow r"))
}

// TestStaleProposal checks that a proposal prepared before another change
// committed is refused with EAGAIN and changes nothing.
func TestStaleProposal(t *testing.T) {
	m := newTestMon(t, nil)
	p1, _ := m.svc.Prepare(moncmd.New("auth add", "entity", "client.one"), m.now)
	p2, _ := m.svc.Prepare(moncmd.New("auth add", "entity", "client.two"), m.now)
	must(t, m.commit(p1))
	before := m.dump()
	if r := m.commit(p2); r.Code != moncmd.EAGAIN {
		t.Fatalf("stale proposal: code %d %s", r.Code, r.Status)
	}
	after := m.dump()
	if !maps.EqualFunc(before, after, bytes.Equal) || m.svc.Version() != 1 {
		t.Error("stale proposal changed the database")
	}
	if _, _, err := m.svc.KeyServer().Secret(name("client.two")); err == nil {
		t.Error("stale proposal published an entity")
	}
}

// TestBadProposal checks that a proposal that does not decode, or does not
// fit the database, changes nothing.
func TestBadProposal(t *testing.T) {
	m := newTestMon(t, nil)
	for _, p := range [][]byte{
		{1, 2, 3},
		(&proposal{op: opRm, entities: []namedEntry{{name: name("client.none")}}}).encode(),
		(&proposal{op: opCaps, entities: []namedEntry{{name: name("client.none")}}}).encode(),
	} {
		if r := m.commit(p); r.Code == moncmd.OK {
			t.Errorf("%x applied: %s", p, r.Status)
		}
	}
	if m.svc.Version() != 0 || len(m.dump()) != 0 {
		t.Error("a bad proposal changed the database")
	}
}

// TestDeterminism applies the same proposals on two monitors and compares
// their stores byte for byte: keys drawn in Prepare travel in the proposal.
func TestDeterminism(t *testing.T) {
	seed := seedKeyring()
	a, b := newTestMon(t, seed), newTestMon(t, seed)
	text, _ := seed.Marshal()
	cmds := []moncmd.Command{
		moncmd.New("auth import", "keyring", string(text), "bootstrap", "true"),
		moncmd.New("auth add", "entity", "client.app", "caps.mon", "allow r"),
		moncmd.New("auth get-or-create", "entity", "client.rbd", "caps.osd", "allow rwx pool=rbd"),
		moncmd.New("auth caps", "entity", "client.app", "caps.mon", "allow rw"),
		moncmd.New("auth rotate"),
		moncmd.New("auth rm", "entity", "client.rbd"),
	}
	for _, c := range cmds {
		p, r := a.svc.Prepare(c, a.now)
		if p == nil {
			t.Fatalf("%s: %s", c, r.Status)
		}
		ra, rb := a.commit(p), b.commit(p)
		if ra.Code != 0 || ra.Status != rb.Status || ra.Text != rb.Text {
			t.Fatalf("%s: %+v vs %+v", c, ra, rb)
		}
	}
	da, db := a.dump(), b.dump()
	if len(da) == 0 || !maps.EqualFunc(da, db, bytes.Equal) {
		t.Errorf("stores differ:\n%q\n%q", da, db)
	}
	for _, svc := range []string{"mon", "osd", "mds", "mgr"} {
		ka, _ := a.authority.ServiceKeys(svc)
		kb, _ := b.authority.ServiceKeys(svc)
		if !bytes.Equal(rotatingValue(ka), rotatingValue(kb)) || len(ka.Keys()) == 0 {
			t.Errorf("%s: authorities hold different rotating keys", svc)
		}
	}
}

// TestReload checks that a restarted service reads what was applied and
// hands the rotating keys to its new Authority.
func TestReload(t *testing.T) {
	seed := seedKeyring()
	m := newTestMon(t, seed)
	m.tick()
	must(t, m.run("auth add", "entity", "client.app", "caps.mon", "allow r"))
	before, _ := m.authority.ServiceKeys("osd")
	keys := NewKeyServer(seed)
	m.start(keys, seed)
	if m.svc.Version() != 3 || !m.svc.Seeded() || !keys.Seeded() {
		t.Fatalf("reloaded version %d seeded %v", m.svc.Version(), m.svc.Seeded())
	}
	if _, caps, err := keys.Secret(name("client.app")); err != nil || caps["mon"] != "allow r" {
		t.Errorf("client.app after reload: %v %v", caps, err)
	}
	after, _ := m.authority.ServiceKeys("osd")
	if !bytes.Equal(rotatingValue(before), rotatingValue(after)) {
		t.Error("the new Authority did not get the stored rotating keys")
	}
	if len(m.svc.Tick(m.now)) != 0 {
		t.Error("a reloaded, seeded, rotated database still asks for something")
	}
}
