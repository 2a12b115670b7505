package cmdutil

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseSize parses a byte count: an integer or decimal number with an
// optional binary suffix K, M, G, T or P (also written KiB, KB, k...).
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && !(t[i-1] >= '0' && t[i-1] <= '9') {
		i--
	}
	num, suffix := t[:i], strings.ToUpper(strings.TrimSpace(t[i:]))
	shift := 0
	switch strings.TrimSuffix(strings.TrimSuffix(suffix, "B"), "I") {
	case "":
	case "K":
		shift = 10
	case "M":
		shift = 20
	case "G":
		shift = 30
	case "T":
		shift = 40
	case "P":
		shift = 50
	default:
		return 0, fmt.Errorf("bad size %q: unknown unit %q (want K, M, G, T or P)", s, t[i:])
	}
	if suffix == "I" || suffix == "IB" {
		return 0, fmt.Errorf("bad size %q", s)
	}
	if num == "" {
		return 0, fmt.Errorf("bad size %q: no number", s)
	}
	if !strings.Contains(num, ".") {
		v, err := strconv.ParseUint(num, 10, 64)
		if err != nil || (shift > 0 && v > math.MaxUint64>>shift) {
			return 0, fmt.Errorf("bad size %q: not a number of bytes below 2^64", s)
		}
		return v << shift, nil
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	b := v * float64(uint64(1)<<shift)
	if b >= math.MaxUint64 || b != math.Trunc(b) {
		return 0, fmt.Errorf("bad size %q: not a whole number of bytes", s)
	}
	return uint64(b), nil
}

// FormatSize prints n in the largest binary unit it reaches ("64 KiB",
// "1.5 GiB", "100 B").
func FormatSize(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u := 0
	for u+1 < len(units) && n >= 1<<(10*(u+1)) {
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	div := uint64(1) << (10 * u)
	if n%div == 0 {
		return fmt.Sprintf("%d %s", n/div, units[u])
	}
	return fmt.Sprintf("%.1f %s", float64(n)/float64(div), units[u])
}
