package config

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Type is the type of an option's value.
type Type uint8

// Option types.
const (
	TypeInt      Type = iota + 1 // a decimal integer
	TypeFloat                    // a decimal number
	TypeBool                     // true or false
	TypeString                   // any text
	TypeDuration                 // "20s", "10m"; a plain number means seconds
	TypeSize                     // bytes: "4096", "64K", "1M", "2G", "1T" (powers of 1024)
)

func (t Type) String() string {
	switch t {
	case TypeInt:
		return "int"
	case TypeFloat:
		return "float"
	case TypeBool:
		return "bool"
	case TypeString:
		return "str"
	case TypeDuration:
		return "secs"
	case TypeSize:
		return "size"
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Option describes one daemon option: it is declared once, here, and
// the monitors check "config set" against it, the daemons read it, and
// docs/CONFIG.md's table is generated from it.
type Option struct {
	Name string
	Type Type
	// Default is the value in effect when no source sets one, in the
	// canonical form Parse returns.
	Default string
	Desc    string
	// Runtime reports whether running daemons apply a change at once;
	// otherwise it takes effect when the daemon restarts.
	Runtime bool
	// Min and Max bound int, float, duration (in seconds) and size
	// values when Min < Max.
	Min, Max float64
	// Enum lists the allowed values of a string option, if not empty.
	Enum []string
	// Daemons are the daemon types that read the option ("mon", "osd");
	// none for an option accepted but not read yet.
	Daemons []string
	// Flag is the command-line flag of the reading daemon's run command
	// (cuttle osd run --FLAG) that overrides every other source, if any.
	Flag string
}

// ReadBy reports whether daemons of type typ read the option.
func (o Option) ReadBy(typ string) bool { return slices.Contains(o.Daemons, typ) }

// Bounds the table repeats.
const (
	noBound  = 1 << 31 // seconds: about 68 years
	maxCount = 1 << 20
)

// schemaTable returns the option table, built afresh so no caller can
// change another's. It is the one place defaults live.
func schemaTable() []Option {
	mon, osd, both := []string{"mon"}, []string{"osd"}, []string{"mon", "osd"}
	client := []string{"client"}
	s3 := []string{"s3"}
	return []Option{
		// Monitors.
		{Name: "balancer_sleep_interval", Type: TypeDuration, Default: "1m0s", Runtime: true, Min: 1, Max: noBound, Daemons: mon,
			Desc: "time between the balancer's automatic rounds while it is on (balancer on)"},
		{Name: "balancer_target_max_misplaced_ratio", Type: TypeFloat, Default: "0.05", Runtime: true, Min: 0, Max: 1, Daemons: mon,
			Desc: "share of object copies degraded or misplaced above which the balancer starts no round, so one round's data moves before the next"},
		{Name: "balancer_upmap_max_deviation", Type: TypeInt, Default: "1", Runtime: true, Min: 1, Max: maxCount, Daemons: mon,
			Desc: "PG copies (per pool) an OSD may be above or below its CRUSH-weighted target before the balancer moves some (Ceph's upmap_max_deviation, 5 there)"},
		{Name: "balancer_upmap_max_optimizations", Type: TypeInt, Default: "10", Runtime: true, Min: 1, Max: maxCount, Daemons: mon,
			Desc: "PG copies one balancer round or plan moves at most (Ceph's upmap_max_optimizations)"},
		{Name: "mds_beacon_grace", Type: TypeDuration, Default: "4s", Runtime: true, Min: 1, Max: 3600, Daemons: mon,
			Desc: "how long an MDS daemon may send no beacon before the monitors replace it with a standby (or drop it, if a standby); Ceph's is 15 s, ours is four beacon intervals so that a failover completes within 10 s (docs/MONITORS.md)"},
		{Name: "mds_beacon_interval", Type: TypeDuration, Default: "1s", Runtime: false, Min: 0.1, Max: 60, Daemons: []string{"mds"},
			Desc: "how often an MDS daemon sends the monitors a beacon (Ceph's is 4 s); keep mds_beacon_grace at several intervals"},
		{Name: "mds_cache_size", Type: TypeInt, Default: "100000", Runtime: false, Min: 100, Max: 1 << 30, Daemons: []string{"mds"},
			Desc: "inodes an MDS keeps cached (Ceph's pre-Luminous option of that name); past it, clean directory fragments are evicted least recently used first; dirty, open and locked ones stay, so the bound is soft (docs/MDS.md, Eviction)"},
		{Name: "mds_op_complaint_time", Type: TypeDuration, Default: "30s", Runtime: false, Min: 1, Max: 86400, Daemons: []string{"mds"},
			Desc: "age past which an MDS request not yet answered safe is slow: the rank reports it in its beacons and the monitors raise MDS_SLOW_REQUEST (Ceph's option of that name)"},
		{Name: "mds_reconnect_timeout", Type: TypeDuration, Default: "15s", Runtime: false, Min: 1, Max: 3600, Daemons: []string{"mds"}, Flag: "reconnect-timeout",
			Desc: "how long an MDS that took over a rank waits for the previous holder's clients to reconnect before it resumes without them (Ceph's is 45 s); the phase ends as soon as every client has reported"},
		{Name: "mon_allow_pool_delete", Type: TypeBool, Default: "false", Runtime: true, Daemons: mon,
			Desc: "allow pools to be deleted (osd pool rm)"},
		{Name: "mon_max_pg_per_osd", Type: TypeInt, Default: "250", Runtime: true, Min: 1, Max: maxCount, Daemons: mon,
			Desc: "PG copies per in OSD (at least 3 OSDs counted) beyond which osd pool create and osd pool set size are refused"},
		{Name: "mon_min_osdmap_epochs", Type: TypeInt, Default: "500", Runtime: true, Min: 1, Max: maxCount, Daemons: mon,
			Desc: "number of OSD map epochs the monitors keep"},
		{Name: "mon_osd_down_out_interval", Type: TypeDuration, Default: "10m0s", Runtime: true, Min: 0, Max: noBound, Daemons: mon,
			Desc: "how long an OSD stays down before the monitors mark it out; 0 never marks out"},
		{Name: "mon_osd_min_down_reporters", Type: TypeInt, Default: "2", Runtime: true, Min: 1, Max: maxCount, Daemons: mon,
			Desc: "distinct failure domains (see mon_osd_reporter_subtree_level) that must report an OSD before it is marked down"},
		{Name: "mon_osd_nearfull_ratio", Type: TypeFloat, Default: "0.85", Runtime: false, Min: 0.01, Max: 1, Daemons: mon,
			Desc: "used/total of an OSD's store at which it is marked nearfull (OSD_NEARFULL); read when the cluster's first OSD map is made, then changed with osd set-nearfull-ratio"},
		{Name: "mon_osd_backfillfull_ratio", Type: TypeFloat, Default: "0.9", Runtime: false, Min: 0.01, Max: 1, Daemons: mon,
			Desc: "used/total of an OSD's store at which it is marked backfillfull and receives no backfill (OSD_BACKFILLFULL); read when the first OSD map is made, then changed with osd set-backfillfull-ratio"},
		{Name: "mon_osd_full_ratio", Type: TypeFloat, Default: "0.95", Runtime: false, Min: 0.01, Max: 1, Daemons: mon,
			Desc: "used/total of an OSD's store at which it is marked full and the pools using it refuse writes (OSD_FULL, POOL_FULL); read when the first OSD map is made, then changed with osd set-full-ratio"},
		{Name: "mon_osd_reporter_subtree_level", Type: TypeString, Default: "host", Runtime: true, Daemons: mon,
			Desc: "CRUSH level by which failure reporters are counted"},
		{Name: "mon_target_pg_per_osd", Type: TypeInt, Default: "100", Runtime: true, Min: 1, Max: maxCount, Daemons: mon,
			Desc: "PG copies the autoscaler aims at per OSD of a CRUSH root when its pools fill it (Ceph's, 100 there too)"},
		{Name: "pg_autoscaler_sleep_interval", Type: TypeDuration, Default: "1m0s", Runtime: true, Min: 1, Max: noBound, Daemons: mon,
			Desc: "time between the autoscaler's rounds on the monitors' leader, which set pg_num of pools in pg_autoscale_mode on (Ceph's mgr/pg_autoscaler/sleep_interval)"},
		{Name: "pg_autoscaler_threshold", Type: TypeFloat, Default: "3", Runtime: true, Min: 1.01, Max: 1024, Daemons: mon,
			Desc: "factor by which a pool's pg_num must be off its ideal before the autoscaler changes it (mode on) or warns (mode warn: POOL_TOO_FEW_PGS, POOL_TOO_MANY_PGS)"},
		{Name: "pg_autoscaler_pg_num_min", Type: TypeInt, Default: "32", Runtime: true, Min: 1, Max: 65536, Daemons: mon,
			Desc: "least pg_num the autoscaler suggests for any pool, however little it holds (Ceph's PG_NUM_MIN)"},
		{Name: "target_max_misplaced_ratio", Type: TypeFloat, Default: "0.05", Runtime: true, Min: 0, Max: 1, Daemons: mon,
			Desc: "share of object copies degraded or misplaced at or above which the monitors' leader does not step a pool's pgp_num toward its target (osd pool set POOL pgp_num N), as Ceph's manager does"},
		{Name: "osd_pool_default_crush_rule", Type: TypeString, Default: "replicated_rule", Runtime: true, Daemons: mon,
			Desc: "CRUSH rule (name or id) of new pools created without one"},
		{Name: "osd_pool_default_min_size", Type: TypeInt, Default: "0", Runtime: true, Min: 0, Max: 10, Daemons: mon,
			Desc: "min_size of new pools; 0 means size - size/2"},
		{Name: "osd_pool_default_pg_autoscale_mode", Type: TypeString, Default: "warn", Runtime: true, Daemons: mon,
			Desc: "pg_autoscale_mode of new pools: on (the monitors set pg_num), warn (health warnings only) or off; warn because pg_num changes move data and PGs cannot merge yet (Ceph's default is on)"},
		{Name: "osd_pool_default_pg_num", Type: TypeInt, Default: "32", Runtime: true, Min: 1, Max: 65536, Daemons: mon,
			Desc: "pg_num of new pools"},
		{Name: "osd_pool_default_size", Type: TypeInt, Default: "3", Runtime: true, Min: 1, Max: 10, Daemons: mon,
			Desc: "number of replicas of new pools"},

		// Monitors and OSDs.
		{Name: "osd_heartbeat_grace", Type: TypeDuration, Default: "20s", Runtime: true, Min: 1, Max: maxCount, Daemons: both, Flag: "heartbeat-grace",
			Desc: "how long an OSD must be reported failed before it is marked down"},

		// OSDs.
		{Name: "osd_heartbeat_interval", Type: TypeDuration, Default: "6s", Runtime: true, Min: 0.01, Max: 60, Daemons: osd, Flag: "heartbeat-interval",
			Desc: "how long a peer OSD (one sharing a PG) may be quiet before an OSD pings it"},
		{Name: "osd_max_backfills", Type: TypeInt, Default: "1", Runtime: true, Min: 1, Max: 1024, Daemons: osd, Flag: "recovery-max-pgs",
			Desc: "PGs an OSD is primary of that recover or backfill at once, and PGs whose recovery pushes it takes in at once (Ceph's local and remote reservations); the others wait in recovery_wait or backfill_wait"},
		{Name: "osd_recovery_max_active", Type: TypeInt, Default: "4", Runtime: true, Min: 1, Max: 1024, Daemons: osd, Flag: "recovery-max-pushes",
			Desc: "objects each recovering PG pushes at once"},
		{Name: "osd_recovery_sleep", Type: TypeDuration, Default: "0s", Runtime: true, Min: 0, Max: 60, Daemons: osd, Flag: "recovery-sleep",
			Desc: "rest after each recovery push, to leave more of the disks to clients"},
		{Name: "osd_snap_trim_sleep", Type: TypeDuration, Default: "0s", Runtime: true, Min: 0, Max: 60, Daemons: osd,
			Desc: "rest after each object's snap trim, per trim slot, to leave more of the disks to clients (Ceph's default for SSDs is 0 as well)"},
		{Name: "osd_ack_primary_max_lag", Type: TypeInt, Default: "64", Runtime: true, Min: 1, Max: 1 << 20, Daemons: osd,
			Desc: "writes each PG of a pool in ack primary mode answers ahead of its replicas' commits (at most half its log); beyond it writes wait for every replica, as in ack all, so that a slow replica's backlog, and the wait of a write that falls back, stay bounded"},
		{Name: "osd_pg_max_concurrent_snap_trims", Type: TypeInt, Default: "2", Runtime: true, Min: 1, Max: 1024, Daemons: osd,
			Desc: "objects of one PG whose clones its primary trims at once after a snapshot is removed"},
		{Name: "osd_scrub_interval", Type: TypeDuration, Default: "24h0m0s", Runtime: true, Min: 1, Max: noBound, Daemons: osd, Flag: "scrub-interval",
			Desc: "how often each PG an OSD is primary of is scrubbed (sizes, versions, attributes compared), each PG's interval stretched by up to half"},
		{Name: "osd_deep_scrub_interval", Type: TypeDuration, Default: "168h0m0s", Runtime: true, Min: 1, Max: noBound, Daemons: osd, Flag: "deep-scrub-interval",
			Desc: "how often each PG is deep-scrubbed (every byte read, digests compared), stretched the same way"},
		{Name: "osd_max_scrubs", Type: TypeInt, Default: "1", Runtime: true, Min: 1, Max: 64, Daemons: osd,
			Desc: "scrubs an OSD runs at once as primary (operators' requests and scheduled ones); a raised limit starts waiting scrubs at once, a lowered one lets those running finish"},
		{Name: "osd_client_watch_timeout", Type: TypeDuration, Default: "30s", Runtime: true, Min: 1, Max: 86400, Daemons: osd,
			Desc: "how long a watch whose client asked for no timeout lives without a ping or a reconnect; a change applies to watches from their next ping, reconnect or registration"},
		{Name: "client_read_policy", Type: TypeString, Default: "pool", Runtime: false, Enum: []string{"pool", "primary", "balance", "score"}, Daemons: client,
			Desc: "where a client's reads go: as each pool's read_policy says (pool), or to the primary, a random acting member, or the member with the best score for every pool; replicas serve only reads they are current for (docs/OSD.md, Reading from replicas)"},
		{Name: "crush_location", Type: TypeString, Default: "", Runtime: false, Daemons: client,
			Desc: "where the client is, as CRUSH names it (host=node1 rack=r1): read_policy score prefers OSDs on the same host, then the same rack"},
		{Name: "client_read_score_weight_distance", Type: TypeFloat, Default: "0.4", Runtime: false, Min: 0, Max: 1000, Daemons: client,
			Desc: "w1 of read_policy score's P_i = w1 x distance + w2 x disk + w3 x CPU + w4 x memory (distance: 1 same host, 0.5 same rack, 0 else)"},
		{Name: "client_read_score_weight_disk", Type: TypeFloat, Default: "0.3", Runtime: false, Min: 0, Max: 1000, Daemons: client,
			Desc: "w2 of read_policy score: the weight of the OSD's free disk time (1 - its published disk load)"},
		{Name: "client_read_score_weight_cpu", Type: TypeFloat, Default: "0.2", Runtime: false, Min: 0, Max: 1000, Daemons: client,
			Desc: "w3 of read_policy score: the weight of the OSD host's idle CPU (1 - its published CPU load)"},
		{Name: "client_read_score_weight_memory", Type: TypeFloat, Default: "0.1", Runtime: false, Min: 0, Max: 1000, Daemons: client,
			Desc: "w4 of read_policy score: the weight of the OSD host's free memory (1 - its published memory load)"},
		{Name: "osd_cache_size", Type: TypeSize, Default: "1073741824", Runtime: false, Min: 0, Max: 1 << 40, Daemons: osd,
			Desc: "object data an OSD's store caches for reads, verified, in memory of its own outside the Go heap and --memory-target (0: none; read at start); writes to the data file remove what they overwrite"},
		{Name: "osd_emulate_device", Type: TypeString, Default: "none", Runtime: false, Enum: []string{"none", "hdd", "ssd"}, Daemons: osd, Flag: "emulate-device",
			Desc: "give the store an emulated device's timing, for experiments on one machine: hdd (8 ms per I/O, 150 MB/s) or ssd (0.1 ms, 500 MB/s); none: the store's own"},
		{Name: "osd_target_pg_log_entries_per_osd", Type: TypeInt, Default: "100000", Runtime: true, Min: 1, Max: 1 << 30, Daemons: osd, Flag: "pg-log-entries",
			Desc: "PG log entries an OSD keeps across all its PGs; each PG keeps its share, 250 to 3000"},

		// The S3 gateway (cuttle s3 serve; docs/S3.md). It reads them
		// from its flags and the configuration file's [client.s3],
		// [client] and [global] sections, as it starts.
		{Name: "s3_lifecycle_day", Type: TypeDuration, Default: "24h0m0s", Runtime: false, Min: 1, Max: noBound, Daemons: s3, Flag: "lifecycle-day",
			Desc: "length of a lifecycle day: rules' Days count these and each bucket gets one lifecycle pass a day (radosgw's rgw_lc_debug_interval); shorten it to try rules quickly (a day other than 24h is not rounded to midnight)"},
		{Name: "s3_lifecycle_max_ops", Type: TypeFloat, Default: "200", Runtime: false, Min: 0, Max: 1e9, Daemons: s3, Flag: "lifecycle-max-ops",
			Desc: "removals per second a gateway's lifecycle passes make at most (0: unbounded)"},
		{Name: "s3_ssl_certificate", Type: TypeString, Default: "", Runtime: false, Daemons: s3, Flag: "cert",
			Desc: "PEM certificate (chain) file: with s3_ssl_private_key the gateway serves HTTPS only; empty serves HTTP"},
		{Name: "s3_ssl_private_key", Type: TypeString, Default: "", Runtime: false, Daemons: s3, Flag: "key",
			Desc: "PEM private key file of s3_ssl_certificate"},
		{Name: "s3_access_log", Type: TypeString, Default: "", Runtime: false, Daemons: s3, Flag: "access-log",
			Desc: "file the gateway appends one JSON line per request to (`-`: stderr; empty: none); reopened on SIGHUP for logrotate (docs/S3.md, Access logs)"},

		// Accepted, read by no daemon yet.
		// The rbd library's write-back cache (rbd.CacheOptions, whose
		// DefaultCacheOptions are these defaults; a test keeps them
		// equal). Clients take them from their own settings, not yet
		// from the central config.
		{Name: "rbd_cache", Type: TypeBool, Default: "false", Runtime: false,
			Desc: "open block images with the client-side write-back cache (rbd.OpenOptions.Cache; `cuttle nbd serve --cache`, `cuttle rbd bench --cache`); not read from the central config yet"},
		{Name: "rbd_cache_size", Type: TypeSize, Default: "33554432", Runtime: false, Min: 65536, Max: 1 << 40,
			Desc: "bytes an image's cache holds, clean and dirty (rbd.CacheOptions.Size)"},
		{Name: "rbd_cache_max_dirty", Type: TypeSize, Default: "25165824", Runtime: false, Min: 0, Max: 1 << 40,
			Desc: "dirty bytes in an image's cache before writers wait for write-back; 0 makes the cache write-through (rbd.CacheOptions.MaxDirty)"},
		{Name: "rbd_cache_target_dirty", Type: TypeSize, Default: "16777216", Runtime: false, Min: 0, Max: 1 << 40,
			Desc: "dirty bytes in an image's cache from which write-back starts (rbd.CacheOptions.TargetDirty)"},
		{Name: "rbd_cache_max_dirty_age", Type: TypeDuration, Default: "1s", Runtime: false, Min: 0.001, Max: 3600,
			Desc: "how long a block stays dirty in an image's cache before it is written back (rbd.CacheOptions.MaxDirtyAge)"},
		{Name: "rbd_cache_writethrough_until_flush", Type: TypeBool, Default: "true", Runtime: false,
			Desc: "an image's cache writes through until the first flush, for programs that never flush (rbd.CacheOptions.WritethroughUntilFlush)"},
		{Name: "osd_objectstore", Type: TypeString, Default: "blockstore", Runtime: false, Enum: []string{"blockstore", "memstore"},
			Desc: "object store engine of new OSDs (not read yet: cuttle osd mkfs makes blockstore stores)"},
	}
}

// Schema returns a copy of the option table, by name.
func Schema() []Option {
	out := schemaTable()
	slices.SortFunc(out, func(a, b Option) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ForDaemon returns the options daemons of type typ read, by name.
func ForDaemon(typ string) []Option {
	var out []Option
	for _, o := range Schema() {
		if o.ReadBy(typ) {
			out = append(out, o)
		}
	}
	return out
}

// optionsByName is the option table by name, built on first use and
// never changed after: Lookup copies what it returns.
var optionsByName = sync.OnceValue(func() map[string]Option {
	table := schemaTable()
	m := make(map[string]Option, len(table))
	for _, o := range table {
		m[o.Name] = o
	}
	return m
})

// Lookup returns the option called name. Its slices are the caller's
// own, so a caller that changes them changes no other's.
func Lookup(name string) (Option, bool) {
	o, ok := optionsByName()[name]
	if !ok {
		return Option{}, false
	}
	o.Enum = slices.Clone(o.Enum)
	o.Daemons = slices.Clone(o.Daemons)
	return o, true
}
