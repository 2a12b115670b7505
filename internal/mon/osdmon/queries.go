package osdmon

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/osdmap"
)

// PoolView is a pool in JSON replies ("osd dump", "osd pool ls detail").
type PoolView struct {
	ID        int64  `json:"pool"`
	Name      string `json:"pool_name"`
	Type      string `json:"type"`
	Size      int    `json:"size"`
	MinSize   int    `json:"min_size"`
	CrushRule int32  `json:"crush_rule"`
	PGNum     uint32 `json:"pg_num"`
	PGPNum    uint32 `json:"pgp_num"`
	// PGNumTarget and PGPNumTarget are where pg_num and pgp_num are
	// headed (equal to them when nothing is pending).
	PGNumTarget  uint32 `json:"pg_num_target"`
	PGPNumTarget uint32 `json:"pgp_num_target"`
	Flags        string `json:"flags_names"`
	LastChange   uint32 `json:"last_change"`
	// AutoscaleMode and Options are the autoscaler's settings (Options
	// only those set, as Ceph's "options").
	AutoscaleMode string             `json:"pg_autoscale_mode"`
	Options       map[string]float64 `json:"options,omitempty"`
	// Ack is when the primary answers writes: "all" or "primary".
	Ack string `json:"ack"`
	// ReadPolicy is where clients send reads: "primary", "balance" or
	// "score".
	ReadPolicy string `json:"read_policy"`
}

// OSDView is an OSD in "osd dump".
type OSDView struct {
	OSD             int32     `json:"osd"`
	UUID            string    `json:"uuid"`
	Up              bool      `json:"up"`
	In              bool      `json:"in"`
	Weight          float64   `json:"weight"`
	PrimaryAffinity float64   `json:"primary_affinity"`
	Addr            string    `json:"addr"`
	UpFrom          uint32    `json:"up_from"`
	DownAt          uint32    `json:"down_at"`
	DownSince       time.Time `json:"down_since,omitzero"`
	State           []string  `json:"state"`
	// Load is the OSD's published load, if any (docs/OSD.md, "Reading
	// from replicas").
	Load *LoadView `json:"load,omitempty"`
}

// LoadView is an OSD's published load, in percent.
type LoadView struct {
	Disk   uint8 `json:"disk"`
	CPU    uint8 `json:"cpu"`
	Memory uint8 `json:"memory"`
}

// DumpView is "osd dump".
type DumpView struct {
	Epoch    uint32    `json:"epoch"`
	FSID     string    `json:"fsid"`
	Created  time.Time `json:"created"`
	Modified time.Time `json:"modified"`
	Flags    string    `json:"flags"`
	// The fullness ratios, as Ceph's "osd dump" shows them.
	FullRatio         float32    `json:"full_ratio"`
	BackfillFullRatio float32    `json:"backfillfull_ratio"`
	NearFullRatio     float32    `json:"nearfull_ratio"`
	MaxOSD            int32      `json:"max_osd"`
	Pools             []PoolView `json:"pools"`
	OSDs              []OSDView  `json:"osds"`
	// The upmap exception tables, by PG (Ceph's names).
	PGUpmap      []PGUpmapView      `json:"pg_upmap"`
	PGUpmapItems []PGUpmapItemsView `json:"pg_upmap_items"`
}

// PGUpmapView is a pg_upmap entry in "osd dump".
type PGUpmapView struct {
	PG   string  `json:"pgid"`
	OSDs []int32 `json:"osds"`
}

// PGUpmapItemsView is a pg_upmap_items entry in "osd dump".
type PGUpmapItemsView struct {
	PG       string          `json:"pgid"`
	Mappings []UpmapPairView `json:"mappings"`
}

// UpmapPairView is one pair of a pg_upmap_items entry.
type UpmapPairView struct {
	From int32 `json:"from"`
	To   int32 `json:"to"`
}

