package osdmon

import (
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// The guards of "osd pool create" and "osd pool set": settings that lose
// data or overload the OSDs are refused, or need the caller to say they
// mean it; settings the CRUSH rule cannot honour are accepted with a
// warning, as Ceph does.

// sureArg is the argument that confirms a risky pool setting (the CLI's
// --yes-i-really-mean-it), as Ceph names it.
const sureArg = "yes_i_really_mean_it"

// majority is the least min_size that keeps a majority of size copies
// behind every acknowledged write: the default min_size, size - size/2.
func majority(size int) int { return size - size/2 }

// riskyCopies says why settings let the pool keep too few copies of
// what it acknowledges, or "" if they do not: size 1 (one copy, so one
// failed OSD loses data) or min_size below a majority of size (a write
// acknowledged by fewer copies is lost if those fail before recovery).
func riskyCopies(p poolSettings) string {
	switch {
	case p.Size == 1:
		return "size 1 keeps a single copy of every object: losing that one OSD or its disk loses the data"
	case p.MinSize < majority(p.Size):
		return fmt.Sprintf("min_size %d with size %d lets the pool acknowledge writes held by %d of %d copies: "+
			"if those fail before recovery, acknowledged writes are lost (a majority, min_size %d, is the safe least)",
			p.MinSize, p.Size, p.MinSize, p.Size, majority(p.Size))
	}
	return ""
}

// checkSure refuses risky settings unless the command carries
// yes_i_really_mean_it=true. what names the command and pool for the
// message.
func checkSure(c moncmd.Command, p poolSettings, what string) (moncmd.Reply, bool) {
	why := riskyCopies(p)
	if why == "" {
		return moncmd.Reply{}, true
	}
	sure, err := c.Bool(sureArg)
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL), false
	}
	if sure {
		return moncmd.Reply{}, true
	}
	return moncmd.Errorf(moncmd.EPERM, "%s: %s; if that is what you want, pass --yes-i-really-mean-it", what, why), false
}

// checkPGLimit refuses a pool change that would put more than
// mon_max_pg_per_osd PG copies on each in OSD, on average. The rule is
// Ceph's (OSDMonitor::check_pg_num, without its per-root refinement):
// the projected total is the sum over every pool of pg_num × size, with
// pool p's new values (p.ID not yet in the map for a new pool), and the
// limit is mon_max_pg_per_osd × max(in OSDs, 3); at least three OSDs are
// counted so that a cluster being set up, before its OSDs boot, can
// still create its first pools. It counts PG copies the map asks for,
// not those placed: an OSD holds many PGs of many pools, and each costs
// memory, threads' time and peering work whether or not it has data.
func (s *Service) checkPGLimit(p osdmap.Pool, what string) (moncmd.Reply, bool) {
	limit := s.opts.Int(OptMaxPGPerOSD)
	if limit <= 0 {
		limit = 250
	}
	_, _, in := s.m.NumOSDs()
	counted := max(in, 3)
	projected := int64(p.PGNum) * int64(p.Size)
	for _, q := range s.m.Pools() {
		if q.ID != p.ID {
			projected += int64(q.PGNum) * int64(q.Size)
		}
	}
	if projected <= limit*int64(counted) {
		return moncmd.Reply{}, true
	}
	return moncmd.Errorf(moncmd.ERANGE, "%s: pg_num %d × size %d would bring the cluster to %d PG copies, "+
		"above the limit of %d (mon_max_pg_per_osd %d × %d in OSDs, at least 3 counted); "+
		"use fewer PGs, add OSDs, or raise the limit (cuttle config set mon %s N)",
		what, p.PGNum, p.Size, projected, limit*int64(counted), limit, counted, OptMaxPGPerOSD), false
}

