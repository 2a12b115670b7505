package configmon

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
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

// Option describes one configuration option.
type Option struct {
	Name string
	Type Type
	// Default is the value in effect when no section sets one, in the
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
}

// schemaTable returns the option table, built afresh so no caller can
// change another's. It is the one place defaults live; other services read
// values through a View.
func schemaTable() []Option {
	return []Option{
		{Name: "mon_allow_pool_delete", Type: TypeBool, Default: "false", Runtime: true,
			Desc: "allow pools to be deleted (osd pool rm)"},
		{Name: "mon_max_pg_per_osd", Type: TypeInt, Default: "250", Runtime: true, Min: 1, Max: 1 << 20,
			Desc: "PG copies per in OSD (at least 3 OSDs counted) beyond which osd pool create and osd pool set size are refused"},
		{Name: "mon_min_osdmap_epochs", Type: TypeInt, Default: "500", Runtime: true, Min: 1, Max: 1 << 20,
			Desc: "number of OSD map epochs the monitors keep"},
		{Name: "mon_osd_down_out_interval", Type: TypeDuration, Default: "10m0s", Runtime: true, Min: 0, Max: 1 << 31,
			Desc: "how long an OSD stays down before the monitors mark it out; 0 never marks out"},
		{Name: "mon_osd_min_down_reporters", Type: TypeInt, Default: "2", Runtime: true, Min: 1, Max: 1 << 20,
			Desc: "distinct failure domains (see mon_osd_reporter_subtree_level) that must report an OSD before it is marked down"},
		{Name: "mon_osd_nearfull_ratio", Type: TypeFloat, Default: "0.85", Runtime: false, Min: 0.01, Max: 1,
			Desc: "used/total of an OSD's store at which it is marked nearfull (OSD_NEARFULL); read when the cluster's first OSD map is made, then changed with osd set-nearfull-ratio"},
		{Name: "mon_osd_backfillfull_ratio", Type: TypeFloat, Default: "0.9", Runtime: false, Min: 0.01, Max: 1,
			Desc: "used/total of an OSD's store at which it is marked backfillfull and receives no backfill (OSD_BACKFILLFULL); read when the first OSD map is made, then changed with osd set-backfillfull-ratio"},
		{Name: "mon_osd_full_ratio", Type: TypeFloat, Default: "0.95", Runtime: false, Min: 0.01, Max: 1,
			Desc: "used/total of an OSD's store at which it is marked full and the pools using it refuse writes (OSD_FULL, POOL_FULL); read when the first OSD map is made, then changed with osd set-full-ratio"},
		{Name: "mon_osd_reporter_subtree_level", Type: TypeString, Default: "host", Runtime: true,
			Desc: "CRUSH level by which failure reporters are counted"},
		{Name: "osd_heartbeat_grace", Type: TypeDuration, Default: "20s", Runtime: true, Min: 1, Max: 1 << 20,
			Desc: "how long an OSD must be reported failed before it is marked down"},
		{Name: "osd_heartbeat_interval", Type: TypeDuration, Default: "6s", Runtime: true, Min: 0.01, Max: 60,
			Desc: "how often an OSD pings its peers"},
		{Name: "osd_max_backfills", Type: TypeInt, Default: "1", Runtime: true, Min: 1, Max: 1024,
			Desc: "backfills an OSD runs at once, to or from it"},
		{Name: "osd_pool_default_crush_rule", Type: TypeString, Default: "replicated_rule", Runtime: true,
			Desc: "CRUSH rule (name or id) of new pools created without one"},
		{Name: "osd_pool_default_min_size", Type: TypeInt, Default: "0", Runtime: true, Min: 0, Max: 10,
			Desc: "min_size of new pools; 0 means size - size/2"},
		{Name: "osd_pool_default_pg_num", Type: TypeInt, Default: "32", Runtime: true, Min: 1, Max: 65536,
			Desc: "pg_num of new pools"},
		{Name: "osd_pool_default_size", Type: TypeInt, Default: "3", Runtime: true, Min: 1, Max: 10,
			Desc: "number of replicas of new pools"},
		{Name: "osd_recovery_max_active", Type: TypeInt, Default: "3", Runtime: true, Min: 1, Max: 1024,
			Desc: "recovery operations an OSD runs at once"},
		{Name: "osd_objectstore", Type: TypeString, Default: "blockstore", Runtime: false, Enum: []string{"blockstore", "memstore"},
			Desc: "object store engine of new OSDs"},
	}
}

// Schema returns a copy of the option table, by name.
func Schema() []Option {
	out := schemaTable()
	slices.SortFunc(out, func(a, b Option) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the option called name.
func Lookup(name string) (Option, bool) {
	for _, o := range schemaTable() {
		if o.Name == name {
			return o, true
		}
	}
	return Option{}, false
}

// Parse checks v against the option and returns its canonical form, the
// form stored and shown.
func (o Option) Parse(v string) (string, error) {
	v = strings.TrimSpace(v)
	var num float64 // the value checked against Min and Max
	var canon string
	switch o.Type {
	case TypeInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", fmt.Errorf("%s: %q is not an integer", o.Name, v)
		}
		num, canon = float64(n), strconv.FormatInt(n, 10)
	case TypeFloat:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf("%s: %q is not a number", o.Name, v)
		}
		num, canon = f, strconv.FormatFloat(f, 'g', -1, 64)
	case TypeBool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", fmt.Errorf("%s: %q is not true or false", o.Name, v)
		}
		canon = strconv.FormatBool(b)
	case TypeString:
		if len(v) > maxValue {
			return "", fmt.Errorf("%s: value longer than %d bytes", o.Name, maxValue)
		}
		if len(o.Enum) > 0 && !slices.Contains(o.Enum, v) {
			return "", fmt.Errorf("%s: %q is not one of %s", o.Name, v, strings.Join(o.Enum, ", "))
		}
		canon = v
	case TypeDuration:
		d, err := parseDuration(v)
		if err != nil {
			return "", fmt.Errorf("%s: %w", o.Name, err)
		}
		num, canon = d.Seconds(), d.String()
	case TypeSize:
		n, err := parseSize(v)
		if err != nil {
			return "", fmt.Errorf("%s: %w", o.Name, err)
		}
		num, canon = float64(n), strconv.FormatInt(n, 10)
	default:
		return "", fmt.Errorf("%s: unknown type %s", o.Name, o.Type)
	}
	if o.Min < o.Max && (num < o.Min || num > o.Max) {
		return "", fmt.Errorf("%s: %s is out of range [%s, %s]", o.Name, v,
			strconv.FormatFloat(o.Min, 'g', -1, 64), strconv.FormatFloat(o.Max, 'g', -1, 64))
	}
	return canon, nil
}

// parseDuration accepts Go durations ("20s", "1m30s") and plain numbers of
// seconds ("20", "0.5"), as Ceph's secs options are set.
func parseDuration(v string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(f) || f < 0 || f > math.MaxInt64/float64(time.Second) {
			return 0, fmt.Errorf("%q is not a duration", v)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration (like 20s or 10m)", v)
	}
	return d, nil
}

// parseSize accepts a byte count with an optional K, M, G or T suffix
// (powers of 1024; "Ki" and "KiB" spellings too).
func parseSize(v string) (int64, error) {
	s := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(v), "B"), "I")
	shift := 0
	if n := len(s); n > 0 {
		if i := strings.IndexByte("KMGT", s[n-1]); i >= 0 {
			shift, s = 10*(i+1), s[:n-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%q is not a size (like 4096, 64K or 1G)", v)
	}
	return n << shift, nil
}
