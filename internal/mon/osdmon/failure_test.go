package osdmon

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// report sends a failure report at the monitor's current time.
func (m *testMon) report(target, reporter string, failedFor float64) moncmd.Reply {
	m.t.Helper()
	return must(m.t, m.run("osd failure", "target", target, "reporter", reporter,
		"failed_for", strconv.FormatFloat(failedFor, 'f', -1, 64)))
}

// TestFailureReportersByHost checks that reports count by failure domain
// (hosts by default): two reporters on one host are one domain.
func TestFailureReportersByHost(t *testing.T) {
	// osd.0-1 on h0, osd.2-3 on h1, osd.4-5 on h2.
	m := newBootedCluster(t, 6, 2)
	r := m.report("4", "0", 30)
	if !strings.Contains(r.Status, "1 of 2 reporters' failure domains") || !m.osd(4).IsUp() {
		t.Fatalf("one reporter: %s", r.Status)
	}
	m.report("4", "1", 30) // same host as osd.0
	if !m.osd(4).IsUp() {
		t.Fatal("two reporters on one host marked osd.4 down")
	}
	r = m.report("4", "2", 30) // a second host
	if m.osd(4).IsUp() || !strings.Contains(r.Status, "marked down osd.4: 2 of 2") {
		t.Fatalf("two hosts did not mark osd.4 down: %s", r.Status)
	}
	if len(m.svc.PendingFailures()) != 0 {
		t.Errorf("reports of a down target kept: %v", m.svc.PendingFailures())
	}
	if got := m.run("osd failure", "target", "4", "reporter", "0", "failed_for", "30"); !strings.Contains(got.Status, "already down") {
		t.Errorf("report on a down osd: %s", got.Status)
	}
}

// TestFailureSubtreeLevel counts reporters by OSD when the level is osd,
// and by themselves when they have no ancestor of the level.
func TestFailureSubtreeLevel(t *testing.T) {
	for _, level := range []string{"osd", "rack"} {
		t.Run(level, func(t *testing.T) {
			m := newBootedCluster(t, 4, 2)
			must(t, m.run("config set", "who", "mon", "name", "mon_osd_reporter_subtree_level", "value", level))
			m.report("3", "0", 30)
			m.report("3", "1", 30) // same host, but counted apart
			if m.osd(3).IsUp() {
				t.Fatal("two osds should count as two reporters")
			}
		})
	}
}

// TestFailureGrace checks that reports only take effect once the target
// has been failing for osd_heartbeat_grace, and that Tick acts when the
// grace passes without new reports.
func TestFailureGrace(t *testing.T) {
	m := newBootedCluster(t, 3, 1)
	m.report("2", "0", 5)
	m.report("2", "1", 5)
	if !m.osd(2).IsUp() {
		t.Fatal("marked down within the grace")
	}
	m.now = m.now.Add(14 * time.Second) // failing for 19 s
	if cmds := m.svc.Tick(m.now); len(cmds) != 0 {
		t.Fatalf("tick within the grace: %v", cmds)
	}
	m.now = m.now.Add(time.Second) // 20 s: the default grace
	cmds := m.svc.Tick(m.now)
	if len(cmds) != 1 || cmds[0].String() != `osd failure target="2"` {
		t.Fatalf("tick after the grace: %v", cmds)
	}
	m.tick()
	if m.osd(2).IsUp() {
		t.Fatal("not marked down after the grace")
	}
	if since := m.svc.meta[2].DownSince; !since.Equal(m.now) {
		t.Errorf("down since %v, want %v", since, m.now)
	}
}