// placementWarning returns a warning if pool p's CRUSH rule cannot place
// p.Size copies of every PG on the OSDs in the map, or "" if it can (or
// the map has no OSDs yet). Each PG of p is mapped with the rule as if
// every OSD in the map were up and in, so the warning is about the
// hierarchy and the rule, not about OSDs that are down for now.
func (s *Service) placementWarning(p osdmap.Pool) string {
	m, cm := s.m, s.m.Crush()
	r := cm.Rule(p.CrushRule)
	if r == nil {
		return ""
	}
	weights := make([]uint32, m.MaxOSD())
	anyOSD := false
	for i := range weights {
		if m.Exists(int32(i)) {
			weights[i], anyOSD = 0x10000, true
		}
	}
	if !anyOSD {
		return ""
	}
	ws := cm.NewWorkspace()
	out := make([]int32, p.Size)
	least, short := p.Size, 0
	args := cm.ChooseArgsFor(p.ID)
	// Seeds at or above pgp_num are placed as seed mod pgp_num.
	for seed := range p.PGPNum {
		pps := p.RawPGToPPS(osdmap.PG{Pool: p.ID, Seed: seed})
		n := cm.DoRule(ws, p.CrushRule, int32(pps), out, weights, args)
		placed := 0
		for _, o := range out[:n] {
			if o >= 0 && int(o) < len(weights) && weights[o] != 0 {
				placed++
			}
		}
		if placed < p.Size {
			short++
			least = min(least, placed)
		}
	}
	if short == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "warning: crush rule %s can place only %d of %d copies", r.Name, least, p.Size)
	if short < int(p.PGPNum) {
		fmt.Fprintf(&b, " of some PGs (%d of %d placements short)", short, p.PGPNum)
	}
	root, domain, ok := ruleDomain(r)
	if !ok {
		b.WriteString("; PGs short of copies stay undersized")
		return b.String()
	}
	n := countDomains(cm, m, root, domain)
	dname := cm.TypeName(domain)
	fmt.Fprintf(&b, ": its failure domain is %s, and %s holds OSDs in %d %s", dname, cm.ItemName(root), n, plural(n, dname))
	fmt.Fprintf(&b, "; PGs stay undersized until it holds OSDs in %d %s", p.Size, plural(p.Size, dname))
	if domain != 0 {
		if other := osdRule(cm, root); other != "" {
			fmt.Fprintf(&b, ", or use rule %s, which places copies on OSDs (cuttle osd pool set %s crush_rule %s)", other, p.Name, other)
		} else {
			// A class's shadow root is named ROOT~CLASS.
			rootName, class, _ := strings.Cut(cm.ItemName(root), "~")
			fmt.Fprintf(&b, ", or use a rule that places copies on OSDs (cuttle osd crush rule create-replicated NAME %s osd%s, "+
				"then cuttle osd pool set %s crush_rule NAME)", rootName, strings.TrimRight(" "+class, " "), p.Name)
		}
	}
	b.WriteString(", or lower size")
	return b.String()
}

// osdRule names a replicated rule that takes root and spreads copies
// over OSDs, or "" if there is none.
func osdRule(cm *crush.Map, root int32) string {
	for _, r := range cm.Rules() {
		if r.Type != crush.RuleReplicated {
			continue
		}
		if rr, typ, ok := ruleDomain(r); ok && rr == root && typ == 0 {
			return r.Name
		}
	}
	return ""
}

// ruleDomain returns the root a replicated rule takes and the type its
// copies are spread over: the type of its choose step (for a choose to
// buckets followed by a chooseleaf, the first: copies differ at least
// there).
func ruleDomain(r *crush.Rule) (root, typ int32, ok bool) {
	took := false
	for _, st := range r.Steps {
		switch st.Op {
		case crush.OpTake:
			root, took = st.Arg1, true
		case crush.OpChooseFirstN, crush.OpChooseIndep, crush.OpChooseLeafFirstN, crush.OpChooseLeafIndep:
			if took {
				return root, st.Arg2, true
			}
		}
	}
	return 0, 0, false
}

// countDomains counts the items of type typ under root (devices for type
// 0) that hold an OSD of the map with a non-zero CRUSH weight.
func countDomains(cm *crush.Map, m *osdmap.Map, root, typ int32) int {
	var holds func(id int32) bool
	holds = func(id int32) bool {
		if id >= 0 {
			return m.Exists(id)
		}
		b := cm.Bucket(id)
		if b == nil {
			return false
		}
		for i, it := range b.Items {
			if b.Weights[i] != 0 && holds(it) {
				return true
			}
		}
		return false
	}
	var count func(id int32, w uint32) int
	count = func(id int32, w uint32) int {
		if w == 0 {
			return 0
		}
		if id >= 0 {
			if typ == 0 && m.Exists(id) {
				return 1
			}
			return 0
		}
		b := cm.Bucket(id)
		if b == nil {
			return 0
		}
		if typ != 0 && b.Type == typ {
			if holds(id) {
				return 1
			}
			return 0
		}
		n := 0
		for i, it := range b.Items {
			n += count(it, b.Weights[i])
		}
		return n
	}
	return count(root, 1)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
