package osdmon

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

// maxCrushName bounds bucket, rule and class names.
const maxCrushName = 256

func checkCrushName(what, name string) error {
	if name == "" || len(name) > maxCrushName || strings.ContainsAny(name, " \t\n~=") {
		return moncmd.BadArgf("%s name %q: want 1 to %d characters without spaces, '~' or '='", what, name, maxCrushName)
	}
	return nil
}

// prepareAddBucket handles "osd crush add-bucket name type": a new bucket
// outside any hierarchy (move it into one with osd crush move).
func (s *Service) prepareAddBucket(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	name, err := c.Str("name")
	if err == nil {
		err = checkCrushName("bucket", name)
	}
	if err != nil {
		return bad(err)
	}
	typName, err := c.Str("type")
	if err != nil {
		return bad(err)
	}
	t := s.begin(now)
	sp := t.crush()
	typ, ok := typeID(sp, typName)
	if !ok || typ == 0 {
		return nil, moncmd.Errorf(moncmd.EINVAL, "osd crush add-bucket: %q is not a bucket type", typName)
	}
	if i := bucketIndex(sp, name); i >= 0 {
		if sp.Buckets[i].Type == typ {
			return nil, moncmd.Reply{Status: fmt.Sprintf("bucket '%s' already exists", name)}
		}
		return nil, moncmd.Errorf(moncmd.EEXIST, "bucket '%s' already exists with type %s", name, s.m.Crush().TypeName(sp.Buckets[i].Type))
	}
	if id, ok := s.m.Crush().ItemID(name); ok {
		return nil, moncmd.Errorf(moncmd.EEXIST, "'%s' already names item %d", name, id)
	}
	addBucket(sp, t.base.Crush(), name, typ)
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("added bucket %s type %s to crush map", name, typName)})
}

// prepareMove handles "osd crush move name TYPE=NAME...": the bucket
// leaves its parents and goes under the location, whose missing buckets
// are created (as Ceph's insert_item does). Location arguments are named
// by bucket type ("root": "default", "rack": "r1").
func (s *Service) prepareMove(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	name, err := c.Str("name")
	if err != nil {
		return bad(err)
	}
	t := s.begin(now)
	sp := t.crush()
	bi := bucketIndex(sp, name)
	if bi < 0 {
		if _, ok := s.m.Crush().ItemID(name); ok {
			return nil, moncmd.Errorf(moncmd.EINVAL, "osd crush move: %s is not a bucket (devices are placed when they boot)", name)
		}
		return nil, moncmd.Errorf(moncmd.ENOENT, "osd crush move: no bucket '%s'", name)
	}
	type level struct {
		typ  int32
		name string
	}
	var loc []level
	for k, v := range c.Args {
		if k == "name" || strings.HasPrefix(k, "_") {
			continue // "_caller" and other arguments the monitor adds
		}
		typ, ok := typeID(sp, k)
		if !ok {
			return nil, moncmd.Errorf(moncmd.EINVAL, "osd crush move: %q is not a bucket type", k)
		}
		if err := checkCrushName("bucket", v); err != nil {
			return bad(err)
		}
		if typ <= sp.Buckets[bi].Type {
			return nil, moncmd.Errorf(moncmd.EINVAL, "osd crush move: %s=%s is not above %s's type", k, v, name)
		}
		loc = append(loc, level{typ, v})
	}
	if len(loc) == 0 {
		return nil, moncmd.Errorf(moncmd.EINVAL, "osd crush move: no location (like root=default)")
	}
	slices.SortFunc(loc, func(a, b level) int { return int(a.typ - b.typ) })
	item := sp.Buckets[bi].ID
	if ps := parentsOf(sp, item); len(ps) == 1 && sp.Buckets[ps[0]].Name == loc[0].name {
		return nil, moncmd.Reply{Status: fmt.Sprintf("no need to move item id %d name '%s' to location %s: already there", item, name, locArgs(c))}
	}
	unlink(sp, item)
	for _, l := range loc {
		pi := bucketIndex(sp, l.name)
		if pi >= 0 {
			if sp.Buckets[pi].Type != l.typ {
				return nil, moncmd.Errorf(moncmd.EINVAL, "osd crush move: bucket '%s' is not of type %s", l.name, s.m.Crush().TypeName(l.typ))
			}
			link(sp, pi, item, 0)
			item = -1 // linked into an existing bucket: done
			break
		}
		if _, ok := s.m.Crush().ItemID(l.name); ok {
			return nil, moncmd.Errorf(moncmd.EEXIST, "osd crush move: '%s' names a device", l.name)
		}
		pi = addBucket(sp, t.base.Crush(), l.name, l.typ)
		link(sp, pi, item, 0)
		item = sp.Buckets[pi].ID
	}
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("moved item '%s' to location %s", name, locArgs(c))})
}

