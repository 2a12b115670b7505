package osdmon

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

const uuidA = "11111111-2222-4333-8444-555555555555"

func TestOSDLifecycle(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"create", []step{
			{prefix: "osd create", status: "created osd.0", text: "0\n", data: `{"osdid":0}`},
			{prefix: "osd create", args: []string{"uuid", uuidA}, status: "created osd.1", text: "1\n"},
			{prefix: "osd create", args: []string{"uuid", "11111111-2222-4333-8444-555555555555"}, status: "exists with uuid", data: `{"osdid":1}`},
			{prefix: "osd create", args: []string{"uuid", "bogus"}, code: moncmd.EINVAL, status: "not a uuid"},
			{prefix: "osd ls", text: "0\n1\n", data: `[0,1]`},
			{prefix: "osd stat", text: "2 osds: 0 up, 0 in; epoch: e3\n", data: `{"epoch":3,"num_osds":2,"num_up_osds":0,"num_in_osds":0,"flags":""}`},
			{prefix: "osd rm", args: []string{"ids", "0"}, status: "removed osd.0"},
			{prefix: "osd create", status: "created osd.0"}, // the lowest free id again
		}},
		{"boot", []step{
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h0"}, code: moncmd.ENOENT, status: "does not exist"},
			{prefix: "osd create", args: []string{"uuid", uuidA}},
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h0", "uuid", "99999999-2222-4333-8444-555555555555"}, code: moncmd.EPERM, status: "belongs to uuid"},
			{prefix: "osd boot", args: []string{"id", "0", "host", "h0"}, code: moncmd.EINVAL, status: `missing "addr"`},
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h0", "weight", "-1"}, code: moncmd.EINVAL, status: "out of"},
			{prefix: "osd set", args: []string{"key", "noup"}, status: "noup is set"},
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h0"}, code: moncmd.EAGAIN, status: "noup is set"},
			{prefix: "osd unset", args: []string{"key", "noup"}, status: "noup is unset"},
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h0", "uuid", uuidA, "weight", "0.5", "class", "ssd"},
				status: "osd.0 booted at a:1, marked in, placed under host=h0 with weight 0.50000"},
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h0"}, status: "already up"},
			{prefix: "osd tree", text: "" +
				"ID  CLASS  WEIGHT   TYPE NAME      STATUS  REWEIGHT  PRI-AFF\n" +
				"-1         0.50000  root default\n" +
				"-2         0.50000      host h0\n" +
				" 0    ssd  0.50000          osd.0      up   1.00000  1.00000\n"},
			{prefix: "osd find", args: []string{"id", "0"}, text: "osd.0 at a:1 (root=default,host=h0)\n",
				data: `{"osd":0,"uuid":"11111111-2222-4333-8444-555555555555","addr":"a:1","host":"h0","crush_location":{"host":"h0","root":"default"}}`},
			{prefix: "osd find", args: []string{"id", "7"}, code: moncmd.ENOENT},
			// A restart at a new address is a new incarnation.
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:2", "host", "h0"}, status: "osd.0 booted at a:2"},
		}},
		{"down out in", []step{
			{prefix: "osd create"}, {prefix: "osd create"},
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h0"}},
			{prefix: "osd boot", args: []string{"id", "1", "addr", "a:2", "host", "h0"}},
			{prefix: "osd down", args: []string{"ids", "0,osd.1"}, status: "marked down osd.0, osd.1"},
			{prefix: "osd down", args: []string{"ids", "0"}, status: "osd.0 is already down"},
			{prefix: "osd down", args: []string{"ids", "5"}, code: moncmd.ENOENT},
			{prefix: "osd down", args: []string{"ids", "x"}, code: moncmd.EINVAL},
			{prefix: "osd down", code: moncmd.EINVAL, status: `missing "ids"`},
			{prefix: "osd out", args: []string{"ids", "0"}, status: "marked out osd.0"},
			{prefix: "osd out", args: []string{"ids", "0 1"}, status: "marked out osd.1; osd.0 is already out"},
			{prefix: "osd stat", text: "2 osds: 0 up, 0 in; epoch: e8\n"},
			{prefix: "osd in", args: []string{"ids", "1"}, status: "marked in osd.1"},
			{prefix: "osd in", args: []string{"ids", "1"}, status: "already in"},
			{prefix: "osd rm", args: []string{"ids", "9"}, code: moncmd.ENOENT},
		}},
		{"lost", []step{
			{prefix: "osd create"},
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h0"}},
			{prefix: "osd lost", args: []string{"id", "0", "yes_i_really_mean_it", "true"}, code: moncmd.EBUSY, status: "osd.0 is up"},
			{prefix: "osd down", args: []string{"ids", "0"}},
			{prefix: "osd lost", args: []string{"id", "0"}, code: moncmd.EPERM, status: "pass --yes-i-really-mean-it"},
			{prefix: "osd lost", args: []string{"id", "0", "yes_i_really_mean_it", "maybe"}, code: moncmd.EINVAL},
			{prefix: "osd lost", args: []string{"id", "3", "yes_i_really_mean_it", "true"}, code: moncmd.ENOENT},
			{prefix: "osd lost", args: []string{"id", "0", "yes_i_really_mean_it", "true"}, status: "marked osd.0 lost at epoch 5"},
			// Back after all: the mark goes.
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:2", "host", "h0"}, status: "osd.0 booted at a:2"},
		}},
		{"rm", []step{
			{prefix: "osd create"},
			{prefix: "osd boot", args: []string{"id", "0", "addr", "a:1", "host", "h0"}},
			{prefix: "osd rm", args: []string{"ids", "0"}, code: moncmd.EBUSY, status: "still up"},
			{prefix: "osd down", args: []string{"ids", "0"}},
			{prefix: "osd rm", args: []string{"ids", "0"}, status: "removed osd.0"},
			{prefix: "osd ls", data: `[]`},
			{prefix: "osd tree", text: "" +
				"ID  CLASS  WEIGHT   TYPE NAME     STATUS  REWEIGHT  PRI-AFF\n" +
				"-1         0.00000  root default\n" +
				"-2         0.00000      host h0\n"},
		}},
		{"reweight", []step{
			{prefix: "osd create"},
			{prefix: "osd reweight", args: []string{"id", "0", "weight", "0.5"}, status: "reweighted osd.0 to 0.50000"},
			{prefix: "osd reweight", args: []string{"id", "0", "weight", "0.5"}, status: "already has reweight"},
			{prefix: "osd reweight", args: []string{"id", "0", "weight", "1.5"}, code: moncmd.EINVAL, status: "out of [0, 1]"},
			{prefix: "osd reweight", args: []string{"id", "0", "weight", "NaN"}, code: moncmd.EINVAL},
			{prefix: "osd reweight", args: []string{"id", "3", "weight", "1"}, code: moncmd.ENOENT},
		}},
		{"flags", []step{
			{prefix: "osd set", args: []string{"key", "noout"}, status: "noout is set"},
			{prefix: "osd set", args: []string{"key", "noout"}, status: "noout is already set"},
			{prefix: "osd set", args: []string{"key", "pause"}, status: "pause is set"},
			{prefix: "osd set", args: []string{"key", "norebalance"}},
			{prefix: "osd stat", text: "0 osds: 0 up, 0 in; epoch: e4\nflags pauserd,pausewr,noout,norebalance\n"},
			{prefix: "osd unset", args: []string{"key", "pause"}, status: "pause is unset"},
			{prefix: "osd unset", args: []string{"key", "nodown"}, status: "already unset"},
			{prefix: "osd set", args: []string{"key", "full"}, code: moncmd.EINVAL, status: "unknown flag"},
			{prefix: "osd set", code: moncmd.EINVAL, status: `missing "key"`},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, newCluster(t), tc.steps) })
	}
}

