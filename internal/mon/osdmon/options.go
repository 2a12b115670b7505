package osdmon

import "time"

// Options gives the service its configuration; configmon.View("mon")
// implements it. Values must be the same on every monitor, since Apply
// reads some of them: use a daemon-type section, not one monitor's.
type Options interface {
	Int(name string) int64
	Float(name string) float64
	Bool(name string) bool
	String(name string) string
	Duration(name string) time.Duration
}

// The options the service reads (declared, with their defaults, in
// internal/config's schema).
const (
	// OptMinDownReporters: failure domains that must report an OSD.
	OptMinDownReporters = "mon_osd_min_down_reporters"
	// OptReporterSubtreeLevel: the CRUSH type reporters are counted by.
	OptReporterSubtreeLevel = "mon_osd_reporter_subtree_level"
	// OptHeartbeatGrace: how long an OSD must be reported failed.
	OptHeartbeatGrace = "osd_heartbeat_grace"
	// OptDownOutInterval: how long a down OSD waits to be marked out.
	OptDownOutInterval = "mon_osd_down_out_interval"
	// OptHistory: epochs of map history kept.
	OptHistory = "mon_min_osdmap_epochs"
	// OptAllowPoolDelete: whether "osd pool rm" may delete.
	OptAllowPoolDelete = "mon_allow_pool_delete"
	// OptPoolDefaultSize, OptPoolDefaultMinSize and OptPoolDefaultPGNum
	// are the defaults of "osd pool create".
	OptPoolDefaultSize    = "osd_pool_default_size"
	OptPoolDefaultMinSize = "osd_pool_default_min_size"
	OptPoolDefaultPGNum   = "osd_pool_default_pg_num"
	// OptNearFullRatio, OptBackfillFullRatio and OptFullRatio are the
	// fullness ratios of a new cluster's first map; later, "osd
	// set-nearfull-ratio" etc. change the map's.
	OptNearFullRatio     = "mon_osd_nearfull_ratio"
	OptBackfillFullRatio = "mon_osd_backfillfull_ratio"
	OptFullRatio         = "mon_osd_full_ratio"
	// OptMaxPGPerOSD: the PG copies per in OSD that "osd pool create"
	// and "osd pool set size" may bring the cluster to (checkPGLimit).
	OptMaxPGPerOSD = "mon_max_pg_per_osd"
	// OptPoolDefaultCrushRule is the CRUSH rule (name or id) of "osd
	// pool create" without one: a cluster whose OSDs share one host
	// (cuttle cluster up) sets a rule with failure domain osd.
	OptPoolDefaultCrushRule = "osd_pool_default_crush_rule"
	// OptMaxMisplaced: share of object copies degraded or misplaced at
	// or above which pgp_num is not stepped toward its target (pgstep.go).
	OptMaxMisplaced = "target_max_misplaced_ratio"
	// OptPoolDefaultAutoscaleMode is the pg_autoscale_mode of "osd pool
	// create" without autoscale_mode.
	OptPoolDefaultAutoscaleMode = "osd_pool_default_pg_autoscale_mode"
)

// OptionNames lists every option the service reads, with its type
// ("int", "bool", "str", "secs"), so the schema can be checked against it.
func OptionNames() map[string]string {
	return map[string]string{
		OptMinDownReporters:     "int",
		OptReporterSubtreeLevel: "str",
		OptHeartbeatGrace:       "secs",
		OptDownOutInterval:      "secs",
		OptHistory:              "int",
		OptAllowPoolDelete:      "bool",
		OptPoolDefaultSize:      "int",
		OptPoolDefaultMinSize:   "int",
		OptPoolDefaultPGNum:     "int",
		OptNearFullRatio:        "float",
		OptBackfillFullRatio:    "float",
		OptFullRatio:            "float",
		OptMaxPGPerOSD:          "int",
		OptPoolDefaultCrushRule: "str",
		OptMaxMisplaced:         "float",

		OptPoolDefaultAutoscaleMode: "str",
	}
}
