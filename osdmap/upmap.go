package osdmap

import "github.com/cuttlestore/cuttle/crush"

// applyUpmap returns raw with pg's explicit mappings applied, written to
// out (Ceph's _apply_upmap):
//
//   - pg_upmap replaces the whole list, unless one of its OSDs is marked
//     out (weight 0), in which case it is ignored;
//   - then each pg_upmap_items pair (from, to) replaces the first from by
//     to, unless to is already in the list or is marked out.
//
// As in Ceph, items apply one after another to the list so far, so a
// pair of swaps such as [1->2, 2->1] does not exchange two OSDs.
func (m *Map) applyUpmap(pg PG, raw, out []int32) []int32 {
	out = append(out, raw...)
	if osds, ok := m.pgUpmap[pg]; ok && !m.anyMarkedOut(osds) {
		out = append(out[:0], osds...)
	}
	for _, it := range m.pgUpmapItems[pg] {
		exists, pos := false, -1
		for i, o := range out {
			if o == it.To {
				exists = true
				break
			}
			if o == it.From && pos < 0 && !m.markedOut(it.To) {
				pos = i
			}
		}
		if !exists && pos >= 0 {
			out[pos] = it.To
		}
	}
	return out
}

// markedOut reports whether osd is a valid id with weight 0; Ceph ignores
// upmap targets that are.
func (m *Map) markedOut(osd int32) bool {
	return osd != crush.ItemNone && osd >= 0 && int(osd) < len(m.weights) && m.weights[osd] == 0
}

func (m *Map) anyMarkedOut(osds []int32) bool {
	for _, o := range osds {
		if m.markedOut(o) {
			return true
		}
	}
	return false
}