// TestFailureCancel checks that a reporter that hears from the target
// again withdraws its report, and that down reporters do not count.
func TestFailureCancel(t *testing.T) {
	m := newBootedCluster(t, 5, 1)
	must(t, m.run("config set", "who", "mon", "name", "mon_osd_min_down_reporters", "value", "3"))
	m.report("4", "0", 30)
	must(t, m.run("osd failure", "target", "4", "reporter", "0", "alive", "true"))
	if r := m.report("4", "1", 30); !strings.Contains(r.Status, "1 of 3") {
		t.Fatalf("a cancelled report counted: %s", r.Status)
	}
	if r := m.report("4", "2", 30); !strings.Contains(r.Status, "2 of 3") {
		t.Fatalf("second reporter: %s", r.Status)
	}
	// A report from an OSD that later goes down stops counting.
	must(t, m.run("osd down", "ids", "2"))
	if r := m.run("osd failure", "target", "4"); !m.osd(4).IsUp() || !strings.Contains(r.Status, "1 of 3") {
		t.Fatalf("a down reporter counted: %s", r.Status)
	}
	for _, tc := range []struct {
		args []string
		code int32
	}{
		{[]string{"target", "4", "reporter", "2", "failed_for", "30"}, moncmd.EINVAL}, // reporter is down
		{[]string{"target", "9", "reporter", "0"}, moncmd.ENOENT},
		{[]string{"target", "4", "reporter", "4"}, moncmd.EINVAL},
		{[]string{"target", "4", "reporter", "1", "failed_for", "-1"}, moncmd.EINVAL},
		{[]string{"target", "4", "reporter", "1", "failed_for", "soon"}, moncmd.EINVAL},
		{[]string{"target", "4", "reporter", "1", "alive", "perhaps"}, moncmd.EINVAL},
		{[]string{"reporter", "1"}, moncmd.EINVAL},
	} {
		if r := m.run("osd failure", tc.args...); r.Code != tc.code {
			t.Errorf("%v: code %d %s, want %d", tc.args, r.Code, r.Status, tc.code)
		}
	}
	// A reboot of the target drops the reports about it.
	must(t, m.run("osd down", "ids", "4"))
	must(t, m.run("osd boot", "id", "4", "addr", "10.0.0.4:6800", "host", "h4"))
	m.report("4", "0", 30)
	if len(m.svc.PendingFailures()) != 1 {
		t.Fatal("report not pending")
	}
	must(t, m.run("osd boot", "id", "4", "addr", "10.0.0.4:6801", "host", "h4")) // restarted while up
	if p := m.svc.PendingFailures(); len(p) != 0 {
		t.Errorf("reports survived a reboot: %v", p)
	}
}

// TestFailureNodown checks that nodown holds reports back until unset.
func TestFailureNodown(t *testing.T) {
	m := newBootedCluster(t, 3, 1)
	must(t, m.run("osd set", "key", "nodown"))
	m.report("2", "0", 30)
	r := m.report("2", "1", 30)
	if !m.osd(2).IsUp() || !strings.Contains(r.Status, "nodown is set") {
		t.Fatalf("nodown: %s", r.Status)
	}
	if cmds := m.svc.Tick(m.now); len(cmds) != 0 {
		t.Fatalf("tick under nodown: %v", cmds)
	}
	must(t, m.run("osd unset", "key", "nodown"))
	m.tick()
	if m.osd(2).IsUp() {
		t.Fatal("not marked down once nodown was unset")
	}
}