// TestBootMarksIn checks Ceph's rules for marking a booting OSD in: a new
// OSD and one the monitor marked out come in (unless noin is set); one an
// operator marked out stays out.
func TestBootMarksIn(t *testing.T) {
	m := newCluster(t)
	must(t, m.run("osd create"))
	must(t, m.run("osd set", "key", "noin"))
	must(t, m.run("osd boot", "id", "0", "addr", "a:1", "host", "h0"))
	if o := m.osd(0); !o.IsUp() || o.IsIn() {
		t.Fatalf("noin: osd.0 %+v", o)
	}
	must(t, m.run("osd unset", "key", "noin"))
	must(t, m.run("osd down", "ids", "0"))
	must(t, m.run("osd boot", "id", "0", "addr", "a:1", "host", "h0"))
	if o := m.osd(0); !o.IsIn() {
		t.Fatalf("new osd not marked in on boot: %+v", o)
	}
	must(t, m.run("osd out", "ids", "0"))
	must(t, m.run("osd down", "ids", "0"))
	must(t, m.run("osd boot", "id", "0", "addr", "a:1", "host", "h0"))
	if o := m.osd(0); o.IsIn() || !o.IsUp() {
		t.Fatalf("operator's out should stick: %+v", o)
	}
	if o := m.osd(0); o.State&osdmap.OSDNew != 0 {
		t.Fatalf("state %s", o.State)
	}
}

