package crush

import "fmt"

// addShadowTrees builds, for every device class, a shadow copy of each
// hierarchy holding only that class's devices ("host0~ssd" and so on), as
// Ceph's populate_classes does. A rule restricted to a class takes the
// shadow of its bucket. Shadow ids come from Bucket.ClassIDs when given and
// are allocated otherwise.
func (m *Map) addShadowTrees(Spec) error {
	if len(m.classes) == 0 {
		return nil
	}
	used := map[int32]bool{}
	for _, b := range m.buckets {
		if b != nil {
			for _, id := range b.ClassIDs {
				used[id] = true
			}
		}
	}
	for _, root := range m.Roots() {
		for _, class := range m.classes {
			if _, err := m.cloneForClass(root, class, used); err != nil {
				return err
			}
		}
	}
	return nil
}

// cloneForClass returns the id of bucket id's shadow for class, creating it
// and its children's shadows first (Ceph's device_class_clone).
func (m *Map) cloneForClass(id int32, class string, used map[int32]bool) (int32, error) {
	orig := m.Bucket(id)
	name := shadowName(orig.Name, class)
	if existing, ok := m.names[name]; ok {
		return existing, nil
	}
	shadow := &Bucket{Name: name, Type: orig.Type, Alg: orig.Alg, Hash: orig.Hash, ShadowOf: orig.ID, Class: class}
	for i, item := range orig.Items {
		if item >= 0 {
			if m.devices[item].Class != class {
				continue
			}
			shadow.Items = append(shadow.Items, item)
			shadow.Weights = append(shadow.Weights, orig.Weights[i])
			continue
		}
		childID, err := m.cloneForClass(item, class, used)
		if err != nil {
			return 0, err
		}
		shadow.Items = append(shadow.Items, childID)
		shadow.Weights = append(shadow.Weights, m.Bucket(childID).weight)
	}
	if shadow.Alg == AlgUniform && len(shadow.Weights) > 0 {
		for _, w := range shadow.Weights {
			if w != shadow.Weights[0] {
				return 0, fmt.Errorf("uniform bucket %s: class %s shadow would have unequal weights", orig.Name, class)
			}
		}
	}
	shadow.ID = m.shadowIDFor(orig, class, used)
	if err := m.insertBucket(shadow); err != nil {
		return 0, fmt.Errorf("shadow of %s for class %s: %w", orig.Name, class, err)
	}
	m.names[name] = shadow.ID
	if orig.ClassIDs == nil {
		orig.ClassIDs = map[string]int32{}
	}
	orig.ClassIDs[class] = shadow.ID
	return shadow.ID, nil
}

// shadowIDFor returns the fixed shadow id of orig for class, or the
// highest free bucket id not reserved by any fixed shadow id.
func (m *Map) shadowIDFor(orig *Bucket, class string, used map[int32]bool) int32 {
	if id, ok := orig.ClassIDs[class]; ok {
		return id
	}
	id := int32(-1)
	for m.Bucket(id) != nil || used[id] {
		id--
	}
	return id
}
