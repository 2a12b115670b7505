package osdmon

import (
	"cmp"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Limits of pool settings (Ceph's mon_max_pool_pg_num and size bounds).
const (
	maxPoolPGNum = 65536
	maxPoolSize  = 10
)

// poolSettings are the settings "osd pool create" and "osd pool set"
// change.
type poolSettings struct {
	Size, MinSize int
	PGNum, PGPNum uint32
	Rule          int32
}

// checkSettings validates settings against the CRUSH map.
func checkSettings(cm *crush.Map, p poolSettings) error {
	switch {
	case p.Size < 1 || p.Size > maxPoolSize:
		return fmt.Errorf("size %d out of [1, %d]", p.Size, maxPoolSize)
	case p.MinSize < 1 || p.MinSize > p.Size:
		return fmt.Errorf("min_size %d out of [1, size %d]", p.MinSize, p.Size)
	case p.PGNum < 1 || p.PGNum > maxPoolPGNum:
		return fmt.Errorf("pg_num %d out of [1, %d]", p.PGNum, maxPoolPGNum)
	case p.PGPNum < 1 || p.PGPNum > p.PGNum:
		return fmt.Errorf("pgp_num %d out of [1, pg_num %d]", p.PGPNum, p.PGNum)
	}
	r := cm.Rule(p.Rule)
	if r == nil {
		return fmt.Errorf("no crush rule %d", p.Rule)
	}
	if r.Type != crush.RuleReplicated {
		return fmt.Errorf("crush rule %s is not a replicated rule", r.Name)
	}
	return nil
}

// ruleArg resolves a rule given by name or id.
func ruleArg(cm *crush.Map, v string) (int32, error) {
	if r := cm.RuleByName(v); r != nil {
		return r.ID, nil
	}
	if n, err := strconv.ParseInt(v, 10, 32); err == nil && cm.Rule(int32(n)) != nil {
		return int32(n), nil
	}
	return 0, fmt.Errorf("no crush rule %q", v)
}

// countArg reads an optional positive count.
func countArg(c moncmd.Command, name string, def int64) (int64, error) {
	n, err := c.IntOr(name, def)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > 1<<31 {
		return 0, moncmd.BadArgf("%s: %s %d out of range", c.Prefix, name, n)
	}
	return n, nil
}

// preparePoolCreate handles "osd pool create pool [pg_num] [pgp_num]
// [size] [min_size] [rule] [pool_type] [yes_i_really_mean_it]".
func (s *Service) preparePoolCreate(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	name, err := c.Str("pool")
	if err != nil {
		return bad(err)
	}
	if len(name) > osdmap.MaxNameLen {
		return nil, moncmd.Errorf(moncmd.EINVAL, "osd pool create: pool name longer than %d bytes", osdmap.MaxNameLen)
	}
	if typ := c.StrOr("pool_type", "replicated"); typ != "replicated" {
		return nil, moncmd.Errorf(moncmd.ENOTSUP, "osd pool create: pool type %q is not supported (replicated only)", typ)
	}
	pgNum, err := countArg(c, "pg_num", max(s.opts.Int(OptPoolDefaultPGNum), 1))
	if err != nil {
		return bad(err)
	}
	pgpNum, err := countArg(c, "pgp_num", pgNum)
	if err != nil {
		return bad(err)
	}
	size, err := countArg(c, "size", max(s.opts.Int(OptPoolDefaultSize), 1))
	if err != nil {
		return bad(err)
	}
	defMin := s.opts.Int(OptPoolDefaultMinSize)
	if defMin <= 0 || c.Has("size") {
		defMin = size - size/2
	}
	minSize, err := countArg(c, "min_size", min(defMin, size))
	if err != nil {
		return bad(err)
	}
	rule, err := ruleArg(s.m.Crush(), c.StrOr("rule", cmp.Or(s.opts.String(OptPoolDefaultCrushRule), DefaultRule)))
	if err != nil && !c.Has("rule") {
		err = fmt.Errorf("%w (the default of %s: name a rule, or config set it)", err, OptPoolDefaultCrushRule)
	}
	if err != nil {
		return nil, moncmd.Errorf(moncmd.ENOENT, "osd pool create: %v", err)
	}
	want := poolSettings{Size: int(size), MinSize: int(minSize), PGNum: uint32(pgNum), PGPNum: uint32(pgpNum), Rule: rule}
	if err := checkSettings(s.m.Crush(), want); err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "osd pool create: %v", err)
	}
	if p := s.m.PoolByName(name); p != nil {
		if (poolSettings{Size: p.Size, MinSize: p.MinSize, PGNum: p.PGNum, PGPNum: p.PGPNum, Rule: p.CrushRule}) == want {
			return nil, moncmd.Reply{Status: fmt.Sprintf("pool '%s' already exists", name)}
		}
		return nil, moncmd.Errorf(moncmd.EEXIST, "pool '%s' already exists with other settings", name)
	}
	what := fmt.Sprintf("pool '%s'", name)
	if r, ok := checkSure(c, want, what); !ok {
		return nil, r
	}
	mode, err := defaultAutoscaleMode(c.StrOr("autoscale_mode", ""), s.opts.String(OptPoolDefaultAutoscaleMode))
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "osd pool create: %v", err)
	}
	id := s.m.PoolMax() + 1
	np := osdmap.Pool{ID: id, Name: name, Type: osdmap.PoolReplicated, Size: want.Size, MinSize: want.MinSize,
		CrushRule: rule, PGNum: want.PGNum, PGPNum: want.PGPNum, Flags: osdmap.PoolHashPSPool, AutoscaleMode: mode}
	if r, ok := s.checkPGLimit(np, what); !ok {
		return nil, r
	}
	status := fmt.Sprintf("pool '%s' created", name)
	var warnings []string
	if bits.OnesCount32(want.PGNum) != 1 {
		warnings = append(warnings, fmt.Sprintf("warning: pg_num %d is not a power of two, so PGs will differ in size", want.PGNum))
	}
	if w := s.placementWarning(np); w != "" {
		warnings = append(warnings, w)
	}
	for _, w := range warnings {
		status += " (" + w + ")"
	}
	t := s.begin(now)
	t.inc.NewPoolMax = &id
	np.LastChange = t.inc.Epoch
	t.inc.NewPools = []osdmap.Pool{np}
	out := map[string]any{"pool": name, "pool_id": id}
	if len(warnings) > 0 {
		out["warnings"] = warnings
	}
	r := replyJSON(out, status+"\n")
	r.Status = status
	return t.propose(r)
}

