package pgmon

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

// queryDF answers "df".
func (s *Service) queryDF(moncmd.Command) moncmd.Reply {
	m := s.cfg.Map()
	if m == nil {
		return errNoMap()
	}
	v := s.dfView(m)
	return replyJSON(v, v.Text())
}

// queryOSDDF answers "osd df".
func (s *Service) queryOSDDF(moncmd.Command) moncmd.Reply {
	m := s.cfg.Map()
	if m == nil {
		return errNoMap()
	}
	v := s.osdDFView(m)
	return replyJSON(v, v.Text())
}

// Text lays "df" out as Ceph's "ceph df" does: a RAW STORAGE table (a
// line per device class, if the OSDs have classes, then TOTAL) and a
// POOLS table.
func (v DFView) Text() string {
	raw := [][]string{{"CLASS", "SIZE", "AVAIL", "USED", "RAW USED", "%RAW USED"}}
	line := func(name string, s DFStats) []string {
		return []string{name, formatBytes(s.TotalBytes), formatBytes(s.TotalAvailBytes), formatBytes(s.TotalUsedBytes),
			formatBytes(s.TotalUsedRawBytes), pct(100 * s.TotalUsedRawRatio)}
	}
	for _, c := range slices.Sorted(maps.Keys(v.StatsByClass)) {
		raw = append(raw, line(c, v.StatsByClass[c]))
	}
	raw = append(raw, line("TOTAL", v.Stats))
	pools := [][]string{{"POOL", "ID", "PGS", "STORED", "OBJECTS", "USED", "%USED", "MAX AVAIL"}}
	for _, p := range v.Pools {
		st := p.Stats
		pools = append(pools, []string{p.Name, strconv.FormatInt(p.ID, 10), strconv.FormatUint(uint64(p.PGNum), 10),
			signedBytes(st.Stored), strconv.FormatInt(st.Objects, 10), signedBytes(st.BytesUsed), pct(100 * st.PercentUsed),
			formatBytes(st.MaxAvail)})
	}
	return "--- RAW STORAGE ---\n" + table(raw, 0) + "\n--- POOLS ---\n" + table(pools, 0)
}

// Text lays "osd df" out as Ceph's "ceph osd df" does: a line per OSD, a
// TOTAL line of the OSDs that count, and the spread of their use.
func (v OSDDFView) Text() string {
	rows := [][]string{{"ID", "CLASS", "WEIGHT", "REWEIGHT", "SIZE", "RAW USE", "AVAIL", "%USE", "VAR", "PGS", "STATUS"}}
	for _, n := range v.Nodes {
		size, use, avail, util, vr := formatBytes(n.total), formatBytes(n.used), formatBytes(n.avail), pct(n.Utilization), pct(n.Var)
		if !n.Reported {
			size, use, avail, util, vr = "-", "-", "-", "-", "-"
		}
		rows = append(rows, []string{strconv.Itoa(int(n.ID)), n.DeviceClass, weight(n.CrushWeight), weight(n.Reweight),
			size, use, avail, util, vr, strconv.Itoa(n.PGs), n.Status})
	}
	s := v.Summary
	rows = append(rows, []string{"", "", "", "TOTAL", formatBytes(s.total), formatBytes(s.used), formatBytes(s.avail),
		pct(s.AverageUtilization), "", "", ""})
	return table(rows) + fmt.Sprintf("MIN/MAX VAR: %s/%s  STDDEV: %s\n", pct(s.MinVar), pct(s.MaxVar), pct(s.Dev))
}

// pct prints a percentage or ratio with two decimals, as Ceph's tables do.
func pct(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

// weight prints a CRUSH weight or reweight with five decimals.
func weight(f float64) string { return strconv.FormatFloat(f, 'f', 5, 64) }

// table aligns rows in columns, to the right but for the columns in
// left (by index).
func table(rows [][]string, left ...int) string {
	return moncmd.Columns(rows, func(_, col int) bool { return slices.Contains(left, col) })
}
