package pgmon

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// StateCount is how many PGs are in one state.
type StateCount struct {
	Name string `json:"name"`
	Num  int    `json:"num"`
}

// StatView is "pg stat", and the "pgmap" part of "status".
type StatView struct {
	NumPGs     int          `json:"num_pgs"`
	ByState    []StateCount `json:"num_pg_by_state"`
	NumPools   int          `json:"num_pools"`
	NumObjects int64        `json:"num_objects"`
	DataBytes  int64        `json:"num_bytes"`
	// Store usage of the OSDs that are up.
	TotalBytes uint64 `json:"total_bytes"`
	UsedBytes  uint64 `json:"total_used_bytes"`
	AvailBytes uint64 `json:"total_avail_bytes"`
	// Object copies: those the pools' sizes ask for, and those degraded
	// and misplaced; unfound counts objects.
	ObjectCopies int64         `json:"num_object_copies"`
	Degraded     int64         `json:"num_objects_degraded"`
	Misplaced    int64         `json:"num_objects_misplaced"`
	Unfound      int64         `json:"num_objects_unfound"`
	Recovery     *RecoveryView `json:"recovery,omitempty"`
}

// RecoveryView is the recovery's progress, while copies are degraded or
// misplaced.
type RecoveryView struct {
	ObjectsLeft int64 `json:"objects_left"`
	// Since is when copies became degraded or misplaced; Progress is
	// the share of the largest backlog since then that is recovered,
	// 0 to 1.
	Since         time.Time `json:"since"`
	Progress      float64   `json:"progress"`
	ObjectsPerSec float64   `json:"objects_per_sec"` // over the last minute
	ETASeconds    float64   `json:"eta_seconds"`     // 0: unknown (no progress lately)
}

// statView sums up the PGs and usage, and the recovery at now.
func (s *Service) statView(now time.Time) StatView {
	sum := s.summarize()
	v := StatView{NumPGs: sum.pgs, ByState: sum.byState, NumPools: sum.pools, NumObjects: sum.objects,
		DataBytes: sum.bytes, TotalBytes: sum.total, UsedBytes: sum.used, AvailBytes: sum.avail,
		ObjectCopies: sum.copies, Degraded: sum.degraded, Misplaced: sum.misplaced, Unfound: sum.unfound}
	if v.ByState == nil {
		v.ByState = []StateCount{}
	}
	if e, ok := s.prog.estimate(now); ok && sum.degraded+sum.misplaced > 0 {
		v.Recovery = &RecoveryView{ObjectsLeft: e.left, Since: e.since, Progress: e.done, ObjectsPerSec: e.rate,
			ETASeconds: e.eta.Seconds()}
	}
	return v
}

// statLine is "pg stat" as text, one line as Ceph's:
//
//	12 pgs: 10 active+clean, 2 active+undersized+degraded; 5 objects, 1.2 KiB data,
//	3.0 GiB used, 27 GiB / 30 GiB avail; 3/15 objects degraded (20.000%)
func statLine(v StatView) string {
	var b strings.Builder
	b.WriteString(plural(v.NumPGs, "pg"))
	for i, c := range v.ByState {
		b.WriteString(map[bool]string{true: ": ", false: ", "}[i == 0])
		fmt.Fprintf(&b, "%d %s", c.Num, c.Name)
	}
	fmt.Fprintf(&b, "; %s, %s data, %s used, %s / %s avail", plural(int(v.NumObjects), "object"), signedBytes(v.DataBytes),
		formatBytes(v.UsedBytes), formatBytes(v.AvailBytes), formatBytes(v.TotalBytes))
	for _, l := range objectLines(v) {
		b.WriteString("; " + l)
	}
	if r := v.Recovery; r != nil && r.ObjectsPerSec > 0 {
		fmt.Fprintf(&b, "; %.1f objects/s recovering", r.ObjectsPerSec)
	}
	return b.String() + "\n"
}