// preparePoolSet handles "osd pool set pool var val
// [yes_i_really_mean_it]".
func (s *Service) preparePoolSet(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	name, err := c.Str("pool")
	if err != nil {
		return bad(err)
	}
	v, err := c.Str("var")
	if err != nil {
		return bad(err)
	}
	val, err := c.Str("val")
	if err != nil {
		return bad(err)
	}
	cur := s.m.PoolByName(name)
	if cur == nil {
		return nil, moncmd.Errorf(moncmd.ENOENT, "unrecognized pool '%s'", name)
	}
	p := *cur
	num := func() (int64, error) {
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n < 0 || n > 1<<31 {
			return 0, fmt.Errorf("%s: %q is not a count", v, val)
		}
		return n, nil
	}
	var n int64
	switch v {
	case "size":
		if n, err = num(); err == nil {
			p.Size = int(n)
			p.MinSize = min(p.MinSize, p.Size)
		}
	case "min_size":
		if n, err = num(); err == nil {
			p.MinSize = int(n)
		}
	case "pg_num", "pgp_num", "pgp_num_actual":
		// pgnum.go: pg_num grows (the OSDs split), pgp_num sets the
		// target the leader steps toward (pgstep.go).
		if n, err = num(); err == nil {
			if r := setPGCount(&p, v, n); r != nil {
				return nil, *r
			}
			curTarget, _ := cur.Targets()
			if target, _ := p.Targets(); v == "pg_num" && target < p.PGNum && target < curTarget {
				if why := s.poolUnclean(cur); why != "" {
					return nil, moncmd.Errorf(moncmd.EBUSY, "pool '%s': cannot merge PGs while %s; wait until "+
						"they are (cuttle pg ls %s) and set pg_num again", name, why, name)
				}
			}
		}
	case "pg_num_pending", "pg_num_actual":
		// pgmerge.go: the leader's merge steps.
		if n, err = num(); err == nil {
			if r := s.setMergeStep(&p, v, n, s.m.Epoch()+1); r != nil {
				return nil, *r
			}
		}
	case "crush_rule":
		p.CrushRule, err = ruleArg(s.m.Crush(), val)
	case "ack":
		if r, ok := setAck(c, &p, name, val); !ok {
			return nil, r
		}
	case "read_policy":
		if r, ok := setReadPolicy(&p, name, val); !ok {
			return nil, r
		}
	default:
		var ok bool
		if ok, err = setAutoscaleVar(&p, v, val); !ok {
			return nil, moncmd.Errorf(moncmd.EINVAL, "osd pool set: unknown variable %q (size, min_size, pg_num, pgp_num, "+
				"pgp_num_actual, crush_rule, ack, read_policy, %s; the monitors' own pg_num_pending, pg_num_actual)", v, strings.Join(autoscaleVars(), ", "))
		}
	}
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "osd pool set: %v", err)
	}
	want := poolSettings{Size: p.Size, MinSize: p.MinSize, PGNum: p.PGNum, PGPNum: p.PGPNum, Rule: p.CrushRule}
	if err := checkSettings(s.m.Crush(), want); err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "osd pool set: pool '%s': %v", name, err)
	}
	if p.Equal(cur) {
		return nil, moncmd.Reply{Status: fmt.Sprintf("pool '%s' %s is already %s", name, v, val)}
	}
	what := fmt.Sprintf("pool '%s'", name)
	if r, ok := checkSure(c, want, what); !ok {
		return nil, r
	}
	if p.Size > cur.Size || p.PGNum > cur.PGNum {
		if r, ok := s.checkPGLimit(p, what); !ok {
			return nil, r
		}
	}
	status := fmt.Sprintf("set pool %d %s to %s", p.ID, v, val) + pgCountStatus(*cur, p, v) + autoscaleSetStatus(*cur, p)
	if p.Size != cur.Size || p.CrushRule != cur.CrushRule {
		if w := s.placementWarning(p); w != "" {
			status += " (" + w + ")"
		}
	}
	t := s.begin(now)
	p.LastChange = t.inc.Epoch
	t.inc.NewPools = []osdmap.Pool{p}
	return t.propose(moncmd.Reply{Status: status})
}

