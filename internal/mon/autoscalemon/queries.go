package autoscalemon

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cuttlestore/cuttle/internal/autoscale"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

// PoolView is one pool of "osd pool autoscale-status" in JSON: the
// core's status (Ceph's field names) and the pool's mode.
type PoolView struct {
	autoscale.Status
	Mode string `json:"pg_autoscale_mode"`
}

// queryStatus handles "osd pool autoscale-status": every pool's usage,
// targets and ideal pg_num, as Ceph's table prints them (NEW PG_NUM only
// for a pool the autoscaler would change).
func (s *Service) queryStatus(moncmd.Command) moncmd.Reply {
	m, st := s.statuses()
	if m == nil {
		return moncmd.Errorf(moncmd.ENOENT, "no OSD map yet: the cluster was not created")
	}
	views := make([]PoolView, 0, len(st))
	rows := [][]string{{"POOL", "SIZE", "TARGET SIZE", "RATE", "RAW CAPACITY", "RATIO", "TARGET RATIO", "EFFECTIVE RATIO",
		"BIAS", "PG_NUM", "NEW PG_NUM", "AUTOSCALE"}}
	for _, p := range st {
		views = append(views, PoolView{Status: p, Mode: p.Mode.String()})
		var target, targetRatio, effective, newPG string
		if p.TargetBytes > 0 {
			target = shortBytes(p.TargetBytes)
		}
		if p.TargetRatio > 0 {
			targetRatio = fmt.Sprintf("%.4f", p.TargetRatio)
		}
		if p.EffectiveRatio > 0 {
			effective = fmt.Sprintf("%.4f", p.EffectiveRatio)
		}
		if p.Adjust {
			newPG = strconv.FormatUint(uint64(p.Ideal), 10)
		}
		rows = append(rows, []string{p.Name, shortBytes(uint64(p.Stored)), target, fmt.Sprintf("%.1f", p.Rate),
			shortBytes(p.Capacity), fmt.Sprintf("%.4f", p.Ratio), targetRatio, effective, fmt.Sprintf("%.1f", p.Bias),
			strconv.FormatUint(uint64(p.PGNum), 10), newPG, p.Mode.String()})
	}
	data, err := json.Marshal(views)
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "autoscalemon: encoding reply: %v", err)
	}
	text := ""
	if len(st) > 0 {
		text = moncmd.Columns(rows, func(_, col int) bool { return col == 0 || col == len(rows[0])-1 })
	}
	return moncmd.Reply{Data: data, Text: text}
}

// shortBytes prints n as Ceph's autoscale-status does: the largest
// binary unit with one decimal below 10 ("0", "512", "1.5G", "374G").
func shortBytes(n uint64) string {
	units := []string{"", "K", "M", "G", "T", "P", "E"}
	u := 0
	for u+1 < len(units) && n >= 1<<(10*(u+1)) {
		u++
	}
	if u == 0 {
		return strconv.FormatUint(n, 10)
	}
	v := float64(n) / float64(uint64(1)<<(10*u))
	if v < 9.95 {
		return fmt.Sprintf("%.1f%s", v, units[u])
	}
	return fmt.Sprintf("%.0f%s", v, units[u])
}