// A boot with a new nonce is a restart: the OSD gets a new up_from even at
// the same address; the same nonce again changes nothing.
func TestBootNonceMarksRestart(t *testing.T) {
	m := newCluster(t)
	must(t, m.run("osd create"))
	must(t, m.run("osd boot", "id", "0", "addr", "10.0.0.1:6800", "host", "h0", "nonce", "11"))
	first := m.osd(0).UpFrom
	epoch := m.svc.Map().Epoch()
	if r := must(t, m.run("osd boot", "id", "0", "addr", "10.0.0.1:6800", "host", "h0", "nonce", "11")); !strings.Contains(r.Status, "already up") {
		t.Fatalf("same nonce: %q", r.Status)
	}
	if m.svc.Map().Epoch() != epoch {
		t.Fatal("a repeated boot made a new epoch")
	}
	must(t, m.run("osd boot", "id", "0", "addr", "10.0.0.1:6800", "host", "h0", "nonce", "12"))
	if o := m.osd(0); !o.IsUp() || o.UpFrom <= first {
		t.Fatalf("after a restart: up %v, up_from %d (was %d)", o.IsUp(), o.UpFrom, first)
	}
	if r := m.run("osd boot", "id", "0", "addr", "10.0.0.1:6800", "host", "h0", "nonce", "x"); r.Code != moncmd.EINVAL {
		t.Fatalf("bad nonce: %+v", r)
	}
}

// An OSD asks to be marked down when its store fails; a late request
// from an earlier incarnation (another address) changes nothing.
func TestMarkMeDown(t *testing.T) {
	m := newBootedCluster(t, 2, 1)
	addr := m.osd(1).Addr
	if r := m.run("osd markmedown", "id", "1", "addr", "10.9.9.9:1"); r.Code != moncmd.OK || !m.osd(1).IsUp() {
		t.Fatalf("another incarnation's request: %+v; up %v", r, m.osd(1).IsUp())
	}
	if r := must(t, m.run("osd markmedown", "id", "1", "addr", addr)); !strings.Contains(r.Status, "own request") || m.osd(1).IsUp() {
		t.Fatalf("own request: %+v; up %v", r, m.osd(1).IsUp())
	}
	if r := m.run("osd markmedown", "id", "1"); r.Code != moncmd.EINVAL {
		t.Fatalf("without addr: %+v", r)
	}
	if r := m.run("osd markmedown", "id", "7", "addr", addr); r.Code != moncmd.ENOENT {
		t.Fatalf("unknown osd: %+v", r)
	}
}