func poolView(p *osdmap.Pool) PoolView {
	pgNum, pgpNum := p.Targets()
	return PoolView{PGNumTarget: pgNum, PGPNumTarget: pgpNum, ID: p.ID, Name: p.Name, Type: p.Type.String(), Size: p.Size, MinSize: p.MinSize, CrushRule: p.CrushRule,
		PGNum: p.PGNum, PGPNum: p.PGPNum, Flags: p.Flags.String(), LastChange: uint32(p.LastChange),
		AutoscaleMode: p.AutoscaleMode.String(), Options: poolOptions(p), Ack: p.Ack.String(),
		ReadPolicy: p.ReadPolicy.String()}
}

// poolOptions returns the autoscaler's numeric settings that p sets.
func poolOptions(p *osdmap.Pool) map[string]float64 {
	out := map[string]float64{}
	if p.TargetSizeBytes != 0 {
		out["target_size_bytes"] = float64(p.TargetSizeBytes)
	}
	if p.TargetSizeRatio != 0 {
		out["target_size_ratio"] = p.TargetSizeRatio
	}
	if p.AutoscaleBias != 0 {
		out["pg_autoscale_bias"] = p.AutoscaleBias
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// mapAt returns the applied map, or the map at the epoch argument.
func (s *Service) mapAt(c moncmd.Command) (*osdmap.Map, *moncmd.Reply) {
	if !c.Has("epoch") {
		return s.m, nil
	}
	e, err := c.Int("epoch")
	if err != nil || e < 1 || e > int64(s.m.Epoch()) {
		r := moncmd.Errorf(moncmd.ENOENT, "%s: no epoch %q (the map is at %d)", c.Prefix, c.StrOr("epoch", ""), s.m.Epoch())
		return nil, &r
	}
	if osdmap.Epoch(e) == s.m.Epoch() {
		return s.m, nil
	}
	full, err := s.st.Full(ServiceName, uint64(e))
	if errors.Is(err, monstore.ErrNotFound) {
		r := moncmd.Errorf(moncmd.ENOENT, "%s: epoch %d was trimmed", c.Prefix, e)
		return nil, &r
	}
	var m *osdmap.Map
	if err == nil {
		m, err = osdmap.UnmarshalMap(full)
	}
	if err != nil {
		r := moncmd.Errorf(moncmd.EINVAL, "%s: epoch %d: %v", c.Prefix, e, err)
		return nil, &r
	}
	return m, nil
}

// queryDump answers "osd dump [epoch]".
func (s *Service) queryDump(c moncmd.Command) moncmd.Reply {
	m, bad := s.mapAt(c)
	if bad != nil {
		return *bad
	}
	v := DumpView{Epoch: uint32(m.Epoch()), FSID: m.FSID().String(), Created: m.Created(), Modified: m.Modified(),
		Flags: m.Flags().String(), MaxOSD: m.MaxOSD(), Pools: []PoolView{}, OSDs: []OSDView{},
		FullRatio: m.Ratios().Full, BackfillFullRatio: m.Ratios().BackfillFull, NearFullRatio: m.Ratios().NearFull}
	var b strings.Builder
	fmt.Fprintf(&b, "epoch %d\nfsid %s\ncreated %s\nmodified %s\nflags %s\n", v.Epoch, v.FSID,
		v.Created.Format(time.RFC3339Nano), v.Modified.Format(time.RFC3339Nano), v.Flags)
	fmt.Fprintf(&b, "full_ratio %s\nbackfillfull_ratio %s\nnearfull_ratio %s\n\n", osdmap.FormatRatio(v.FullRatio),
		osdmap.FormatRatio(v.BackfillFullRatio), osdmap.FormatRatio(v.NearFullRatio))
	for _, p := range m.Pools() {
		v.Pools = append(v.Pools, poolView(&p))
		fmt.Fprintf(&b, "%s\n", &p)
	}
	fmt.Fprintf(&b, "\nmax_osd %d\n", v.MaxOSD)
	for id := range m.MaxOSD() {
		o := m.OSD(id)
		if !o.Exists() {
			continue
		}
		meta := s.meta[id]
		if m != s.m {
			meta.DownSince = time.Time{} // of the current epoch only
		}
		ov := OSDView{OSD: id, UUID: meta.UUID, Up: o.IsUp(), In: o.IsIn(), Weight: toFloat(o.Weight),
			PrimaryAffinity: toFloat(o.PrimaryAffinity), Addr: o.Addr, UpFrom: uint32(o.UpFrom), DownAt: uint32(o.DownAt),
			DownSince: meta.DownSince, State: strings.Split(o.State.String(), ",")}
		if o.Load != (osdmap.Load{}) {
			ov.Load = &LoadView{Disk: o.Load.Disk, CPU: o.Load.CPU, Memory: o.Load.Memory}
		}
		v.OSDs = append(v.OSDs, ov)
		up, in := "down", "out"
		if ov.Up {
			up = "up  "
		}
		if ov.In {
			in = "in "
		}
		addr := o.Addr
		if addr == "" {
			addr = "-"
		}
		fmt.Fprintf(&b, "osd.%d %s %s weight %s up_from %d down_at %d %s %s", id, up, in,
			strconv.FormatFloat(ov.Weight, 'g', 6, 64), ov.UpFrom, ov.DownAt, addr, o.State)
		if meta.UUID != "" {
			fmt.Fprintf(&b, " %s", meta.UUID)
		}
		if ov.Load != nil {
			fmt.Fprintf(&b, " load %s", o.Load)
		}
		b.WriteByte('\n')
	}
	dumpUpmaps(m, &v, &b)
	return replyJSON(v, b.String())
}

// dumpUpmaps adds the upmap tables to "osd dump", as Ceph prints them:
// "pg_upmap 1.7 [1,2,3]" and "pg_upmap_items 1.7 [1,4,2,5]".
func dumpUpmaps(m *osdmap.Map, v *DumpView, b *strings.Builder) {
	v.PGUpmap, v.PGUpmapItems = []PGUpmapView{}, []PGUpmapItemsView{}
	sp := m.Spec()
	if len(sp.PGUpmap)+len(sp.PGUpmapItems) > 0 {
		b.WriteByte('\n')
	}
	for _, pg := range slices.SortedFunc(maps.Keys(sp.PGUpmap), osdmap.ComparePG) {
		v.PGUpmap = append(v.PGUpmap, PGUpmapView{PG: pg.String(), OSDs: sp.PGUpmap[pg]})
		fmt.Fprintf(b, "pg_upmap %s %s\n", pg, osdmap.FormatOSDs(sp.PGUpmap[pg]))
	}
	for _, pg := range slices.SortedFunc(maps.Keys(sp.PGUpmapItems), osdmap.ComparePG) {
		items := sp.PGUpmapItems[pg]
		e := PGUpmapItemsView{PG: pg.String(), Mappings: make([]UpmapPairView, 0, len(items))}
		for _, it := range items {
			e.Mappings = append(e.Mappings, UpmapPairView{From: it.From, To: it.To})
		}
		v.PGUpmapItems = append(v.PGUpmapItems, e)
		fmt.Fprintf(b, "pg_upmap_items %s %s\n", pg, formatItems(items))
	}
}

// StatView is "osd stat".
type StatView struct {
	Epoch  uint32 `json:"epoch"`
	NumOSD int    `json:"num_osds"`
	NumUp  int    `json:"num_up_osds"`
	NumIn  int    `json:"num_in_osds"`
	Flags  string `json:"flags"`
}

// queryStat answers "osd stat": "3 osds: 2 up, 3 in; epoch: e12".
func (s *Service) queryStat(moncmd.Command) moncmd.Reply {
	exist, up, in := s.m.NumOSDs()
	v := StatView{Epoch: uint32(s.m.Epoch()), NumOSD: exist, NumUp: up, NumIn: in, Flags: s.m.Flags().String()}
	text := fmt.Sprintf("%d osds: %d up, %d in; epoch: e%d\n", exist, up, in, v.Epoch)
	if s.m.Flags() != 0 {
		text += "flags " + v.Flags + "\n"
	}
	return replyJSON(v, text)
}

// queryLs answers "osd ls": the ids of existing OSDs.
func (s *Service) queryLs(moncmd.Command) moncmd.Reply {
	ids := []int32{}
	var b strings.Builder
	for id := range s.m.MaxOSD() {
		if s.m.Exists(id) {
			ids = append(ids, id)
			fmt.Fprintf(&b, "%d\n", id)
		}
	}
	return replyJSON(ids, b.String())
}

// queryGetmap answers "osd getmap [epoch]": Data is the full map in
// osdmap's MarshalBinary form (not JSON).
func (s *Service) queryGetmap(c moncmd.Command) moncmd.Reply {
	m, bad := s.mapAt(c)
	if bad != nil {
		return *bad
	}
	data, err := m.MarshalBinary()
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "osd getmap: %v", err)
	}
	return moncmd.Reply{Status: fmt.Sprintf("got osdmap epoch %d", m.Epoch()), Data: data,
		Text: fmt.Sprintf("got osdmap epoch %d (%d bytes)\n", m.Epoch(), len(data))}
}

