package osdmon

import (
	"fmt"
	"math"
	"strconv"

	"github.com/cuttlestore/cuttle/osdmap"
)

// The autoscaler's pool options, set and read with "osd pool set" and
// "osd pool get" as Ceph's are; internal/mon/autoscalemon reads them from
// the map (docs/AUTOSCALER.md).

// autoscaleVars are the options, in the order "osd pool get all" prints
// them.
func autoscaleVars() []string {
	return []string{"pg_autoscale_mode", "target_size_bytes", "target_size_ratio", "pg_autoscale_bias"}
}

// setAutoscaleVar sets option v of p to val; ok is false for a variable
// that is not one of autoscaleVars.
func setAutoscaleVar(p *osdmap.Pool, v, val string) (ok bool, err error) {
	switch v {
	case "pg_autoscale_mode":
		m, perr := osdmap.ParseAutoscaleMode(val)
		if perr != nil {
			return true, fmt.Errorf("pg_autoscale_mode: %q is not on, warn or off", val)
		}
		p.AutoscaleMode = m
	case "target_size_bytes":
		var n uint64
		if n, err = strconv.ParseUint(val, 10, 64); err != nil {
			return true, fmt.Errorf("target_size_bytes: %q is not a number of bytes", val)
		}
		p.TargetSizeBytes = n
	case "target_size_ratio":
		r, perr := strconv.ParseFloat(val, 64)
		if perr != nil || r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
			return true, fmt.Errorf("target_size_ratio: %q is not a number at least 0", val)
		}
		p.TargetSizeRatio = r
	case "pg_autoscale_bias":
		b, perr := strconv.ParseFloat(val, 64)
		if perr != nil || !(b > 0 && b <= osdmap.MaxAutoscaleBias) {
			return true, fmt.Errorf("pg_autoscale_bias: %q is not a number in (0, %d]", val, osdmap.MaxAutoscaleBias)
		}
		p.SetBias(b)
	default:
		return false, nil
	}
	return true, err
}

// autoscaleVar returns option v of p for "osd pool get"; ok is false for
// a variable that is not one of autoscaleVars.
func autoscaleVar(p *osdmap.Pool, v string) (val any, ok bool) {
	switch v {
	case "pg_autoscale_mode":
		return p.AutoscaleMode.String(), true
	case "target_size_bytes":
		return p.TargetSizeBytes, true
	case "target_size_ratio":
		return p.TargetSizeRatio, true
	case "pg_autoscale_bias":
		return p.Bias(), true
	}
	return nil, false
}

// autoscaleSetStatus adds to "osd pool set"'s reply what a mode change
// means while the OSDs cannot merge PGs.
func autoscaleSetStatus(cur, p osdmap.Pool) string {
	if p.AutoscaleMode == osdmap.AutoscaleOn && cur.AutoscaleMode != osdmap.AutoscaleOn {
		return "; the monitors' leader now raises pg_num when the pool's data calls for more PGs " +
			"(cuttle osd pool autoscale-status); it only warns of too many, since PGs cannot merge yet"
	}
	return ""
}

// defaultAutoscaleMode is the mode of a new pool: its autoscale_mode
// argument, else osd_pool_default_pg_autoscale_mode (warn when unset).
func defaultAutoscaleMode(arg, opt string) (osdmap.AutoscaleMode, error) {
	s := arg
	if s == "" {
		s = opt
	}
	if s == "" {
		return osdmap.AutoscaleWarn, nil
	}
	return osdmap.ParseAutoscaleMode(s)
}