// preparePoolRename handles "osd pool rename srcpool destpool".
func (s *Service) preparePoolRename(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	src, err := c.Str("srcpool")
	if err != nil {
		return bad(err)
	}
	dst, err := c.Str("destpool")
	if err != nil {
		return bad(err)
	}
	if len(dst) > osdmap.MaxNameLen {
		return nil, moncmd.Errorf(moncmd.EINVAL, "osd pool rename: pool name longer than %d bytes", osdmap.MaxNameLen)
	}
	p := s.m.PoolByName(src)
	switch {
	case p == nil && s.m.PoolByName(dst) != nil:
		return nil, moncmd.Reply{Status: fmt.Sprintf("pool '%s' does not exist; pool '%s' already exists", src, dst)}
	case p == nil:
		return nil, moncmd.Errorf(moncmd.ENOENT, "unrecognized pool '%s'", src)
	case s.m.PoolByName(dst) != nil:
		return nil, moncmd.Errorf(moncmd.EEXIST, "pool '%s' already exists", dst)
	}
	t := s.begin(now)
	np := *p
	np.Name, np.LastChange = dst, t.inc.Epoch
	t.inc.NewPools = []osdmap.Pool{np}
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("pool '%s' renamed to '%s'", src, dst)})
}

// preparePoolRm handles "osd pool rm pool pool2
// yes_i_really_really_mean_it", guarded as Ceph guards it.
func (s *Service) preparePoolRm(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	name, err := c.Str("pool")
	if err != nil {
		return bad(err)
	}
	p := s.m.PoolByName(name)
	if p == nil {
		return nil, moncmd.Reply{Status: fmt.Sprintf("pool '%s' does not exist", name)}
	}
	sure, err := c.Bool("yes_i_really_really_mean_it")
	if err != nil {
		return bad(err)
	}
	if c.StrOr("pool2", "") != name || !sure {
		return nil, moncmd.Errorf(moncmd.EPERM, "WARNING: this will *PERMANENTLY DESTROY* all data stored in pool %s.  "+
			"If you are *ABSOLUTELY CERTAIN* that is what you want, pass the pool name *twice*, "+
			"followed by --yes-i-really-really-mean-it.", name)
	}
	if !s.opts.Bool(OptAllowPoolDelete) {
		return nil, moncmd.Errorf(moncmd.EPERM, "pool deletion is disabled; you must first set the %s config option to true before you can destroy a pool", OptAllowPoolDelete)
	}
	if p.Flags&osdmap.PoolNoDelete != 0 {
		return nil, moncmd.Errorf(moncmd.EPERM, "pool '%s' has the nodelete flag set", name)
	}
	t := s.begin(now)
	t.inc.OldPools = []int64{p.ID}
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("pool '%s' removed", name)})
}
