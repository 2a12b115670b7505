package pgmon

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// barWidth is the width of the recovery progress bar.
const barWidth = 30

// StatusText returns the sections the service adds to "status" at now,
// as Ceph's "ceph -s" prints them: data (pools, objects, usage, PGs by
// state) and, while object copies are degraded or misplaced, progress
// (a bar, the recovery rate and the time left at that rate):
//
//	data:
//	  pools:   1 pool, 32 pgs
//	  objects: 120 objects, 480 MiB
//	  usage:   1.5 GiB used, 28 GiB / 30 GiB avail
//	  pgs:     40/360 objects degraded (11.111%)
//	           28 active+clean
//	           4  active+recovering+degraded
//
//	progress:
//	  recovery: 12.3 objects/s, 60% done, ~3s left
//	    [==================............] 40 objects left
func (s *Service) StatusText(now time.Time) string {
	v := s.statView(now)
	var b strings.Builder
	b.WriteString("  data:\n")
	fmt.Fprintf(&b, "    pools:   %s, %s\n", plural(v.NumPools, "pool"), plural(v.NumPGs, "pg"))
	fmt.Fprintf(&b, "    objects: %s, %s\n", plural(int(v.NumObjects), "object"), signedBytes(v.DataBytes))
	fmt.Fprintf(&b, "    usage:   %s used, %s / %s avail\n", formatBytes(v.UsedBytes), formatBytes(v.AvailBytes), formatBytes(v.TotalBytes))
	for i, l := range pgLines(v) {
		if i == 0 {
			b.WriteString("    pgs:     " + l + "\n")
		} else {
			b.WriteString("             " + l + "\n")
		}
	}
	if r := v.Recovery; r != nil {
		b.WriteString("\n  progress:\n    recovery: ")
		done := int(r.Progress * 100)
		switch {
		case r.ObjectsPerSec > 0:
			fmt.Fprintf(&b, "%.1f objects/s, %d%% done, ~%v left\n", r.ObjectsPerSec, done, time.Duration(r.ETASeconds)*time.Second)
		case now.Sub(r.Since) < rateWindow:
			fmt.Fprintf(&b, "no progress yet, %d%% done\n", done)
		default:
			fmt.Fprintf(&b, "no progress in the last %v, %d%% done\n", rateWindow, done)
		}
		fmt.Fprintf(&b, "      %s %s left\n", bar(r.Progress, barWidth), plural(int(r.ObjectsLeft), "object"))
	}
	return b.String()
}

// pgLines are the lines of "pgs:": the shares of PGs unknown and not
// active, the object counts, then the PGs by state.
func pgLines(v StatView) []string {
	var lines []string
	unknown, inactive, width := 0, 0, 0
	for _, c := range v.ByState {
		switch {
		case c.Name == stateUnknown:
			unknown += c.Num
		case !hasState(c.Name, "active"):
			inactive += c.Num
		}
		width = max(width, len(strconv.Itoa(c.Num)))
	}
	if unknown > 0 {
		lines = append(lines, percent(int64(unknown), int64(v.NumPGs))+" pgs unknown")
	}
	if inactive > 0 {
		lines = append(lines, percent(int64(inactive), int64(v.NumPGs))+" pgs not active")
	}
	lines = append(lines, objectLines(v)...)
	for _, c := range v.ByState {
		lines = append(lines, fmt.Sprintf("%-*d %s", width, c.Num, c.Name))
	}
	return lines
}
