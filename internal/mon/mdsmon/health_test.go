package mdsmon

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/health"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// reportedOnly keeps the checks made of the ranks' health reports.
func reportedOnly(cs []health.Check) []health.Check {
	var out []health.Check
	for _, c := range cs {
		if c.Code == "MDS_SLOW_REQUEST" || c.Code == "MDS_CLIENT_LATE_RELEASE" || c.Code == "MDS_DAMAGE" {
			out = append(out, c)
		}
	}
	return out
}

// The health a rank holder reports in its beacons becomes
// MDS_SLOW_REQUEST and MDS_CLIENT_LATE_RELEASE on the leader, in Ceph's
// words; they clear with the next report that says so, and when the
// daemon leaves the map.
func TestReportedHealth(t *testing.T) {
	m := newCluster(t)
	must(t, m.run("fs new", "fs_name", "cephfs", "metadata", "meta", "data", "data"))
	must(t, m.run("fs set", "fs_name", "cephfs", "var", "standby_count_wanted", "val", "0"))
	a, b := newMDS("a", 1), newMDS("b", 2)
	for range 3 {
		a.send(m)
		b.send(m)
	}
	if got := m.mds.Map().Summary(); got != "cephfs:1 {0=a=up:active} 1 up:standby" {
		t.Fatalf("map: %s", got)
	}
	m.tick() // the leader
	late := func(id uint64, entity, host string) wire.MDSLateRelease {
		return wire.MDSLateRelease{ClientID: id, Entity: entity, Host: host, Ino: 0x10000000000, Age: 31 * time.Second}
	}
	for _, tc := range []struct {
		name   string
		a, b   wire.MDSHealth // b is a standby: its report is ignored
		want   []health.Check
		status string // fs status's rank line
	}{
		{name: "quiet", a: wire.MDSHealth{Sessions: 2, InFlight: 1, ComplaintTime: 30 * time.Second},
			status: "0     active  a    1    10.1.0.1:68a  2        1"},
		{name: "slow", a: wire.MDSHealth{Sessions: 1, InFlight: 5, Slow: 3, ComplaintTime: 30 * time.Second, Oldest: time.Minute},
			want: []health.Check{{Code: "MDS_SLOW_REQUEST", Severity: health.Warn, Summary: "1 MDSs report slow requests",
				Detail: []string{"mds.a(mds.0): 3 slow requests are blocked > 30 secs"}}}},
		{name: "late release",
			a: wire.MDSHealth{Sessions: 2, ComplaintTime: 30 * time.Second, LateClients: 2,
				LateRelease: []wire.MDSLateRelease{late(4305, "client.admin", "10.0.0.9"), late(4306, "client.b", "")}},
			b: wire.MDSHealth{Slow: 9, InFlight: 9, LateClients: 1, LateRelease: []wire.MDSLateRelease{late(1, "client.x", "h")}},
			want: []health.Check{{Code: "MDS_CLIENT_LATE_RELEASE", Severity: health.Warn, Summary: "2 clients failing to respond to capability release",
				Detail: []string{"mds.a(mds.0): Client 10.0.0.9:client.admin failing to respond to capability release client_id: 4305",
					"mds.a(mds.0): Client client.b failing to respond to capability release client_id: 4306"}}}},
		{name: "many late", a: wire.MDSHealth{ComplaintTime: 30 * time.Second, LateClients: 12, Slow: 1, InFlight: 1,
			LateRelease: []wire.MDSLateRelease{late(1, "client.a", "h")}},
			want: []health.Check{
				{Code: "MDS_SLOW_REQUEST", Severity: health.Warn, Summary: "1 MDSs report slow requests",
					Detail: []string{"mds.a(mds.0): 1 slow requests are blocked > 30 secs"}},
				{Code: "MDS_CLIENT_LATE_RELEASE", Severity: health.Warn, Summary: "12 clients failing to respond to capability release",
					Detail: []string{"mds.a(mds.0): Many clients (12) failing to respond to capability release"}}}},
		{name: "damaged metadata", a: wire.MDSHealth{ComplaintTime: 30 * time.Second, Damaged: 2},
			b: wire.MDSHealth{Damaged: 5},
			want: []health.Check{{Code: "MDS_DAMAGE", Severity: health.Err, Summary: "1 MDSs report damaged metadata",
				Detail: []string{"mds.a(mds.0): Metadata damage detected: 2 objects (requests in them get EIO; cuttle fs scrub lists them)"}}}},
		{name: "cleared", a: wire.MDSHealth{ComplaintTime: 30 * time.Second},
			status: "0     active  a    1    10.1.0.1:68a  0        0"},
	} {
		a.b.Health, b.b.Health = tc.a, tc.b
		a.send(m)
		b.send(m)
		m.now = m.now.Add(time.Second)
		m.tick()
		if got := reportedOnly(m.mds.HealthChecks(m.now)); !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("%s: checks %+v, want %+v", tc.name, got, tc.want)
		}
		if tc.status != "" {
			if r := must(t, m.run("fs status")); !strings.Contains(r.Text, tc.status) {
				t.Fatalf("%s: fs status lacks %q:\n%s", tc.name, tc.status, r.Text)
			}
		}
	}
	// fs status's JSON has the counts.
	var v MapView
	if err := json.Unmarshal(must(t, m.run("fs status")).Data, &v); err != nil {
		t.Fatal(err)
	}
	if r := v.FileSystems[0].Ranks[0]; r.Clients == nil || *r.Clients != 0 || r.Requests == nil || *r.Requests != 0 {
		t.Fatalf("fs status JSON rank %+v", r)
	}

	// A daemon that leaves the map takes its report with it.
	a.b.Health = wire.MDSHealth{InFlight: 2, Slow: 2, ComplaintTime: 30 * time.Second}
	a.send(m)
	if got := codes(reportedOnly(m.mds.HealthChecks(m.now))); got != "MDS_SLOW_REQUEST" {
		t.Fatalf("slow again: %q", got)
	}
	must(t, m.run("mds fail", "role_or_gid", "a"))
	m.now = m.now.Add(time.Second)
	m.tick()
	if got := reportedOnly(m.mds.HealthChecks(m.now)); len(got) != 0 {
		t.Fatalf("after a left the map: %+v", got)
	}
	if len(m.mds.reports) != 0 {
		t.Fatalf("reports kept: %+v", m.mds.reports)
	}

	// Only the leader reports them: a monitor that stopped ticking
	// (another leads) does not.
	b.b.Health = wire.MDSHealth{InFlight: 2, Slow: 2, ComplaintTime: 30 * time.Second}
	for range 5 {
		b.send(m)
	}
	if h := m.mds.Map().Holder(1, 0); h == nil || h.Name != "b" || h.State != mdsmap.StateActive {
		t.Fatalf("rank 0: %+v", h)
	}
	if got := codes(reportedOnly(m.mds.HealthChecks(m.now))); got != "MDS_SLOW_REQUEST" {
		t.Fatalf("b slow: %q", got)
	}
	m.now = m.now.Add(time.Minute)
	if got := reportedOnly(m.mds.HealthChecks(m.now)); len(got) != 0 {
		t.Fatalf("not leading: %+v", got)
	}
}
