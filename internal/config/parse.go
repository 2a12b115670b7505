package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxValue bounds a string option's value.
const MaxValue = 4096

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
		if len(v) > MaxValue {
			return "", fmt.Errorf("%s: value longer than %d bytes", o.Name, MaxValue)
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
