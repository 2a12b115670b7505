package osdmon

import (
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/crush"
)

// Edits of a CRUSH Spec for the crush commands and boot. A Spec holds no
// shadow buckets; buildCrush makes every bucket's weight in its parent
// the sum of its items again and builds the map, which validates it.

func deviceName(id int32) string { return fmt.Sprintf("osd.%d", id) }

// bucketIndex returns the index of the bucket called name, or -1.
func bucketIndex(sp *crush.Spec, name string) int {
	return slices.IndexFunc(sp.Buckets, func(b crush.Bucket) bool { return b.Name == name })
}

// bucketByID returns the index of bucket id, or -1.
func bucketByID(sp *crush.Spec, id int32) int {
	return slices.IndexFunc(sp.Buckets, func(b crush.Bucket) bool { return b.ID == id })
}

// deviceIndex returns the index of device id, or -1.
func deviceIndex(sp *crush.Spec, id int32) int {
	return slices.IndexFunc(sp.Devices, func(d crush.Device) bool { return d.ID == id })
}

// typeID returns the id of the type called name.
func typeID(sp *crush.Spec, name string) (int32, bool) {
	i := slices.IndexFunc(sp.Types, func(t crush.BucketType) bool { return t.Name == name })
	if i < 0 {
		return 0, false
	}
	return sp.Types[i].ID, true
}

// parentsOf returns the indexes of the buckets holding item.
func parentsOf(sp *crush.Spec, item int32) []int {
	var out []int
	for i, b := range sp.Buckets {
		if slices.Contains(b.Items, item) {
			out = append(out, i)
		}
	}
	return out
}

// link adds item to the bucket at index parent with weight.
func link(sp *crush.Spec, parent int, item int32, weight uint32) {
	b := &sp.Buckets[parent]
	b.Items = append(b.Items, item)
	b.Weights = append(b.Weights, weight)
}

// unlink removes item from every bucket and returns its weight in the
// last one it was in (0 if none).
func unlink(sp *crush.Spec, item int32) (weight uint32) {
	for i := range sp.Buckets {
		b := &sp.Buckets[i]
		if j := slices.Index(b.Items, item); j >= 0 {
			weight = b.Weights[j]
			b.Items = slices.Delete(b.Items, j, j+1)
			b.Weights = slices.Delete(b.Weights, j, j+1)
		}
	}
	return weight
}

// addBucket adds an empty straw2 bucket with the lowest free id: not a
// bucket of sp or cur (shadow buckets included), nor a reserved shadow id.
func addBucket(sp *crush.Spec, cur *crush.Map, name string, typ int32) int {
	used := map[int32]bool{}
	for _, b := range sp.Buckets {
		used[b.ID] = true
		for _, id := range b.ClassIDs {
			used[id] = true
		}
	}
	for _, b := range cur.Buckets() {
		used[b.ID] = true
	}
	id := int32(-1)
	for used[id] {
		id--
	}
	sp.Buckets = append(sp.Buckets, crush.Bucket{ID: id, Name: name, Type: typ, Alg: crush.AlgStraw2, Hash: crush.HashRjenkins1})
	return len(sp.Buckets) - 1
}

// ensureDevice adds device id if the Spec lacks it and returns its index.
func ensureDevice(sp *crush.Spec, id int32) int {
	if i := deviceIndex(sp, id); i >= 0 {
		return i
	}
	sp.Devices = append(sp.Devices, crush.Device{ID: id, Name: deviceName(id)})
	slices.SortFunc(sp.Devices, func(a, b crush.Device) int { return int(a.ID) - int(b.ID) })
	return deviceIndex(sp, id)
}

// takesBucket returns the first rule that takes bucket id.
func takesBucket(sp *crush.Spec, id int32) (string, bool) {
	for _, r := range sp.Rules {
		for _, st := range r.Steps {
			if st.Op == crush.OpTake && st.Arg1 == id {
				return r.Name, true
			}
		}
	}
	return "", false
}

// fixWeights sets the weight of every bucket item to the bucket's total,
// as Ceph adjusts ancestors when an item's weight changes.
func fixWeights(sp *crush.Spec) {
	index := make(map[int32]int, len(sp.Buckets))
	for i, b := range sp.Buckets {
		index[b.ID] = i
	}
	total := make(map[int32]uint64, len(sp.Buckets))
	visiting := map[int32]bool{}
	var sum func(id int32) uint64
	sum = func(id int32) uint64 {
		if t, ok := total[id]; ok {
			return t
		}
		i, ok := index[id]
		if !ok || visiting[id] { // a loop: crush.New reports it
			return 0
		}
		visiting[id] = true
		b := &sp.Buckets[i]
		var t uint64
		for j, item := range b.Items {
			if item < 0 {
				b.Weights[j] = uint32(min(sum(item), 0xffffffff))
			}
			t += uint64(b.Weights[j])
		}
		visiting[id] = false
		total[id] = t
		return t
	}
	for _, b := range sp.Buckets {
		sum(b.ID)
	}
}

// buildCrush fixes the weights and builds the map.
func buildCrush(sp crush.Spec) (*crush.Map, error) {
	fixWeights(&sp)
	return crush.New(sp)
}

// location returns an item's ancestors by type name, nearest first
// (following the first parent at each level), as "host": "h1",
// "root": "default".
func location(cm *crush.Map, item int32) []locLevel {
	parent := map[int32]int32{}
	for _, b := range cm.Buckets() {
		if b.IsShadow() {
			continue
		}
		for _, it := range b.Items {
			if _, ok := parent[it]; !ok {
				parent[it] = b.ID
			}
		}
	}
	var out []locLevel
	seen := map[int32]bool{}
	for id, ok := parent[item]; ok && !seen[id]; id, ok = parent[id] {
		seen[id] = true
		b := cm.Bucket(id)
		out = append(out, locLevel{Type: cm.TypeName(b.Type), Name: b.Name})
	}
	return out
}

// locLevel is one ancestor of an item.
type locLevel struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// locString formats a location as Ceph does: "root=default,host=h1".
func locString(loc []locLevel) string {
	s := ""
	for i := len(loc) - 1; i >= 0; i-- {
		if s != "" {
			s += ","
		}
		s += loc[i].Type + "=" + loc[i].Name
	}
	return s
}
