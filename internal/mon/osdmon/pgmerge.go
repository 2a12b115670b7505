package osdmon

import (
	"fmt"
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Merging PGs. "osd pool set POOL pg_num N" below the current pg_num
// sets the pool's pg_num_target (and lowers pgp_num_target to it); the
// leader's Tick then takes the merge through these steps, each a
// command Prepare checks again (osdmap's merge.go has the whole story):
//
//  1. pgp_num steps down to the target (pgstep.go), moving each source
//     PG's data onto its target's OSDs through backfill.
//  2. Once pgp_num is there and every source and target PG is
//     active+clean on the same OSDs, "osd pool set POOL pg_num_pending
//     N": the sources and targets start a new interval and take no
//     writes (their clients wait for the next map).
//  3. Once every one of them reported active+clean from that interval,
//     on the same OSDs, "osd pool set POOL pg_num_actual N": pg_num
//     drops to N and the map records each source's and target's last
//     update from those reports; the OSDs merge.
//
// While a step waits, mergeStatus says why ("osd pool get POOL
// merge_status"). Setting pg_num back to the current value or above
// cancels a pending step (writes resume).

// PGStat is one PG's statistics as pgmon derives them (pgmon's Service
// implements it): its last report, the state shown for it, and whether
// the report is current (reported by its up primary).
type PGStat interface {
	PGStat(pg osdmap.PG) (wire.PGStat, bool)
}

// mergeStep is what the leader does next for a pool whose pg_num is
// headed down: set Var (pg_num_pending or pg_num_actual) to N, or, with
// Var empty, wait for the reason Why.
type mergeStep struct {
	Var string
	N   uint32
	Why string
}

// nextMerge returns the next merge step for p given the PG statistics
// (stat reports each PG's). A pool not merging gets the zero step.
func nextMerge(p *osdmap.Pool, stat func(osdmap.PG) (wire.PGStat, bool)) mergeStep {
	target, pgpTarget := p.Targets()
	n := p.PGNumPending
	if n == 0 {
		switch {
		case target >= p.PGNum:
			return mergeStep{}
		case p.PGPNum > target:
			return mergeStep{Why: fmt.Sprintf("waiting for pgp_num %d to step down to %d (pgp_num_target %d) "+
				"while under target_max_misplaced_ratio of the data moves", p.PGPNum, target, pgpTarget)}
		}
		n = target
	}
	if why := mergeBlocked(p, n, p.PendingSince, stat); why != "" {
		if p.PGNumPending != 0 {
			return mergeStep{Why: fmt.Sprintf("merging pg_num %d to %d, writes to the merging PGs held: %s", p.PGNum, n, why)}
		}
		return mergeStep{Why: fmt.Sprintf("waiting to merge pg_num %d to %d: %s", p.PGNum, n, why)}
	}
	if p.PGNumPending == 0 {
		return mergeStep{Var: "pg_num_pending", N: n,
			Why: fmt.Sprintf("holding writes to the PGs that merge, pg_num %d to %d", p.PGNum, n)}
	}
	return mergeStep{Var: "pg_num_actual", N: n, Why: fmt.Sprintf("merging pg_num %d to %d", p.PGNum, n)}
}

// mergeBlocked says why merging p's PGs down to n cannot go on (""
// when it can): every source (seeds n to pg_num-1) and its target (the
// seed it maps to with n PGs) must have a current report, be
// active+clean and be on the same OSDs; with since set (a merge pending
// since that epoch), the reports must come from an interval that began
// then or later, when the PGs stopped taking writes, and name their last
// update.
func mergeBlocked(p *osdmap.Pool, n uint32, since osdmap.Epoch, stat func(osdmap.PG) (wire.PGStat, bool)) string {
	check := func(pg osdmap.PG) (wire.PGStat, string) {
		st, ok := stat(pg)
		switch {
		case !ok:
			return st, fmt.Sprintf("pg %v is %s, without a current report", pg, st.State)
		case st.State != "active+clean":
			return st, fmt.Sprintf("pg %v is %s, not active+clean", pg, st.State)
		case since != 0 && st.SameIntervalSince < uint64(since):
			return st, fmt.Sprintf("pg %v has not reported since it stopped taking writes (epoch %d)", pg, since)
		}
		if since != 0 {
			if _, err := osdmap.ParsePGVersion(st.LastUpdate); err != nil {
				return st, fmt.Sprintf("pg %v reported last update %q", pg, st.LastUpdate)
			}
		}
		return st, ""
	}
	for s := n; s < p.PGNum; s++ {
		src := osdmap.PG{Pool: p.ID, Seed: s}
		tgt := osdmap.PG{Pool: p.ID, Seed: osdmap.StableMod(s, n, osdmap.PGMask(n))}
		a, why := check(src)
		if why != "" {
			return why
		}
		b, why := check(tgt)
		if why != "" {
			return why
		}
		if !sameOSDs(a.Acting, b.Acting) {
			return fmt.Sprintf("pg %v on %v and its target %v on %v are not on the same OSDs", src, a.Acting, tgt, b.Acting)
		}
	}
	return ""
}

func sameOSDs(a, b []int32) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// mergedPGs records, for the merge step from p's pg_num down to n, each
// source's and target's last update as reported (nextMerge checked they
// parse).
func mergedPGs(p *osdmap.Pool, n uint32, stat func(osdmap.PG) (wire.PGStat, bool)) osdmap.PoolMerge {
	out := osdmap.PoolMerge{From: p.PGNum}
	version := func(seed uint32) osdmap.PGVersion {
		st, _ := stat(osdmap.PG{Pool: p.ID, Seed: seed})
		v, _ := osdmap.ParsePGVersion(st.LastUpdate)
		return v
	}
	for s := n; s < p.PGNum; s++ {
		out.PGs = append(out.PGs, osdmap.MergedPG{Source: s, SourceVersion: version(s),
			TargetVersion: version(osdmap.StableMod(s, n, osdmap.PGMask(n)))})
	}
	return out
}

// statFunc returns how the service reads PG statistics: from pgmon, or,
// without them (tests of other things), every PG active+clean on the
// OSDs the map gives it, at version 0'0.
func (s *Service) statFunc() func(osdmap.PG) (wire.PGStat, bool) {
	if st, ok := s.pgStats.(PGStat); ok {
		return st.PGStat
	}
	return func(pg osdmap.PG) (wire.PGStat, bool) {
		var sc osdmap.Scratch
		mp, err := s.m.PGToUpActing(pg, &sc)
		if err != nil {
			return wire.PGStat{PG: pg, State: "unknown"}, false
		}
		return wire.PGStat{PG: pg, State: "active+clean", Up: mp.Up, Acting: mp.Acting, LastUpdate: "0'0",
			SameIntervalSince: uint64(s.m.Epoch())}, true
	}
}

// mergeSteps returns the commands that take each merging pool's next
// step (Tick calls it on the leader).
func (s *Service) mergeSteps() []moncmd.Command {
	stat := s.statFunc()
	var out []moncmd.Command
	pools := s.m.Pools()
	for i := range pools {
		p := &pools[i]
		if !p.Merging() {
			continue
		}
		if rm := s.mergeUpmaps(p); len(rm) > 0 {
			// Those entries would keep a source apart from its target.
			for _, pg := range rm {
				s.log.Info("removing pg_upmap_items of a PG that merges", "pg", pg.String())
				out = append(out, moncmd.New("osd rm-pg-upmap-items", "pgid", pg.String()))
			}
			continue
		}
		step := nextMerge(p, stat)
		if step.Var == "" {
			continue
		}
		if step.Var == "pg_num_pending" && s.pgStats != nil && !s.pgStats.StatsCurrent(p.ID, p.LastChange) {
			continue // the last pgp_num step's PGs have not all reported: their states may be old
		}
		s.log.Info("merging placement groups", "pool", p.Name, "step", step.Var, "to", step.N, "pg_num", p.PGNum)
		out = append(out, moncmd.New("osd pool set", "pool", p.Name, "var", step.Var, "val", fmt.Sprint(step.N),
			sureArg, "true"))
	}
	return out
}

// mergeUpmaps returns the PGs that take part in p's merge and have
// pg_upmap_items, once pgp_num has reached the target and before writes
// are held: the leader removes those entries (the balancer leaves a
// merging pool alone), so that every source lands with its target.
func (s *Service) mergeUpmaps(p *osdmap.Pool) []osdmap.PG {
	target, _ := p.Targets()
	if p.PGNumPending != 0 || target >= p.PGNum || p.PGPNum > target {
		return nil
	}
	merging := map[uint32]bool{}
	for seed := target; seed < p.PGNum; seed++ {
		merging[seed] = true
		merging[osdmap.StableMod(seed, target, osdmap.PGMask(target))] = true
	}
	var out []osdmap.PG
	for _, seed := range slices.Sorted(maps.Keys(merging)) {
		if pg := (osdmap.PG{Pool: p.ID, Seed: seed}); s.m.PGUpmapItems(pg) != nil {
			out = append(out, pg)
		}
	}
	return out
}

// setMergeStep applies "osd pool set POOL pg_num_pending|pg_num_actual
// N" to p (the pool as it will be), at epoch, or refuses it: N must be
// the step nextMerge gives now.
func (s *Service) setMergeStep(p *osdmap.Pool, v string, n int64, epoch osdmap.Epoch) *moncmd.Reply {
	stat := s.statFunc()
	step := nextMerge(p, stat)
	if step.Var != v || int64(step.N) != n {
		why := step.Why
		if why == "" {
			why = "no merge is under way"
		}
		r := moncmd.Errorf(moncmd.EBUSY, "pool '%s': %s %d is not the merge's next step (%s); "+
			"the monitors take these steps themselves: set pg_num", p.Name, v, n, why)
		return &r
	}
	target, pgpTarget := p.Targets()
	if v == "pg_num_pending" {
		p.PGNumPending, p.PendingSince = step.N, epoch
		return nil
	}
	p.LastMerge = mergedPGs(p, step.N, stat)
	p.PGNum, p.PGNumPending, p.PendingSince = step.N, 0, 0
	p.SetTargets(target, pgpTarget)
	return nil
}

// mergeStatus says where p's merge stands, for "osd pool get".
func (s *Service) mergeStatus(p *osdmap.Pool) string {
	if !p.Merging() {
		return "none"
	}
	return nextMerge(p, s.statFunc()).Why
}

// poolUnclean names a PG of p that is not active+clean ("" if none):
// a merge is refused from the start while one is.
func (s *Service) poolUnclean(p *osdmap.Pool) string {
	if s.pgStats == nil {
		return ""
	}
	stat := s.statFunc()
	bad, first := 0, ""
	for seed := range p.PGNum {
		st, ok := stat(osdmap.PG{Pool: p.ID, Seed: seed})
		if !ok || st.State != "active+clean" {
			if bad == 0 {
				first = fmt.Sprintf("pg %v is %s", st.PG, st.State)
			}
			bad++
		}
	}
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("%s (%d of its %d PGs are not active+clean)", first, bad, p.PGNum)
}
