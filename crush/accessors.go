package crush

import (
	"slices"
	"strconv"
)

// Tunables returns the map's tunables.
func (m *Map) Tunables() Tunables { return m.tunables }

// MaxDevices returns one more than the highest device id.
func (m *Map) MaxDevices() int32 { return int32(len(m.devices)) }

// MaxBuckets returns the number of bucket ids in use, counting holes: the
// lowest bucket id is -MaxBuckets().
func (m *Map) MaxBuckets() int32 { return int32(len(m.buckets)) }

// Devices returns the devices in id order.
func (m *Map) Devices() []Device {
	var out []Device
	for _, d := range m.devices {
		if d.Name != "" {
			out = append(out, d)
		}
	}
	return out
}

// Device returns device id.
func (m *Map) Device(id int32) (Device, bool) {
	if !m.DeviceExists(id) {
		return Device{}, false
	}
	return m.devices[id], true
}

// DeviceExists reports whether device id is defined.
func (m *Map) DeviceExists(id int32) bool {
	return id >= 0 && int(id) < len(m.devices) && m.devices[id].Name != ""
}

// Types returns the bucket types in id order.
func (m *Map) Types() []BucketType { return m.types }

// TypeName returns the name of bucket type id, or "" if there is none.
func (m *Map) TypeName(id int32) string { return m.typeName(id) }

// TypeID returns the id of the bucket type called name.
func (m *Map) TypeID(name string) (int32, bool) {
	id, ok := m.typeNames[name]
	return id, ok
}

// Bucket returns bucket id, or nil if there is none.
func (m *Map) Bucket(id int32) *Bucket {
	idx := -1 - int(id)
	if id >= 0 || idx >= len(m.buckets) {
		return nil
	}
	return m.buckets[idx]
}

// Buckets returns every bucket, shadow buckets included, in the order
// -1, -2, ...
func (m *Map) Buckets() []*Bucket {
	var out []*Bucket
	for _, b := range m.buckets {
		if b != nil {
			out = append(out, b)
		}
	}
	return out
}

// ItemExists reports whether id names a device or a bucket.
func (m *Map) ItemExists(id int32) bool {
	if id >= 0 {
		return m.DeviceExists(id)
	}
	return m.Bucket(id) != nil
}

// ItemName returns the name of a device or bucket; unnamed ids print as
// numbers.
func (m *Map) ItemName(id int32) string {
	if d, ok := m.Device(id); ok {
		return d.Name
	}
	if b := m.Bucket(id); b != nil {
		return b.Name
	}
	return strconv.Itoa(int(id))
}

// ItemID returns the id of the device or bucket called name.
func (m *Map) ItemID(name string) (int32, bool) {
	id, ok := m.names[name]
	return id, ok
}

// Classes returns the device classes in order of first use.
func (m *Map) Classes() []string { return m.classes }

// ShadowID returns the id of bucket id's shadow for class.
func (m *Map) ShadowID(id int32, class string) (int32, bool) {
	b := m.Bucket(id)
	if b == nil {
		return 0, false
	}
	s, ok := b.ClassIDs[class]
	return s, ok
}

// Roots returns the buckets that are no other bucket's item, shadow buckets
// excluded, in ascending id order (as Ceph's find_nonshadow_roots).
func (m *Map) Roots() []int32 {
	child := map[int32]bool{}
	for _, b := range m.buckets {
		if b != nil {
			for _, it := range b.Items {
				child[it] = true
			}
		}
	}
	var roots []int32
	for _, b := range m.buckets {
		if b != nil && !b.IsShadow() && !child[b.ID] {
			roots = append(roots, b.ID)
		}
	}
	slices.Sort(roots)
	return roots
}

// Rules returns the rules in id order.
func (m *Map) Rules() []*Rule {
	var out []*Rule
	for _, r := range m.rules {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

// Rule returns rule id, or nil if there is none.
func (m *Map) Rule(id int32) *Rule {
	if id < 0 || int(id) >= len(m.rules) {
		return nil
	}
	return m.rules[id]
}

// RuleByName returns the rule called name, or nil.
func (m *Map) RuleByName(name string) *Rule {
	for _, r := range m.rules {
		if r != nil && r.Name == name {
			return r
		}
	}
	return nil
}

// ChooseArgIndexes returns the indexes of the map's weight sets, sorted as
// unsigned numbers (the compat set, -1, last), as Ceph lists them.
func (m *Map) ChooseArgIndexes() []int64 {
	var out []int64
	for i := range m.chooseArgs {
		out = append(out, i)
	}
	slices.SortFunc(out, func(a, b int64) int {
		switch {
		case uint64(a) < uint64(b):
			return -1
		case uint64(a) > uint64(b):
			return 1
		}
		return 0
	})
	return out
}

// ChooseArgs returns the weight set with the given index, or nil.
func (m *Map) ChooseArgs(index int64) *ChooseArgs { return m.chooseArgs[index] }

// ChooseArgsFor returns the weight set a pool maps with: its own, else the
// compat set, else nil (Ceph's choose_args_get_with_fallback).
func (m *Map) ChooseArgsFor(index int64) *ChooseArgs {
	if ca := m.chooseArgs[index]; ca != nil {
		return ca
	}
	return m.chooseArgs[ChooseArgsCompat]
}