// TestDownOut checks the down-out rules: a down OSD is marked out after
// mon_osd_down_out_interval unless noout is set, and comes back in when
// it boots again; an interval of 0 never marks out.
func TestDownOut(t *testing.T) {
	m := newBootedCluster(t, 3, 1)
	must(t, m.run("osd down", "ids", "1"))
	m.now = m.now.Add(599 * time.Second)
	if cmds := m.svc.Tick(m.now); len(cmds) != 0 {
		t.Fatalf("tick before the interval: %v", cmds)
	}
	// A command prepared early is refused by the check in Prepare.
	if r := m.run("osd out", "ids", "1", "auto", "true"); !strings.Contains(r.Status, "not due") || !m.osd(1).IsIn() {
		t.Fatalf("early auto out: %s", r.Status)
	}
	must(t, m.run("osd set", "key", "noout"))
	m.now = m.now.Add(time.Hour)
	if cmds := m.svc.Tick(m.now); len(cmds) != 0 {
		t.Fatalf("tick under noout: %v", cmds)
	}
	must(t, m.run("osd unset", "key", "noout"))
	cmds := m.svc.Tick(m.now)
	if len(cmds) != 1 || cmds[0].Prefix != "osd out" || cmds[0].Args["ids"] != "1" {
		t.Fatalf("tick after the interval: %v", cmds)
	}
	m.tick()
	if o := m.osd(1); o.IsIn() || o.State&osdmap.OSDAutoOut == 0 {
		t.Fatalf("not auto out: %+v", o)
	}
	if cmds := m.svc.Tick(m.now); len(cmds) != 0 {
		t.Fatalf("tick after out: %v", cmds)
	}
	// Booting again marks it back in.
	must(t, m.run("osd boot", "id", "1", "addr", "10.0.0.1:6800", "host", "h1"))
	if o := m.osd(1); !o.IsIn() || !o.IsUp() || o.State&osdmap.OSDAutoOut != 0 {
		t.Fatalf("not back in after boot: %+v", o)
	}

	must(t, m.run("config set", "who", "mon", "name", "mon_osd_down_out_interval", "value", "0"))
	must(t, m.run("osd down", "ids", "2"))
	m.now = m.now.Add(24 * time.Hour)
	if cmds := m.svc.Tick(m.now); len(cmds) != 0 {
		t.Fatalf("interval 0 should never mark out: %v", cmds)
	}
}

// TestDownOutAcrossLeaders checks that a new leader (a monitor that
// loads the store) computes the same down-out deadline: the down time is
// in the replicated state, not in the old leader's memory.
func TestDownOutAcrossLeaders(t *testing.T) {
	m := newBootedCluster(t, 2, 1)
	must(t, m.run("osd down", "ids", "0"))
	downAt := m.now
	leader2, err := New(Config{Options: m.cfg.View("mon")})
	if err != nil {
		t.Fatal(err)
	}
	if err := leader2.Load(m.st); err != nil {
		t.Fatal(err)
	}
	if cmds := leader2.Tick(downAt.Add(599 * time.Second)); len(cmds) != 0 {
		t.Fatalf("new leader too early: %v", cmds)
	}
	if cmds := leader2.Tick(downAt.Add(600 * time.Second)); len(cmds) != 1 {
		t.Fatalf("new leader did not mark out at the deadline: %v", cmds)
	}
}