// FindView is "osd find".
type FindView struct {
	OSD           int32             `json:"osd"`
	UUID          string            `json:"uuid,omitempty"`
	Addr          string            `json:"addr"`
	Host          string            `json:"host,omitempty"`
	CrushLocation map[string]string `json:"crush_location"`
}

// queryFind answers "osd find id".
func (s *Service) queryFind(c moncmd.Command) moncmd.Reply {
	id, err := osdID(c, "id")
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL)
	}
	if !s.m.Exists(id) {
		return moncmd.Errorf(moncmd.ENOENT, "osd.%d does not exist", id)
	}
	loc := location(s.m.Crush(), id)
	v := FindView{OSD: id, UUID: s.meta[id].UUID, Addr: s.m.OSD(id).Addr, CrushLocation: map[string]string{}}
	for _, l := range loc {
		v.CrushLocation[l.Type] = l.Name
		if l.Type == "host" {
			v.Host = l.Name
		}
	}
	addr := v.Addr
	if addr == "" {
		addr = "-"
	}
	return replyJSON(v, fmt.Sprintf("osd.%d at %s (%s)\n", id, addr, locString(loc)))
}

// queryPoolLs answers "osd pool ls [detail=true|detail]".
func (s *Service) queryPoolLs(c moncmd.Command) moncmd.Reply {
	// "detail=detail" is how Ceph's CLI spells the optional word.
	detail := c.StrOr("detail", "") == "detail"
	if !detail {
		var err error
		if detail, err = c.Bool("detail"); err != nil {
			return moncmd.FromError(err, moncmd.EINVAL)
		}
	}
	var b strings.Builder
	names, views := []string{}, []PoolView{}
	for _, p := range s.m.Pools() {
		names = append(names, p.Name)
		views = append(views, poolView(&p))
		if detail {
			fmt.Fprintf(&b, "%s\n", &p)
		} else {
			fmt.Fprintf(&b, "%s\n", p.Name)
		}
	}
	if detail {
		return replyJSON(views, b.String())
	}
	return replyJSON(names, b.String())
}

