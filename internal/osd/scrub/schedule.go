package scrub

import (
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/osdmap"
)

// Scheduling: an OSD scrubs one PG at a time, and between operators'
// requests it picks the most overdue of the PGs it is primary of: a
// light scrub every Intervals.Light, a deep one every Intervals.Deep,
// each stretched by a fixed share of up to half for each PG, so that PGs
// created together do not all come due together.

// Intervals are how often each PG is scrubbed lightly and deeply
// (osd_scrub_interval, osd_deep_scrub_interval).
type Intervals struct {
	Light, Deep time.Duration
}

// Candidate is a PG the driver found ready to scrub now (active, with a
// full acting set, not scrubbing already).
type Candidate struct {
	PG osdmap.PG
	// LastScrub and LastDeepScrub are when its last scrubs finished;
	// zero if never. A deep scrub sets both.
	LastScrub, LastDeepScrub time.Time
	// Since is when the OSD took the PG up: its first scrubs are due an
	// interval after it, and so are those of a PG whose stamps are older.
	Since time.Time
	// NoScrub and NoDeepScrub: the cluster's or the pool's noscrub and
	// nodeep-scrub flags, which hold back scheduled light and deep
	// scrubs (an operator's request runs regardless).
	NoScrub, NoDeepScrub bool
}

// Job is a scrub to start.
type Job struct {
	PG   osdmap.PG
	Deep bool
}

// Next returns the most overdue scrub among candidates at now, if any is
// due: a PG's deep scrub when it is due, else its light one. A flag holds
// back only its kind: under noscrub a due deep scrub still runs, and
// under nodeep-scrub a PG due a deep scrub gets a light one. Lateness is
// how long ago the scrub came due. Candidates are weighed in PG order
// (osdmap.ComparePG), whatever order they come in (a driver gathers them
// from a map): of equally late scrubs the higher PG wins, and a deep
// scrub that is due but less late than the best of the PGs before it
// gives way to its PG's light scrub if that is later still. The answer
// depends on the set of candidates only, so a seeded simulation scrubs
// in the same order every run.
func Next(now time.Time, iv Intervals, candidates []Candidate) (Job, bool) {
	var best Job
	var bestLate time.Duration
	found := false
	for _, c := range inPGOrder(candidates) {
		stretch := spread(c.PG)
		deepLate := now.Sub(since(c.LastDeepScrub, c.Since)) - stretched(iv.Deep, stretch)
		lightLate := now.Sub(since(c.LastScrub, c.Since)) - stretched(iv.Light, stretch)
		switch {
		case !c.NoDeepScrub && deepLate >= 0 && deepLate >= bestLate:
			best, bestLate, found = Job{PG: c.PG, Deep: true}, deepLate, true
		case !c.NoScrub && lightLate >= 0 && lightLate >= bestLate:
			best, bestLate, found = Job{PG: c.PG}, lightLate, true
		}
	}
	return best, found
}

// inPGOrder returns candidates sorted by PG, in a new slice.
func inPGOrder(candidates []Candidate) []Candidate {
	return slices.SortedFunc(slices.Values(candidates), func(a, b Candidate) int { return osdmap.ComparePG(a.PG, b.PG) })
}

// since is the later of stamp and born; born if stamp is zero.
func since(stamp, born time.Time) time.Time {
	if !stamp.IsZero() && stamp.After(born) {
		return stamp
	}
	return born
}

// spread is a PG's fixed fraction in [0, 1) by which its intervals
// stretch.
func spread(id osdmap.PG) float64 {
	h := fnv.New32a()
	fmt.Fprint(h, id.String())
	return float64(h.Sum32()%1024) / 1024
}

// stretched is d lengthened by half of it times f.
func stretched(d time.Duration, f float64) time.Duration {
	return d + time.Duration(float64(d)/2*f)
}