// A primary asks for its up_thru before it activates a PG (Ceph's
// MOSDAlive): the map records it, never lower than before; a request
// already satisfied proposes nothing; requests from another incarnation,
// for epochs the map has not reached, or for a missing OSD are refused.
func TestAlive(t *testing.T) {
	m := newBootedCluster(t, 2, 1)
	addr := m.osd(1).Addr
	e := m.svc.Map().Epoch()
	want := fmt.Sprint(e)
	if r := must(t, m.run("osd alive", "id", "1", "addr", addr, "want", want)); m.osd(1).UpThru != e {
		t.Fatalf("after alive %d: %+v; up_thru %d", e, r, m.osd(1).UpThru)
	}
	epoch := m.svc.Map().Epoch()
	if r := must(t, m.run("osd alive", "id", "1", "addr", addr, "want", "1")); !strings.Contains(r.Status, "already") ||
		m.svc.Map().Epoch() != epoch || m.osd(1).UpThru != e {
		t.Fatalf("an older want: %+v; epoch %d (was %d), up_thru %d", r, m.svc.Map().Epoch(), epoch, m.osd(1).UpThru)
	}
	for _, tc := range []struct {
		args []string
		code int32
	}{
		{[]string{"id", "1", "addr", "10.9.9.9:1", "want", want}, moncmd.EAGAIN},
		{[]string{"id", "1", "addr", addr, "want", fmt.Sprint(epoch + 5)}, moncmd.EINVAL},
		{[]string{"id", "1", "addr", addr, "want", "0"}, moncmd.EINVAL},
		{[]string{"id", "1", "addr", addr}, moncmd.EINVAL},
		{[]string{"id", "7", "addr", addr, "want", want}, moncmd.ENOENT},
	} {
		if r := m.run("osd alive", tc.args...); r.Code != tc.code {
			t.Errorf("osd alive %v: %+v, want code %d", tc.args, r, tc.code)
		}
	}
}

// osd blocklist add, ls and rm, with expiry.
func TestBlocklistCommands(t *testing.T) {
	m := newCluster(t)
	r := must(t, m.run("osd blocklist add", "addr", "10.0.0.5:6800/42", "expire", "60"))
	var added struct {
		Addr          string  `json:"addr"`
		Until         string  `json:"until"`
		ExpireSeconds float64 `json:"expire_seconds"`
		Epoch         uint64  `json:"epoch"`
	}
	if err := json.Unmarshal(r.Data, &added); err != nil || added.Addr != "10.0.0.5:6800/42" || added.ExpireSeconds != 60 ||
		added.Epoch != uint64(m.svc.Map().Epoch()) || added.Until != m.now.Add(time.Minute).UTC().Format(time.RFC3339Nano) {
		t.Fatalf("add's JSON: %s (%v), map epoch %d", r.Data, err, m.svc.Map().Epoch())
	}
	must(t, m.run("osd blocklist rm", "addr", "10.0.0.5:6800/42"))
	must(t, m.run("osd blocklist add", "addr", "10.0.0.5:6800", "expire", "60"))
	must(t, m.run("osd blocklist add", "addr", "10.0.0.6"))
	if r := m.run("osd blocklist add", "addr", "two words"); r.Code != moncmd.EINVAL {
		t.Fatalf("bad address: %d %s", r.Code, r.Status)
	}
	if r := m.run("osd blocklist add", "addr", "10.0.0.7", "expire", "0"); r.Code != moncmd.EINVAL {
		t.Fatalf("expire 0: %d %s", r.Code, r.Status)
	}
	om := m.svc.Map()
	if !om.IsBlocklisted("10.0.0.5:6800", m.now) || !om.IsBlocklisted("10.0.0.6:1", m.now.Add(59*time.Minute)) || om.IsBlocklisted("10.0.0.5:6800", m.now.Add(time.Minute)) {
		t.Fatalf("blocklist %v", om.Blocklist())
	}
	if r := must(t, m.run("osd blocklist ls")); !strings.Contains(r.Text, "10.0.0.5:6800 ") || !strings.Contains(r.Text, "listed 2 entries") {
		t.Fatalf("ls: %q", r.Text)
	}
	// An hour and a bit later the next change drops both expired entries.
	m.now = m.now.Add(61 * time.Minute)
	must(t, m.run("osd blocklist add", "addr", "10.0.0.8:1"))
	if got := m.svc.Map().BlocklistAddrs(); len(got) != 1 || got[0] != "10.0.0.8:1" {
		t.Fatalf("after expiry: %v", got)
	}
	must(t, m.run("osd blocklist rm", "addr", "10.0.0.8:1"))
	if r := m.run("osd blocklist rm", "addr", "10.0.0.8:1"); r.Code != moncmd.OK || !strings.Contains(r.Status, "isn't blocklisted") {
		t.Fatalf("rm twice: %d %s", r.Code, r.Status)
	}
}