// objectLines are the degraded, misplaced and unfound counts that are not
// zero: "3/15 objects degraded (20.000%)".
func objectLines(v StatView) []string {
	var out []string
	if v.Degraded > 0 {
		out = append(out, fmt.Sprintf("%d/%d objects degraded (%s)", v.Degraded, v.ObjectCopies, percent(v.Degraded, v.ObjectCopies)))
	}
	if v.Misplaced > 0 {
		out = append(out, fmt.Sprintf("%d/%d objects misplaced (%s)", v.Misplaced, v.ObjectCopies, percent(v.Misplaced, v.ObjectCopies)))
	}
	if v.Unfound > 0 {
		out = append(out, fmt.Sprintf("%d/%d objects unfound (%s)", v.Unfound, v.NumObjects, percent(v.Unfound, v.NumObjects)))
	}
	return out
}

// queryStat answers "pg stat".
func (s *Service) queryStat(moncmd.Command) moncmd.Reply {
	v := s.statView(s.cfg.Now())
	return replyJSON(v, statLine(v))
}

// PGView is one PG in "pg dump", "pg ls", "pg ls-by-osd" and "pg
// query": its last report with the state derived from it. For a PG not
// reported yet, up, acting and primary are the map's.
type PGView struct {
	PGID string `json:"pgid"`
	// State is the derived state; it hides the embedded reported one.
	State      string    `json:"state"`
	ReportedBy int32     `json:"reported_by"` // -1: no report yet
	LastChange time.Time `json:"last_change,omitzero"`
	// StaleReason says why the PG is stale.
	StaleReason string `json:"stale_reason,omitempty"`
	wire.PGStat
}

func (v *pgView) export() PGView {
	out := PGView{PGID: v.stat.PG.String(), State: v.state, ReportedBy: v.reporter, LastChange: v.updated,
		StaleReason: v.stale, PGStat: v.stat}
	for _, l := range []*[]int32{&out.Up, &out.Acting} {
		if *l == nil {
			*l = []int32{}
		}
	}
	return out
}

// OSDStatView is one OSD in "pg dump": its store's usage and its PGs.
type OSDStatView struct {
	OSD           int32     `json:"osd"`
	Up            bool      `json:"up"`
	TotalBytes    uint64    `json:"total_bytes"`
	UsedBytes     uint64    `json:"used_bytes"`
	AvailBytes    uint64    `json:"avail_bytes"`
	NumPGs        int       `json:"num_pgs"`         // PGs whose acting set holds it
	NumPrimaryPGs int       `json:"num_primary_pgs"` // of which it is the primary
	LastChange    time.Time `json:"last_change,omitzero"`
}

// DumpView is "pg dump".
type DumpView struct {
	PGStats  []PGView      `json:"pg_stats"`
	OSDStats []OSDStatView `json:"osd_stats"`
}

// ListView is "pg ls" and "pg ls-by-osd".
type ListView struct {
	PGStats []PGView `json:"pg_stats"`
}

// queryDump answers "pg dump": every PG, then every OSD.
func (s *Service) queryDump(moncmd.Command) moncmd.Reply {
	now := s.cfg.Now()
	views := s.views()
	d := DumpView{PGStats: exportAll(views), OSDStats: []OSDStatView{}}
	if m := s.cfg.Map(); m != nil {
		for id := range m.MaxOSD() {
			if !m.Exists(id) {
				continue
			}
			u := s.st.osds[id]
			o := OSDStatView{OSD: id, Up: m.IsUp(id), TotalBytes: u.total, UsedBytes: u.used, AvailBytes: u.avail, LastChange: u.updated}
			for _, v := range views {
				if slices.Contains(v.stat.Acting, id) {
					o.NumPGs++
				}
				if v.stat.Primary == id {
					o.NumPrimaryPGs++
				}
			}
			d.OSDStats = append(d.OSDStats, o)
		}
	}
	text := pgTable(views, now) + "\n" + osdTable(d.OSDStats)
	return replyJSON(d, text)
}

// queryLs answers "pg ls [states=S,...]": the PGs whose state holds
// every word given (separated by commas, spaces or '+').
func (s *Service) queryLs(c moncmd.Command) moncmd.Reply {
	want := strings.FieldsFunc(c.StrOr("states", ""), func(r rune) bool { return r == ',' || r == ' ' || r == '+' })
	return s.list(func(v *pgView) bool {
		for _, w := range want {
			if !v.has(w) {
				return false
			}
		}
		return true
	})
}

