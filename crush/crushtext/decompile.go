package crushtext

import (
	"slices"
	"strconv"

	"github.com/cuttlestore/cuttle/crush"
)

// Decompile prints m exactly as Ceph's "crushtool -d" prints it (Ceph 16,
// CrushCompiler::decompile): tunables that differ from the legacy ones,
// devices, types, buckets with every bucket's children before it, rules and
// choose_args. Shadow (device-class) buckets are not printed; their ids
// appear as "id -N class C" lines and a take of one prints as
// "step take B class C".
//
// The output compiles back to the same map: Compile(Decompile(m)) is
// equivalent to m, and printing that again gives the same bytes.
func Decompile(m *crush.Map) []byte {
	d := &decompiler{m: m, buf: make([]byte, 0, 4096)}
	d.str("# begin crush map\n")
	d.tunables()
	d.devices()
	d.types()
	d.buckets()
	d.rules()
	d.chooseArgs()
	d.str("\n# end crush map\n")
	return d.buf
}

// decompiler appends the text to buf.
type decompiler struct {
	m   *crush.Map
	buf []byte
}

func (d *decompiler) str(s string) { d.buf = append(d.buf, s...) }

func (d *decompiler) int(v int64) { d.buf = strconv.AppendInt(d.buf, v, 10) }

func (d *decompiler) weight(w uint32) { d.buf = appendWeight(d.buf, w) }

// tunables prints the tunables that differ from the legacy profile, which
// is what a map without tunable lines gets.
func (d *decompiler) tunables() {
	t, legacy := d.m.Tunables(), crush.LegacyTunables()
	fields := []struct {
		name      string
		val, base uint32
	}{
		{"choose_local_tries", t.ChooseLocalTries, legacy.ChooseLocalTries},
		{"choose_local_fallback_tries", t.ChooseLocalFallbackTries, legacy.ChooseLocalFallbackTries},
		{"choose_total_tries", t.ChooseTotalTries, legacy.ChooseTotalTries},
		{"chooseleaf_descend_once", t.ChooseleafDescendOnce, legacy.ChooseleafDescendOnce},
		{"chooseleaf_vary_r", t.ChooseleafVaryR, legacy.ChooseleafVaryR},
		{"chooseleaf_stable", t.ChooseleafStable, legacy.ChooseleafStable},
		{"straw_calc_version", t.StrawCalcVersion, legacy.StrawCalcVersion},
		{"allowed_bucket_algs", t.AllowedBucketAlgs, legacy.AllowedBucketAlgs},
	}
	for _, f := range fields {
		if f.val != f.base {
			d.str("tunable " + f.name + " ")
			d.int(int64(f.val))
			d.str("\n")
		}
	}
}

func (d *decompiler) devices() {
	d.str("\n# devices\n")
	for _, dev := range d.m.Devices() {
		d.str("device ")
		d.int(int64(dev.ID))
		d.str(" " + dev.Name)
		if dev.Class != "" {
			d.str(" class " + dev.Class)
		}
		d.str("\n")
	}
}

// types prints the bucket types. Ceph prints "type 0 osd" when type 0 is
// missing; we skip that when another type is already called osd, since the
// text would not compile back.
func (d *decompiler) types() {
	d.str("\n# types\n")
	types := d.m.Types()
	if len(types) > 0 && types[0].ID != 0 {
		if _, taken := d.m.TypeID("osd"); !taken {
			d.str("type 0 osd\n")
		}
	}
	for _, t := range types {
		d.str("type ")
		d.int(int64(t.ID))
		d.str(" " + t.Name + "\n")
	}
}

// typeName is Ceph's print_type_name.
func (d *decompiler) typeName(id int32) string {
	if name := d.m.TypeName(id); name != "" {
		return name
	}
	if id == 0 {
		return "device"
	}
	return "type" + strconv.Itoa(int(id))
}

// itemName is Ceph's print_item_name.
func (d *decompiler) itemName(id int32) string {
	switch {
	case d.m.ItemExists(id):
		return d.m.ItemName(id)
	case id >= 0:
		return "device" + strconv.Itoa(int(id))
	}
	return "bucket" + strconv.Itoa(int(-1-id))
}

func (d *decompiler) rules() {
	d.str("\n# rules\n")
	for _, r := range d.m.Rules() {
		d.rule(r)
	}
}