// TestJudgeFailure is the failure rule as a table: enough domains and
// the grace, or enough domains reporting a refused connection; never
// under nodown; one domain (one bad link) is never enough when two are
// needed, immediate or not.
func TestJudgeFailure(t *testing.T) {
	now := time.Unix(10_000, 0)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	rep := func(domain string, failedFor time.Duration, immediate bool) judgedReport {
		return judgedReport{domain: domain, failureReport: failureReport{since: ago(failedFor), immediate: immediate}}
	}
	grace := 20 * time.Second
	for _, tc := range []struct {
		name    string
		reports []judgedReport
		need    int
		nodown  bool
		want    bool
		domains int
		refused int
	}{
		{"no reports", nil, 2, false, false, 0, 0},
		{"one domain past the grace", []judgedReport{rep("host=a", 30*time.Second, false)}, 2, false, false, 1, 0},
		{"two domains within the grace", []judgedReport{rep("host=a", 5*time.Second, false), rep("host=b", 5*time.Second, false)}, 2, false, false, 2, 0},
		{"two domains, oldest past the grace", []judgedReport{rep("host=a", 21*time.Second, false), rep("host=b", time.Second, false)}, 2, false, true, 2, 0},
		{"exactly the grace", []judgedReport{rep("host=a", grace, false), rep("host=b", grace, false)}, 2, false, true, 2, 0},
		{"two refused domains at once", []judgedReport{rep("host=a", 300*time.Millisecond, true), rep("host=b", 0, true)}, 2, false, true, 2, 2},
		{"one refused link", []judgedReport{rep("host=a", 0, true)}, 2, false, false, 1, 1},
		{"one refused link, two reporters on its host", []judgedReport{rep("host=a", 0, true), rep("host=a", 0, true)}, 2, false, false, 1, 1},
		{"one refused, one quiet within the grace", []judgedReport{rep("host=a", 0, true), rep("host=b", 3*time.Second, false)}, 2, false, false, 2, 1},
		{"one refused, one quiet past the grace", []judgedReport{rep("host=a", 0, true), rep("host=b", 25*time.Second, false)}, 2, false, true, 2, 1},
		{"one refused, one needed", []judgedReport{rep("osd.1", 0, true)}, 1, false, true, 1, 1},
		{"need 0 counts as 1", []judgedReport{rep("osd.1", 0, true)}, 0, false, true, 1, 1},
		{"three needed, two refused", []judgedReport{rep("host=a", 0, true), rep("host=b", 0, true)}, 3, false, false, 2, 2},
		{"nodown holds refused reports", []judgedReport{rep("host=a", 0, true), rep("host=b", 0, true)}, 2, true, false, 2, 2},
		{"nodown holds the grace", []judgedReport{rep("host=a", time.Hour, false), rep("host=b", time.Hour, false)}, 2, true, false, 2, 0},
		{"a report from the future", []judgedReport{rep("host=a", -time.Minute, false), rep("host=b", -time.Minute, false)}, 2, false, false, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judgeFailure(tc.reports, failureRules{need: tc.need, grace: grace, nodown: tc.nodown}, now)
			if v.markDown != tc.want || v.domains != tc.domains || v.immediate != tc.refused {
				t.Errorf("got %+v (%s); want markDown %v, %d domains, %d refused", v, v, tc.want, tc.domains, tc.refused)
			}
		})
	}
}

// TestFailureImmediate: peers whose connections to an OSD are refused
// report it immediate, and two hosts' reports mark it down at once, no
// grace; one host's (one bad link) do not, however long it lasts, until
// a second host agrees. A report on an earlier incarnation is ignored.
func TestFailureImmediate(t *testing.T) {
	// osd.0-1 on h0, osd.2-3 on h1, osd.4-5 on h2.
	m := newBootedCluster(t, 6, 2)
	refused := func(target, reporter string, kv ...string) moncmd.Reply {
		t.Helper()
		return must(t, m.run("osd failure", append([]string{"target", target, "reporter", reporter, "failed_for", "0.2",
			"immediate", "true"}, kv...)...))
	}
	refused("4", "0")
	if r := refused("4", "1"); !m.osd(4).IsUp() || !strings.Contains(r.Status, "1 of 2 reporters' failure domains (1 refused by it)") {
		t.Fatalf("one host's refusals: %s", r.Status)
	}
	m.now = m.now.Add(10 * time.Second)
	m.tick()
	if !m.osd(4).IsUp() {
		t.Fatal("one refusing host marked osd.4 down within the grace")
	}
	upFrom := fmt.Sprint(m.osd(4).UpFrom)
	if r := refused("4", "2", "up_from", fmt.Sprint(m.osd(4).UpFrom-1)); !strings.Contains(r.Status, "ignored") || !m.osd(4).IsUp() {
		t.Fatalf("a report on an earlier incarnation: %s", r.Status)
	}
	r := refused("4", "2", "up_from", upFrom)
	if m.osd(4).IsUp() || !strings.Contains(r.Status, "marked down osd.4: 2 of 2 reporters' failure domains (2 refused by it)") {
		t.Fatalf("two hosts' refusals did not mark osd.4 down at once: %s", r.Status)
	}
	for _, args := range [][]string{
		{"target", "5", "reporter", "0", "immediate", "maybe"},
		{"target", "5", "reporter", "0", "up_from", "soon"},
	} {
		if r := m.run("osd failure", args...); r.Code != moncmd.EINVAL {
			t.Errorf("%v: code %d %s, want EINVAL", args, r.Code, r.Status)
		}
	}
}