// queryLsByOSD answers "pg ls-by-osd osd=ID": the PGs whose acting set
// holds the OSD (as last reported, or the map's for an unknown PG).
func (s *Service) queryLsByOSD(c moncmd.Command) moncmd.Reply {
	arg, err := c.Str("osd")
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL)
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(arg, "osd."), 10, 32)
	if err != nil || n < 0 {
		return moncmd.Errorf(moncmd.EINVAL, "pg ls-by-osd: %q is not an osd id", arg)
	}
	id := int32(n)
	if m := s.cfg.Map(); m == nil || !m.Exists(id) {
		return moncmd.Errorf(moncmd.ENOENT, "pg ls-by-osd: osd.%d does not exist", id)
	}
	return s.list(func(v *pgView) bool { return slices.Contains(v.stat.Acting, id) })
}

// list answers with the PGs keep selects.
func (s *Service) list(keep func(*pgView) bool) moncmd.Reply {
	var views []pgView
	for _, v := range s.views() {
		if keep(&v) {
			views = append(views, v)
		}
	}
	return replyJSON(ListView{PGStats: exportAll(views)}, pgTable(views, s.cfg.Now()))
}

func exportAll(views []pgView) []PGView {
	out := make([]PGView, 0, len(views))
	for i := range views {
		out = append(out, views[i].export())
	}
	return out
}

// queryPG answers "pg query pgid=P": one PG's statistics.
func (s *Service) queryPG(c moncmd.Command) moncmd.Reply {
	arg, err := c.Str("pgid")
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL)
	}
	pg, err := osdmap.ParsePG(arg)
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "pg query: %q is not a pg id (want POOL.SEED, the seed in hex, like 1.1f)", arg)
	}
	for _, v := range s.views() {
		if v.stat.PG == pg {
			return replyJSON(v.export(), pgText(&v, s.cfg.Now()))
		}
	}
	return moncmd.Errorf(moncmd.ENOENT, "pg query: pg %s does not exist", pg)
}

// pgTable formats PGs as "pg dump" and "pg ls" print them.
func pgTable(views []pgView, now time.Time) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PG\tOBJECTS\tDEGRADED\tMISPLACED\tUNFOUND\tBYTES\tLOG\tSTATE\tSINCE\tVERSION\tREPORTED\tUP\tACTING\tSCRUB_STAMP\tDEEP_SCRUB_STAMP")
	for _, v := range views {
		st := &v.stat
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", st.PG, st.Objects, st.Degraded,
			st.Misplaced, st.Unfound, st.Bytes, st.LogEntries, v.state, age(now, v.updated), orDash(st.LastUpdate),
			st.ReportedEpoch, osdsWithPrimary(st.Up, upPrimary(st)), osdsWithPrimary(st.Acting, st.Primary),
			stampText(st.LastScrub), stampText(st.LastDeepScrub))
	}
	_ = tw.Flush()
	return b.String()
}

// upPrimary is the first OSD of the up set (-1 if empty): reports carry
// the acting primary only.
func upPrimary(st *wire.PGStat) int32 {
	for _, o := range st.Up {
		if o >= 0 && o != crush.ItemNone {
			return o
		}
	}
	return -1
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// osdTable formats the OSDs of "pg dump".
func osdTable(osds []OSDStatView) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OSD\tUP\tUSED\tAVAIL\tTOTAL\tPGS\tPRIMARY_PGS")
	for _, o := range osds {
		up := "down"
		if o.Up {
			up = "up"
		}
		fmt.Fprintf(tw, "osd.%d\t%s\t%s\t%s\t%s\t%d\t%d\n", o.OSD, up, formatBytes(o.UsedBytes), formatBytes(o.AvailBytes),
			formatBytes(o.TotalBytes), o.NumPGs, o.NumPrimaryPGs)
	}
	_ = tw.Flush()
	return b.String()
}

