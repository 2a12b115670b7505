package crush

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// ErrInvalidMap is wrapped by every error New returns for a bad Spec.
var ErrInvalidMap = errors.New("crush: invalid map")

// Map is a built, validated CRUSH map. It is read-only: methods that
// return slices or buckets return the map's own storage, which callers must
// not modify. A Map is safe for concurrent use.
type Map struct {
	tunables   Tunables
	devices    []Device // by id; Name == "" for an unused id
	types      []BucketType
	buckets    []*Bucket // by -1-id; nil for an unused id
	rules      []*Rule   // by id; nil for an unused id
	chooseArgs map[int64]*ChooseArgs
	classes    []string // device classes in order of first use (Ceph's class ids)
	names      map[string]int32
	typeNames  map[string]int32

	maxBucketSize int
}

// ChooseArgs is one weight set of a map (for one pool, or the compat set),
// ready for DoRule.
type ChooseArgs struct {
	index    int64
	byBucket []ChooseArg // by -1-bucket id; empty entries mean "no override"
}

// Index returns the weight set's index: a pool id or ChooseArgsCompat.
func (c *ChooseArgs) Index() int64 { return c.index }

// Args returns the overrides in Ceph's order (bucket -1, -2, ...).
func (c *ChooseArgs) Args() []ChooseArg {
	var out []ChooseArg
	for _, a := range c.byBucket {
		if a.IDs != nil || a.Weights != nil {
			out = append(out, a)
		}
	}
	return out
}

// New validates spec and builds the map: it derives each bucket's weight
// and algorithm state, builds the device-class shadow trees and resolves
// class-restricted take steps. New copies what it keeps of spec.
func New(spec Spec) (*Map, error) {
	m := &Map{tunables: spec.Tunables, names: map[string]int32{}, typeNames: map[string]int32{}}
	steps := []func(Spec) error{m.addTypes, m.addDevices, m.addBuckets, m.checkHierarchy, m.addShadowTrees, m.addRules, m.addChooseArgs}
	for _, step := range steps {
		if err := step(spec); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidMap, err)
		}
	}
	return m, nil
}

func (m *Map) addTypes(spec Spec) error {
	for _, t := range spec.Types {
		if t.Name == "" {
			return fmt.Errorf("type %d has no name", t.ID)
		}
		if t.ID < 0 {
			return fmt.Errorf("type %s has negative id %d", t.Name, t.ID)
		}
		if _, dup := m.typeNames[t.Name]; dup {
			return fmt.Errorf("type %s defined twice", t.Name)
		}
		if m.typeName(t.ID) != "" {
			return fmt.Errorf("type id %d defined twice", t.ID)
		}
		m.typeNames[t.Name] = t.ID
		m.types = append(m.types, t)
	}
	slices.SortFunc(m.types, func(a, b BucketType) int { return cmp.Compare(a.ID, b.ID) })
	return nil
}

// maxItems bounds ids and bucket sizes so that a hostile Spec (say, from a
// decoded message) cannot make New allocate without limit.
const maxItems = 1 << 20

func (m *Map) addDevices(spec Spec) error {
	for _, d := range spec.Devices {
		if d.ID < 0 || d.ID >= maxItems {
			return fmt.Errorf("device %q has id %d out of range", d.Name, d.ID)
		}
		if d.Name == "" {
			return fmt.Errorf("device %d has no name", d.ID)
		}
		if err := m.addName(d.Name, d.ID); err != nil {
			return err
		}
		for int(d.ID) >= len(m.devices) {
			m.devices = append(m.devices, Device{ID: int32(len(m.devices))})
		}
		m.devices[d.ID] = d
		if d.Class != "" && !slices.Contains(m.classes, d.Class) {
			m.classes = append(m.classes, d.Class)
		}
	}
	return nil
}