// poolVars are the variables "osd pool get" reads, in "all" order.
func poolVars() []string {
	return append([]string{"size", "min_size", "pg_num", "pgp_num", "pg_num_target", "pgp_num_target", "pg_num_pending",
		"merge_status", "crush_rule"}, append(autoscaleVars(), "ack", "read_policy")...)
}

// queryPoolGet answers "osd pool get pool var" (var: a poolVars name or
// "all").
func (s *Service) queryPoolGet(c moncmd.Command) moncmd.Reply {
	name, err := c.Str("pool")
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL)
	}
	v, err := c.Str("var")
	if err != nil {
		return moncmd.FromError(err, moncmd.EINVAL)
	}
	p := s.m.PoolByName(name)
	if p == nil {
		return moncmd.Errorf(moncmd.ENOENT, "unrecognized pool '%s'", name)
	}
	vars := []string{v}
	if v == "all" {
		vars = poolVars()
	}
	out := map[string]any{"pool": p.Name, "pool_id": p.ID}
	var b strings.Builder
	for _, name := range vars {
		var val any
		switch name {
		case "size":
			val = p.Size
		case "min_size":
			val = p.MinSize
		case "pg_num":
			val = p.PGNum
		case "pgp_num":
			val = p.PGPNum
		case "pg_num_target":
			val, _ = p.Targets()
		case "pgp_num_target":
			_, val = p.Targets()
		case "pg_num_pending":
			val = p.PGNumPending
		case "merge_status":
			val = s.mergeStatus(p)
		case "ack":
			val = p.Ack.String()
		case "read_policy":
			val = p.ReadPolicy.String()
		case "crush_rule":
			if r := s.m.Crush().Rule(p.CrushRule); r != nil {
				val = r.Name
			} else {
				val = strconv.Itoa(int(p.CrushRule))
			}
		default:
			var ok bool
			if val, ok = autoscaleVar(p, name); !ok {
				return moncmd.Errorf(moncmd.EINVAL, "osd pool get: unknown variable %q (%s, all)", name, strings.Join(poolVars(), ", "))
			}
		}
		out[name] = val
		fmt.Fprintf(&b, "%s: %v\n", name, val)
	}
	return replyJSON(out, b.String())
}