func (d *decompiler) rule(r *crush.Rule) {
	d.str("rule " + r.Name + " {\n\tid ")
	d.int(int64(r.ID))
	d.str("\n\ttype ")
	switch r.Type {
	case crush.RuleReplicated:
		d.str("replicated")
	case crush.RuleErasure:
		d.str("erasure")
	default:
		d.int(int64(r.Type))
	}
	d.str("\n\tmin_size ")
	d.int(int64(r.MinSize))
	d.str("\n\tmax_size ")
	d.int(int64(r.MaxSize))
	d.str("\n")
	for _, s := range r.Steps {
		d.step(s)
	}
	d.str("}\n")
}

func (d *decompiler) step(s crush.Step) {
	switch s.Op {
	case crush.OpNoop:
		d.str("\tstep noop\n")
	case crush.OpTake:
		d.str("\tstep take ")
		d.take(s.Arg1)
		d.str("\n")
	case crush.OpEmit:
		d.str("\tstep emit\n")
	case crush.OpChooseFirstN, crush.OpChooseIndep, crush.OpChooseLeafFirstN, crush.OpChooseLeafIndep:
		d.choose(s)
	default:
		if !isSetOp(s.Op) {
			return // Ceph prints nothing for an unknown op
		}
		d.str("\tstep " + s.Op.String() + " ")
		d.int(int64(s.Arg1))
		d.str("\n")
	}
}

func isSetOp(op crush.Op) bool {
	_, ok := setStepOp(op.String())
	return ok
}

// take prints a take step's item; a shadow bucket prints as its original
// and class (Ceph's split_id_class).
func (d *decompiler) take(id int32) {
	if b := d.m.Bucket(id); b != nil && b.IsShadow() {
		d.str(d.itemName(b.ShadowOf) + " class " + b.Class)
		return
	}
	d.str(d.itemName(id))
}

func (d *decompiler) choose(s crush.Step) {
	d.str("\tstep ")
	switch s.Op {
	case crush.OpChooseFirstN:
		d.str("choose firstn ")
	case crush.OpChooseIndep:
		d.str("choose indep ")
	case crush.OpChooseLeafFirstN:
		d.str("chooseleaf firstn ")
	case crush.OpChooseLeafIndep:
		d.str("chooseleaf indep ")
	}
	d.int(int64(s.Arg1))
	d.str(" type " + d.typeName(s.Arg2) + "\n")
}

// chooseArgs prints the weight sets by index, sorted as unsigned 64-bit
// numbers, and within a set by bucket id -1, -2, ...
func (d *decompiler) chooseArgs() {
	indexes := d.m.ChooseArgIndexes()
	if len(indexes) == 0 {
		return
	}
	d.str("\n# choose_args\n")
	for _, index := range indexes {
		d.str("choose_args ")
		d.buf = strconv.AppendUint(d.buf, uint64(index), 10)
		d.str(" {\n")
		for _, a := range d.m.ChooseArgs(index).Args() {
			d.chooseArg(a)
		}
		d.str("}\n")
	}
}

func (d *decompiler) chooseArg(a crush.ChooseArg) {
	if len(a.Weights) == 0 && len(a.IDs) == 0 {
		return
	}
	d.str("  {\n    bucket_id ")
	d.int(int64(a.BucketID))
	d.str("\n")
	if len(a.Weights) > 0 {
		d.str("    weight_set [\n")
		for _, ws := range a.Weights {
			d.str("      [ ")
			for _, w := range ws {
				d.weight(w)
				d.str(" ")
			}
			d.str("]\n")
		}
		d.str("    ]\n")
	}
	if len(a.IDs) > 0 {
		d.str("    ids [ ")
		for _, id := range a.IDs {
			d.int(int64(id))
			d.str(" ")
		}
		d.str("]\n")
	}
	d.str("  }\n")
}

// classOrder returns the classes of b's shadow ids in Ceph's class-id
// order: device classes in order of first use, then any others (classes
// no device has any more) by name.
func (d *decompiler) classOrder(b *crush.Bucket) []string {
	order := make([]string, 0, len(b.ClassIDs))
	for _, c := range d.m.Classes() {
		if _, ok := b.ClassIDs[c]; ok {
			order = append(order, c)
		}
	}
	if len(order) == len(b.ClassIDs) {
		return order
	}
	var rest []string
	for c := range b.ClassIDs {
		if !slices.Contains(order, c) {
			rest = append(rest, c)
		}
	}
	slices.Sort(rest)
	return append(order, rest...)
}