func (m *Map) addName(name string, id int32) error {
	if other, dup := m.names[name]; dup {
		return fmt.Errorf("name %q used by both %d and %d", name, other, id)
	}
	m.names[name] = id
	return nil
}

func (m *Map) addBuckets(spec Spec) error {
	for i := range spec.Buckets {
		b := cloneBucket(&spec.Buckets[i])
		if err := m.validateBucket(b); err != nil {
			return fmt.Errorf("bucket %s: %w", b.Name, err)
		}
		if err := m.addName(b.Name, b.ID); err != nil {
			return err
		}
		if err := m.insertBucket(b); err != nil {
			return err
		}
	}
	return nil
}

func cloneBucket(b *Bucket) *Bucket {
	c := &Bucket{ID: b.ID, Name: b.Name, Type: b.Type, Alg: b.Alg, Hash: b.Hash,
		Items: slices.Clone(b.Items), Weights: slices.Clone(b.Weights), ClassIDs: maps.Clone(b.ClassIDs)}
	return c
}

func (m *Map) validateBucket(b *Bucket) error {
	switch {
	case b.ID >= 0 || b.ID <= -maxItems:
		return fmt.Errorf("id %d out of range (must be negative)", b.ID)
	case b.Name == "":
		return fmt.Errorf("bucket %d has no name", b.ID)
	case !b.Alg.valid():
		return fmt.Errorf("unknown algorithm %d", b.Alg)
	case b.Hash != HashRjenkins1:
		return fmt.Errorf("unknown hash %d", b.Hash)
	case m.typeName(b.Type) == "":
		return fmt.Errorf("unknown type %d", b.Type)
	case len(b.Items) != len(b.Weights):
		return fmt.Errorf("%d items but %d weights", len(b.Items), len(b.Weights))
	case len(b.Items) > maxItems:
		return fmt.Errorf("too many items (%d)", len(b.Items))
	}
	if _, _, shadow := splitShadowName(b.Name); shadow {
		return fmt.Errorf("name contains '~', which is reserved for device-class shadow buckets")
	}
	for class, id := range b.ClassIDs {
		if id >= 0 || id <= -maxItems {
			return fmt.Errorf("class %s shadow id %d out of range", class, id)
		}
	}
	var sum uint64
	for i, w := range b.Weights {
		sum += uint64(w)
		if b.Alg == AlgUniform && w != b.Weights[0] {
			return fmt.Errorf("uniform bucket with unequal weights (item %d)", b.Items[i])
		}
	}
	if sum > 0xffffffff {
		return fmt.Errorf("total weight %d overflows 16.16 fixed point", sum)
	}
	return nil
}

// insertBucket places b in the bucket table and derives its state.
func (m *Map) insertBucket(b *Bucket) error {
	idx := int(-1 - b.ID)
	for idx >= len(m.buckets) {
		m.buckets = append(m.buckets, nil)
	}
	if m.buckets[idx] != nil {
		return fmt.Errorf("bucket id %d used by both %s and %s", b.ID, m.buckets[idx].Name, b.Name)
	}
	b.derive(m.tunables.StrawCalcVersion)
	m.buckets[idx] = b
	m.maxBucketSize = max(m.maxBucketSize, len(b.Items))
	return nil
}

