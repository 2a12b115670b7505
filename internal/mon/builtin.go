package mon

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/health"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

// builtin returns the handler of a command the monitor answers itself.
func (m *Monitor) builtin(prefix string) (func(moncmd.Command, time.Time) moncmd.Reply, bool) {
	switch prefix {
	case "status":
		return m.cmdStatus, true
	case "health":
		return m.cmdHealth, true
	case "mon stat":
		return m.cmdMonStat, true
	case "mon dump":
		return m.cmdMonDump, true
	case "quorum_status":
		return m.cmdQuorum, true
	}
	return nil, false
}

// HealthSource is a service that reports health checks (osdmon's
// OSD_DOWN, OSDMAP_FLAGS, ...).
type HealthSource interface {
	HealthChecks(now time.Time) []health.Check
}

// health gathers the monitor's own checks and its services' into one
// report.
func (m *Monitor) health(now time.Time) health.Report {
	var down, skewed []string
	for _, v := range m.view(now) {
		if !v.Up {
			down = append(down, fmt.Sprintf("mon.%s (rank %d) addr %s is down (out of quorum)", v.Name, v.Rank, v.Addr))
		}
		if v.Skewed {
			skewed = append(skewed, fmt.Sprintf("mon.%s clock skew %v > max %v", v.Name, v.Offset.Round(time.Millisecond), m.cfg.MaxClockSkew))
		}
	}
	var checks []health.Check
	if len(down) > 0 {
		checks = append(checks, health.Check{Code: "MON_DOWN", Severity: health.Warn,
			Summary: fmt.Sprintf("%d/%d mons down, quorum %s", len(down), len(m.cfg.MonMap.Mons), strings.Join(m.quorum(now), ",")), Detail: down})
	}
	if len(skewed) > 0 {
		checks = append(checks, health.Check{Code: "MON_CLOCK_SKEW", Severity: health.Warn,
			Summary: "clock skew detected on " + strings.Join(skewedNames(skewed), ", "), Detail: skewed})
	}
	m.svcMu.Lock()
	for _, s := range m.cfg.Services {
		if h, ok := s.(HealthSource); ok {
			checks = append(checks, h.HealthChecks(now)...)
		}
	}
	m.svcMu.Unlock()
	return health.Summarize(checks)
}

func skewedNames(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _, _ = strings.Cut(l, " ")
	}
	return out
}

// quorum names the monitors this one hears from (and itself).
func (m *Monitor) quorum(now time.Time) []string {
	var q []string
	for _, v := range m.view(now) {
		if v.Up {
			q = append(q, v.Name)
		}
	}
	return q
}

func (m *Monitor) cmdHealth(cmd moncmd.Command, now time.Time) moncmd.Reply {
	r := m.health(now)
	detail := cmd.StrOr("detail", "") != ""
	return moncmd.Reply{Data: r.JSON(detail), Text: r.Text(detail)}
}

func (m *Monitor) monInfo(now time.Time) map[string]any {
	m.mu.Lock()
	leader, term := m.leader, m.term
	m.mu.Unlock()
	mons := m.view(now)
	var leaderName string
	if mi, ok := m.cfg.MonMap.ByID(leader); ok {
		leaderName = mi.Name
	}
	return map[string]any{"fsid": m.cfg.MonMap.FSID, "mons": mons, "leader": leaderName,
		"term": term, "quorum": m.quorum(now)}
}

func (m *Monitor) cmdMonStat(_ moncmd.Command, now time.Time) moncmd.Reply {
	info := m.monInfo(now)
	data, _ := json.Marshal(info)
	text := fmt.Sprintf("%d mons at {%s}, term %d, leader %s, quorum %s\n", len(m.cfg.MonMap.Mons), m.cfg.MonMap.String(),
		info["term"], info["leader"], strings.Join(info["quorum"].([]string), ","))
	return moncmd.Reply{Data: data, Text: text}
}

func (m *Monitor) cmdQuorum(cmd moncmd.Command, now time.Time) moncmd.Reply {
	return m.cmdMonStat(cmd, now)
}

func (m *Monitor) cmdMonDump(_ moncmd.Command, now time.Time) moncmd.Reply {
	var b strings.Builder
	fmt.Fprintf(&b, "fsid %s\n", m.cfg.MonMap.FSID)
	for i, mi := range m.cfg.MonMap.Mons {
		fmt.Fprintf(&b, "%d: %s mon.%s\n", i, mi.Addr, mi.Name)
	}
	data, _ := json.Marshal(map[string]any{"fsid": m.cfg.MonMap.FSID, "mons": m.view(now)})
	return moncmd.Reply{Data: data, Text: b.String()}
}

// StatusSource is a service that adds sections of its own to the text
// of "status", after the services (pgmon's data and progress).
type StatusSource interface {
	StatusText(now time.Time) string
}

// pgmapService is the PG statistics service, whose stat command is "pg
// stat"; mdsmapService the MDS map's, "mds stat".
const (
	pgmapService  = "pgmap"
	mdsmapService = "mdsmap"
)

// statPrefix is the read command whose reply "status" shows for a
// service: "<name> stat", or Ceph's names for the maps.
func statPrefix(service string) string {
	switch service {
	case osdmapService:
		return "osd stat"
	case pgmapService:
		return "pg stat"
	case mdsmapService:
		return "mds stat"
	}
	return service + " stat"
}

// cmdStatus is the cluster summary (ceph -s): health, monitors, each
// service's "stat" command when it has one, and the sections of status
// sources.
func (m *Monitor) cmdStatus(_ moncmd.Command, now time.Time) moncmd.Reply {
	rep := m.health(now)
	info := m.monInfo(now)
	quorum := info["quorum"].([]string)
	var b strings.Builder
	fmt.Fprintf(&b, "  cluster:\n    id:     %s\n    health: %s\n", m.cfg.MonMap.FSID, rep.Status)
	for _, c := range rep.Checks {
		fmt.Fprintf(&b, "            %s\n", c.Summary)
	}
	fmt.Fprintf(&b, "\n  services:\n    mon: %d daemons, quorum %s (leader %s)\n", len(m.cfg.MonMap.Mons), strings.Join(quorum, ","), info["leader"])
	var healthJSON any
	_ = json.Unmarshal(rep.JSON(false), &healthJSON)
	data := map[string]any{"fsid": m.cfg.MonMap.FSID, "health": healthJSON, "monmap": info}
	var sections []string
	m.svcMu.Lock()
	for _, s := range m.cfg.Services {
		src, own := s.(StatusSource)
		if own {
			sections = append(sections, src.StatusText(now))
		}
		stat := statPrefix(s.Name())
		if ok, write := s.Handles(stat); !ok || write {
			continue
		}
		r := s.Query(moncmd.New(stat))
		if r.Code != moncmd.OK {
			continue
		}
		if !own && strings.TrimSpace(r.Text) != "" {
			fmt.Fprintf(&b, "    %s: %s\n", strings.Fields(stat)[0], strings.TrimSpace(r.Text))
		}
		var v any
		if json.Unmarshal(r.Data, &v) == nil {
			data[s.Name()] = v
		}
	}
	m.svcMu.Unlock()
	for _, sec := range sections {
		b.WriteString("\n" + sec)
	}
	js, _ := json.Marshal(data)
	return moncmd.Reply{Data: js, Text: b.String()}
}