// locArgs formats a move's location as "root=default,rack=r1".
func locArgs(c moncmd.Command) string {
	var parts []string
	for k, v := range c.Args {
		if k != "name" && !strings.HasPrefix(k, "_") {
			parts = append(parts, k+"="+v)
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// crushDevice reads an "osd.N" (or N) argument naming a device of the
// CRUSH map.
func (s *Service) crushDevice(c moncmd.Command, arg string) (int32, *moncmd.Reply) {
	id, err := osdID(c, arg)
	if err != nil {
		r := moncmd.FromError(err, moncmd.EINVAL)
		return 0, &r
	}
	if !s.m.Crush().DeviceExists(id) {
		r := moncmd.Errorf(moncmd.ENOENT, "%s: osd.%d is not in the crush map", c.Prefix, id)
		return 0, &r
	}
	return id, nil
}

// prepareCrushReweight handles "osd crush reweight name weight": the
// device's weight in every bucket holding it; ancestors follow.
func (s *Service) prepareCrushReweight(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	id, bad2 := s.crushDevice(c, "name")
	if bad2 != nil {
		return nil, *bad2
	}
	if !c.Has("weight") {
		return bad(moncmd.BadArgf("%s: missing \"weight\"", c.Prefix))
	}
	w, err := crushWeight(c, "weight", 0)
	if err != nil {
		return bad(err)
	}
	t := s.begin(now)
	sp := t.crush()
	parents := parentsOf(sp, id)
	if len(parents) == 0 {
		return nil, moncmd.Errorf(moncmd.ENOENT, "osd crush reweight: osd.%d is in no bucket", id)
	}
	same := true
	for _, pi := range parents {
		b := &sp.Buckets[pi]
		j := slices.Index(b.Items, id)
		same = same && b.Weights[j] == w
		b.Weights[j] = w
	}
	if same {
		return nil, moncmd.Reply{Status: fmt.Sprintf("osd.%d already has crush weight %s", id, fixed(w))}
	}
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("reweighted item id %d name 'osd.%d' to %s in crush map", id, id, fixed(w))})
}

// prepareSetClass handles "osd crush set-device-class class ids". A device
// with another class must have it removed first, as in Ceph.
func (s *Service) prepareSetClass(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	class, err := c.Str("class")
	if err == nil {
		err = checkCrushName("class", class)
	}
	if err != nil {
		return bad(err)
	}
	ids, err := osdIDs(c, "ids")
	if err != nil {
		return bad(err)
	}
	t := s.begin(now)
	sp := t.crush()
	var done []int32
	for _, id := range ids {
		if !s.m.Exists(id) && !s.m.Crush().DeviceExists(id) {
			return nil, moncmd.Errorf(moncmd.ENOENT, "osd crush set-device-class: osd.%d does not exist", id)
		}
		d := &sp.Devices[ensureDevice(sp, id)]
		switch d.Class {
		case class:
			t.notes = append(t.notes, fmt.Sprintf("osd.%d already has class %s", id, class))
			continue
		case "":
		default:
			return nil, moncmd.Errorf(moncmd.EBUSY, "osd.%d has class %s already; remove it first (osd crush rm-device-class)", id, d.Class)
		}
		d.Class = class
		done = append(done, id)
	}
	if len(done) == 0 {
		return t.unchanged()
	}
	return t.propose(t.status(fmt.Sprintf("set class %s of %s", class, osdNames(done))))
}

// prepareRmClass handles "osd crush rm-device-class ids".
func (s *Service) prepareRmClass(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	ids, err := osdIDs(c, "ids")
	if err != nil {
		return bad(err)
	}
	t := s.begin(now)
	sp := t.crush()
	var done []int32
	for _, id := range ids {
		i := deviceIndex(sp, id)
		if i < 0 || sp.Devices[i].Class == "" {
			t.notes = append(t.notes, fmt.Sprintf("osd.%d has no class", id))
			continue
		}
		sp.Devices[i].Class = ""
		done = append(done, id)
	}
	if len(done) == 0 {
		return t.unchanged()
	}
	return t.propose(t.status("removed the class of " + osdNames(done)))
}

// prepareCrushRm handles "osd crush rm name": an empty bucket that no
// rule takes, or a device (which leaves every bucket but keeps its class).
func (s *Service) prepareCrushRm(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	name, err := c.Str("name")
	if err != nil {
		return bad(err)
	}
	id, ok := s.m.Crush().ItemID(name)
	if !ok {
		return nil, moncmd.Reply{Status: fmt.Sprintf("item '%s' does not appear in the crush map", name)}
	}
	t := s.begin(now)
	sp := t.crush()
	if id >= 0 {
		if len(parentsOf(sp, id)) == 0 {
			return nil, moncmd.Reply{Status: fmt.Sprintf("device '%s' is in no bucket", name)}
		}
		unlink(sp, id)
		return t.propose(moncmd.Reply{Status: fmt.Sprintf("removed item id %d name '%s' from crush map", id, name)})
	}
	bi := bucketByID(sp, id)
	if bi < 0 {
		return nil, moncmd.Errorf(moncmd.EINVAL, "osd crush rm: '%s' is a device-class shadow bucket", name)
	}
	if n := len(sp.Buckets[bi].Items); n > 0 {
		return nil, moncmd.Errorf(moncmd.EBUSY, "bucket '%s' is not empty (%d items)", name, n)
	}
	if rule, ok := takesBucket(sp, id); ok {
		return nil, moncmd.Errorf(moncmd.EBUSY, "bucket '%s' is taken by rule %s", name, rule)
	}
	unlink(sp, id)
	sp.Buckets = slices.Delete(sp.Buckets, bi, bi+1)
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("removed item id %d name '%s' from crush map", id, name)})
}