// checkHierarchy verifies that every item exists and that no bucket
// contains itself, directly or not; the mapper would loop forever.
func (m *Map) checkHierarchy(Spec) error {
	const (
		unvisited = iota
		visiting
		done
	)
	state := make([]uint8, len(m.buckets))
	var visit func(b *Bucket) error
	visit = func(b *Bucket) error {
		idx := -1 - b.ID
		switch state[idx] {
		case visiting:
			return fmt.Errorf("bucket %s contains itself", b.Name)
		case done:
			return nil
		}
		state[idx] = visiting
		for _, item := range b.Items {
			if item >= 0 {
				if !m.DeviceExists(item) {
					return fmt.Errorf("bucket %s: item %d is not a device", b.Name, item)
				}
				continue
			}
			child := m.Bucket(item)
			if child == nil {
				return fmt.Errorf("bucket %s: item %d is not a bucket", b.Name, item)
			}
			if err := visit(child); err != nil {
				return err
			}
		}
		state[idx] = done
		return nil
	}
	for _, b := range m.buckets {
		if b != nil {
			if err := visit(b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *Map) addRules(spec Spec) error {
	for i := range spec.Rules {
		r := spec.Rules[i]
		r.Steps = slices.Clone(r.Steps)
		if r.ID < 0 || r.ID >= maxItems {
			return fmt.Errorf("rule %s: id %d out of range", r.Name, r.ID)
		}
		for int(r.ID) >= len(m.rules) {
			m.rules = append(m.rules, nil)
		}
		if m.rules[r.ID] != nil {
			return fmt.Errorf("rule id %d used by both %s and %s", r.ID, m.rules[r.ID].Name, r.Name)
		}
		if slices.ContainsFunc(m.rules, func(o *Rule) bool { return o != nil && o.Name == r.Name }) {
			return fmt.Errorf("rule name %q used twice", r.Name)
		}
		for j := range r.Steps {
			if err := m.resolveStep(&r.Steps[j]); err != nil {
				return fmt.Errorf("rule %s step %d: %w", r.Name, j, err)
			}
		}
		m.rules[r.ID] = &r
	}
	return nil
}

func (m *Map) resolveStep(s *Step) error {
	if !s.Op.valid() {
		return fmt.Errorf("unknown op %d", s.Op)
	}
	switch {
	case s.Op == OpTake:
		if !m.ItemExists(s.Arg1) {
			return fmt.Errorf("take: no item %d", s.Arg1)
		}
		if s.Class == "" {
			return nil
		}
		shadow, ok := m.ShadowID(s.Arg1, s.Class)
		if !ok {
			return fmt.Errorf("take %s class %s: no such device class under it", m.ItemName(s.Arg1), s.Class)
		}
		s.Arg1 = shadow
	case s.Op.IsChoose():
		if m.typeName(s.Arg2) == "" {
			return fmt.Errorf("%s: unknown type %d", s.Op, s.Arg2)
		}
	}
	return nil
}

func (m *Map) addChooseArgs(spec Spec) error {
	if len(spec.ChooseArgs) == 0 {
		return nil
	}
	m.chooseArgs = make(map[int64]*ChooseArgs, len(spec.ChooseArgs))
	for index, args := range spec.ChooseArgs {
		ca := &ChooseArgs{index: index, byBucket: make([]ChooseArg, len(m.buckets))}
		for _, a := range args {
			b := m.Bucket(a.BucketID)
			if b == nil {
				return fmt.Errorf("choose_args %d: no bucket %d", index, a.BucketID)
			}
			if a.IDs != nil && len(a.IDs) != len(b.Items) {
				return fmt.Errorf("choose_args %d bucket %s: %d ids for %d items", index, b.Name, len(a.IDs), len(b.Items))
			}
			for _, ws := range a.Weights {
				if len(ws) != len(b.Items) {
					return fmt.Errorf("choose_args %d bucket %s: weight set of %d for %d items", index, b.Name, len(ws), len(b.Items))
				}
			}
			ca.byBucket[-1-a.BucketID] = ChooseArg{BucketID: a.BucketID, IDs: slices.Clone(a.IDs), Weights: cloneWeights(a.Weights)}
		}
		m.chooseArgs[index] = ca
	}
	return nil
}

func cloneWeights(ws [][]uint32) [][]uint32 {
	if ws == nil {
		return nil
	}
	out := make([][]uint32, len(ws))
	for i, w := range ws {
		out[i] = slices.Clone(w)
	}
	return out
}

func (m *Map) typeName(id int32) string {
	for _, t := range m.types {
		if t.ID == id {
			return t.Name
		}
	}
	return ""
}
