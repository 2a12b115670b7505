package pgmon

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/osdmap"
)

// formatBytes prints n as Ceph prints sizes: "0 B", "2.3 KiB", "91 MiB".
func formatBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u := 0
	for u+1 < len(units) && n >= 1<<(10*(u+1)) {
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n) / float64(uint64(1)<<(10*u))
	if v >= 1023.5 && u+1 < len(units) { // would print as 1024
		u, v = u+1, v/1024
	}
	if v < 9.95 {
		return fmt.Sprintf("%.1f %s", v, units[u])
	}
	return fmt.Sprintf("%.0f %s", v, units[u])
}

// signedBytes is formatBytes of a count that a bad report could make
// negative.
func signedBytes(n int64) string {
	if n < 0 {
		return "-" + formatBytes(uint64(-n))
	}
	return formatBytes(uint64(n))
}

// percent prints part of whole as Ceph does: "33.333%".
func percent(part, whole int64) string {
	if whole <= 0 {
		return "0.000%"
	}
	return fmt.Sprintf("%.3f%%", 100*float64(part)/float64(whole))
}

// plural prints "1 pg", "2 pgs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// osdsWithPrimary prints a set and its primary as "pg dump" does:
// "[0,1,2]p0".
func osdsWithPrimary(osds []int32, primary int32) string {
	return osdmap.FormatOSDs(osds) + "p" + strconv.Itoa(int(primary))
}

// stampText prints a scrub stamp, "-" for never.
func stampText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// age prints how long ago t was, briefly ("45s", "5m", "2h", "3d"); "-"
// for the zero time.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := max(now.Sub(t), 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// bar draws a progress bar of width characters for done in [0, 1].
func bar(done float64, width int) string {
	n := int(done*float64(width) + 0.5)
	n = min(max(n, 0), width)
	return "[" + strings.Repeat("=", n) + strings.Repeat(".", width-n) + "]"
}