// prepareRuleCreate handles "osd crush rule create-replicated name root
// type [class]": take root (restricted to class), chooseleaf firstn 0
// across type, emit.
func (s *Service) prepareRuleCreate(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	name, err := c.Str("name")
	if err == nil {
		err = checkCrushName("rule", name)
	}
	if err != nil {
		return bad(err)
	}
	rootName, err := c.Str("root")
	if err != nil {
		return bad(err)
	}
	typName, err := c.Str("type")
	if err != nil {
		return bad(err)
	}
	class := c.StrOr("class", "")
	cm := s.m.Crush()
	if r := cm.RuleByName(name); r != nil {
		return nil, moncmd.Reply{Status: fmt.Sprintf("rule %s already exists", name)}
	}
	root, ok := cm.ItemID(rootName)
	if !ok || root >= 0 {
		return nil, moncmd.Errorf(moncmd.ENOENT, "root item %s does not exist", rootName)
	}
	typ, ok := cm.TypeID(typName)
	if !ok {
		return nil, moncmd.Errorf(moncmd.EINVAL, "unknown failure domain type %s", typName)
	}
	if class != "" && !slices.Contains(cm.Classes(), class) {
		return nil, moncmd.Errorf(moncmd.ENOENT, "device class %s does not exist", class)
	}
	t := s.begin(now)
	sp := t.crush()
	id := int32(0)
	for cm.Rule(id) != nil {
		id++
	}
	sp.Rules = append(sp.Rules, crush.Rule{ID: id, Name: name, Type: crush.RuleReplicated, MinSize: 1, MaxSize: 10,
		Steps: []crush.Step{
			{Op: crush.OpTake, Arg1: root, Class: class},
			{Op: crush.OpChooseLeafFirstN, Arg1: 0, Arg2: typ},
			{Op: crush.OpEmit},
		}})
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("created rule %s (id %d)", name, id)})
}

// prepareRuleCreateHybrid handles "osd crush rule create-hybrid name
// primary_class replica_class type [root]": crush.HybridRule (the first
// copy from primary_class, the others from replica_class, each across
// type; root default "default").
func (s *Service) prepareRuleCreateHybrid(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	name, err := c.Str("name")
	if err == nil {
		err = checkCrushName("rule", name)
	}
	if err != nil {
		return bad(err)
	}
	var primary, replica, typName string
	for _, a := range []struct {
		key string
		to  *string
	}{{"primary_class", &primary}, {"replica_class", &replica}, {"type", &typName}} {
		if *a.to, err = c.Str(a.key); err != nil {
			return bad(err)
		}
	}
	rootName := c.StrOr("root", "default")
	cm := s.m.Crush()
	if r := cm.RuleByName(name); r != nil {
		return nil, moncmd.Reply{Status: fmt.Sprintf("rule %s already exists", name)}
	}
	root, ok := cm.ItemID(rootName)
	if !ok || root >= 0 {
		return nil, moncmd.Errorf(moncmd.ENOENT, "root item %s does not exist", rootName)
	}
	typ, ok := cm.TypeID(typName)
	if !ok {
		return nil, moncmd.Errorf(moncmd.EINVAL, "unknown failure domain type %s", typName)
	}
	if primary == replica {
		return nil, moncmd.Errorf(moncmd.EINVAL, "primary and replica class are both %s: use create-replicated with class %s", primary, primary)
	}
	for _, class := range []string{primary, replica} {
		if !slices.Contains(cm.Classes(), class) {
			return nil, moncmd.Errorf(moncmd.ENOENT, "device class %s does not exist (osd crush set-device-class %s OSD...)", class, class)
		}
	}
	t := s.begin(now)
	sp := t.crush()
	id := int32(0)
	for cm.Rule(id) != nil {
		id++
	}
	sp.Rules = append(sp.Rules, crush.HybridRule(id, name, root, primary, replica, typ))
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("created rule %s (id %d): primary from class %s, replicas from class %s, across %s",
		name, id, primary, replica, typName)})
}

// prepareRuleRm handles "osd crush rule rm name"; a rule in use stays.
func (s *Service) prepareRuleRm(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	name, err := c.Str("name")
	if err != nil {
		return bad(err)
	}
	r := s.m.Crush().RuleByName(name)
	if r == nil {
		return nil, moncmd.Reply{Status: fmt.Sprintf("rule %s does not exist", name)}
	}
	for _, p := range s.m.Pools() {
		if p.CrushRule == r.ID {
			return nil, moncmd.Errorf(moncmd.EBUSY, "crush rule %s (%d) is in use by pool '%s'", name, r.ID, p.Name)
		}
	}
	t := s.begin(now)
	sp := t.crush()
	sp.Rules = slices.DeleteFunc(sp.Rules, func(x crush.Rule) bool { return x.ID == r.ID })
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("removed rule %s", name)})
}