// pgText formats one PG for "pg query".
func pgText(v *pgView, now time.Time) string {
	st := &v.stat
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "pg\t%s\n", st.PG)
	fmt.Fprintf(tw, "state\t%s\n", v.state)
	if v.stale != "" {
		fmt.Fprintf(tw, "stale because\t%s\n", v.stale)
	}
	if v.reporter >= 0 {
		fmt.Fprintf(tw, "reported by\tosd.%d at epoch %d, changed %s ago (%s)\n", v.reporter, st.ReportedEpoch,
			age(now, v.updated), v.updated.UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintf(tw, "reported by\tnobody yet\n")
	}
	fmt.Fprintf(tw, "up\t%s\n", osdmap.FormatOSDs(st.Up))
	fmt.Fprintf(tw, "acting\t%s, primary osd.%d\n", osdmap.FormatOSDs(st.Acting), st.Primary)
	fmt.Fprintf(tw, "objects\t%d (%s), %d degraded, %d misplaced, %d unfound\n", st.Objects, signedBytes(st.Bytes),
		st.Degraded, st.Misplaced, st.Unfound)
	fmt.Fprintf(tw, "log\t%d entries, last update %s\n", st.LogEntries, orDash(st.LastUpdate))
	fmt.Fprintf(tw, "interval\tsince epoch %d, last started at epoch %d\n", st.SameIntervalSince, st.LastEpochStarted)
	if len(st.BlockedBy) > 0 || st.DownReason != "" {
		fmt.Fprintf(tw, "blocked by\t%s %s\n", osdmap.FormatOSDs(st.BlockedBy), st.DownReason)
	}
	for _, l := range st.ReplicaLag {
		// A pool in ack primary mode: what the primary answered that
		// this replica has yet to commit (docs/OSD.md).
		fmt.Fprintf(tw, "replica lag\tosd.%d: %d writes (%s) behind, acked %s\n", l.OSD, l.Writes, formatBytes(uint64(l.Bytes)), orDash(l.Acked))
	}
	fmt.Fprintf(tw, "last scrub\t%s\n", stampText(st.LastScrub))
	fmt.Fprintf(tw, "last deep scrub\t%s\n", stampText(st.LastDeepScrub))
	if len(st.Inconsistent) > 0 {
		fmt.Fprintf(tw, "inconsistent\t%s\n", strings.Join(st.Inconsistent, ", "))
	}
	_ = tw.Flush()
	return b.String()
}

// replyJSON is a successful reply with v as its data.
func replyJSON(v any, text string) moncmd.Reply {
	data, err := json.Marshal(v)
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "pgmon: encoding reply: %v", err)
	}
	return moncmd.Reply{Data: data, Text: text}
}

// StatsCurrent reports whether every PG of pool has a report that
// reflects the map at epoch since: reported at since or later, or with
// the up set the map gives it now (its placement did not change, so its
// counts stand). Unknown and stale PGs are not current. The monitors'
// leader waits for it before each pgp_num step (osdmon's pgstep.go), so
// that the misplaced share it reads includes the previous step's.
func (s *Service) StatsCurrent(pool int64, since osdmap.Epoch) bool {
	m := s.cfg.Map()
	if m == nil {
		return false
	}
	var sc osdmap.Scratch
	for _, v := range s.views() {
		if v.stat.PG.Pool != pool {
			continue
		}
		if v.reporter < 0 || v.stale != "" {
			return false
		}
		if v.stat.ReportedEpoch >= uint64(since) {
			continue
		}
		mp, err := m.PGToUpActing(v.stat.PG, &sc)
		if err != nil || !slices.Equal(mp.Up, v.stat.Up) {
			return false
		}
	}
	return true
}

// UncleanRatio returns the share of the object copies the pools ask for
// that are degraded or misplaced (0 with no objects): the balancer waits
// while it is above its limit.
func (s *Service) UncleanRatio() float64 {
	sum := s.summarize()
	if sum.copies == 0 {
		return 0
	}
	return float64(sum.degraded+sum.misplaced) / float64(sum.copies)
}

// PGStat returns PG pg's last report with the state the service derives
// for it ("unknown", "stale+...", or the reported one), and whether the
// report is current: reported, by an OSD that is up and still its
// primary. The monitors' leader reads it before each step of a PG merge
// (osdmon's pgmerge.go).
func (s *Service) PGStat(pg osdmap.PG) (wire.PGStat, bool) {
	vs := s.views()
	i, found := slices.BinarySearchFunc(vs, pg, func(v pgView, pg osdmap.PG) int { return osdmap.ComparePG(v.stat.PG, pg) })
	if !found {
		return wire.PGStat{PG: pg, State: stateUnknown}, false
	}
	v := &vs[i]
	st := v.stat
	st.State = v.state
	return st, v.reporter >= 0 && v.stale == ""
}

// PoolObjects returns the objects the PG statistics count in pool (the
// MDS-map service refuses a metadata pool that holds any).
func (s *Service) PoolObjects(pool int64) int64 { return s.poolSums()[pool].objects }