// RuleView is a rule in "osd crush rule dump".
type RuleView struct {
	ID    int32      `json:"rule_id"`
	Name  string     `json:"rule_name"`
	Type  string     `json:"type"`
	Steps []StepView `json:"steps"`
}

// StepView is one rule step, named as Ceph's rule dump names them.
type StepView struct {
	Op       string `json:"op"`
	Item     *int32 `json:"item,omitempty"`
	ItemName string `json:"item_name,omitempty"`
	Num      *int32 `json:"num,omitempty"`
	Type     string `json:"type,omitempty"`
}

func ruleView(cm *crush.Map, r *crush.Rule) (RuleView, string) {
	v := RuleView{ID: r.ID, Name: r.Name, Type: r.Type.String(), Steps: []StepView{}}
	text := fmt.Sprintf("rule %s {\n\tid %d\n\ttype %s\n", r.Name, r.ID, r.Type)
	for _, st := range r.Steps {
		sv := StepView{Op: st.Op.String()}
		switch {
		case st.Op == crush.OpTake:
			item := st.Arg1
			sv.Item, sv.ItemName = &item, cm.ItemName(item)
			text += "\tstep take " + sv.ItemName + "\n"
		case st.Op.IsChoose():
			num := st.Arg1
			sv.Num, sv.Type = &num, cm.TypeName(st.Arg2)
			text += fmt.Sprintf("\tstep %s %d type %s\n", st.Op, num, sv.Type)
		case st.Op == crush.OpEmit:
			text += "\tstep emit\n"
		default:
			num := st.Arg1
			sv.Num = &num
			text += fmt.Sprintf("\tstep %s %d\n", st.Op, num)
		}
		v.Steps = append(v.Steps, sv)
	}
	return v, text + "}\n"
}

// queryRuleLs answers "osd crush rule ls".
func (s *Service) queryRuleLs(moncmd.Command) moncmd.Reply {
	names := []string{}
	var b strings.Builder
	for _, r := range s.m.Crush().Rules() {
		names = append(names, r.Name)
		b.WriteString(r.Name + "\n")
	}
	return replyJSON(names, b.String())
}

// queryRuleDump answers "osd crush rule dump [name]".
func (s *Service) queryRuleDump(c moncmd.Command) moncmd.Reply {
	cm := s.m.Crush()
	if c.Has("name") {
		name := c.StrOr("name", "")
		r := cm.RuleByName(name)
		if r == nil {
			return moncmd.Errorf(moncmd.ENOENT, "unknown crush rule '%s'", name)
		}
		v, text := ruleView(cm, r)
		return replyJSON(v, text)
	}
	views := []RuleView{}
	var b strings.Builder
	for _, r := range cm.Rules() {
		v, text := ruleView(cm, r)
		views = append(views, v)
		b.WriteString(text)
	}
	return replyJSON(views, b.String())
}
