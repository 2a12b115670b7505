package osdmon

import (
	"fmt"
	"strconv"
	"time"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// prepareOSDCreate handles "osd create [uuid]": it allocates the lowest
// free id to a new OSD (down, out, never in), or returns the id already
// given to uuid.
func (s *Service) prepareOSDCreate(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	uuid := ""
	if c.Has("uuid") {
		var err error
		if uuid, err = parseUUID(c.StrOr("uuid", "")); err != nil {
			return bad(err)
		}
		if id, ok := s.meta.byUUID(uuid); ok && s.m.Exists(id) {
			r := replyJSON(map[string]int32{"osdid": id}, fmt.Sprintf("%d\n", id))
			r.Status = fmt.Sprintf("osd.%d exists with uuid %s", id, uuid)
			return nil, r
		}
	}
	id := int32(0)
	for s.m.Exists(id) {
		id++
	}
	if id >= osdmap.MaxOSDs {
		return nil, moncmd.Errorf(moncmd.ERANGE, "osd create: no free osd id below %d", osdmap.MaxOSDs)
	}
	t := s.begin(now)
	if err := t.inc.SetOSD(t.base, id, osdmap.OSD{State: osdmap.OSDExists | osdmap.OSDNew,
		Weight: osdmap.WeightOut, PrimaryAffinity: osdmap.DefaultPrimaryAffinity}); err != nil {
		return bad(err)
	}
	t.setMeta(id, osdMeta{UUID: uuid, DownSince: now})
	r := replyJSON(map[string]int32{"osdid": id}, fmt.Sprintf("%d\n", id))
	r.Status = fmt.Sprintf("created osd.%d", id)
	return t.propose(r)
}

// prepareBoot handles "osd boot id addr host [weight] [uuid] [class]
// [nonce]". A boot with a nonce other than the last one is a restart: the
// OSD is marked up again, with a new up_from, even at the same address.
func (s *Service) prepareBoot(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	id, err := osdID(c, "id")
	if err != nil {
		return bad(err)
	}
	addr, err := c.Str("addr")
	if err != nil {
		return bad(err)
	}
	host, err := c.Str("host")
	if err != nil {
		return bad(err)
	}
	weight, err := crushWeight(c, "weight", 1)
	if err != nil {
		return bad(err)
	}
	if len(addr) > osdmap.MaxNameLen {
		return nil, moncmd.Errorf(moncmd.EINVAL, "osd boot: address longer than %d bytes", osdmap.MaxNameLen)
	}
	o := s.m.OSD(id)
	if !o.Exists() {
		return nil, moncmd.Errorf(moncmd.ENOENT, "osd.%d does not exist; create it first (osd create)", id)
	}
	meta := s.meta[id]
	if c.Has("uuid") {
		uuid, err := parseUUID(c.StrOr("uuid", ""))
		if err != nil {
			return bad(err)
		}
		if meta.UUID != "" && meta.UUID != uuid {
			return nil, moncmd.Errorf(moncmd.EPERM, "osd.%d belongs to uuid %s, not %s", id, meta.UUID, uuid)
		}
		meta.UUID = uuid
	}
	if c.Has("nonce") {
		n, err := strconv.ParseUint(c.StrOr("nonce", ""), 10, 64)
		if err != nil {
			return nil, moncmd.Errorf(moncmd.EINVAL, "osd boot: nonce %q is not a number", c.StrOr("nonce", ""))
		}
		meta.Nonce = n
	}
	if s.m.Flags()&osdmap.FlagNoUp != 0 || o.State&osdmap.OSDNoUp != 0 {
		return nil, moncmd.Errorf(moncmd.EAGAIN, "noup is set: osd.%d stays down until it is unset", id)
	}
	t := s.begin(now)
	sp := t.crush()
	placed := len(parentsOf(sp, id)) > 0
	class := c.StrOr("class", "")
	di := deviceIndex(sp, id)
	needClass := class != "" && (di < 0 || sp.Devices[di].Class == "")
	if o.IsUp() && o.Addr == addr && placed && !needClass && meta == s.meta[id] {
		t.spec = nil
		return nil, moncmd.Reply{Status: fmt.Sprintf("osd.%d is already up at %s", id, addr)}
	}
	if err := t.inc.MarkUp(t.base, id, addr); err != nil {
		return bad(err)
	}
	status := fmt.Sprintf("osd.%d booted at %s", id, addr)
	if !o.IsIn() && o.State&(osdmap.OSDNew|osdmap.OSDAutoOut) != 0 {
		if s.m.Flags()&osdmap.FlagNoIn != 0 || o.State&osdmap.OSDNoIn != 0 {
			status += " (noin is set: left out)"
		} else {
			if err := t.inc.MarkIn(t.base, id); err != nil {
				return bad(err)
			}
			status += ", marked in"
		}
	}
	meta.DownSince = time.Time{}
	t.setMeta(id, meta)
	if needClass {
		sp.Devices[ensureDevice(sp, id)].Class = class
	}
	if !placed {
		if err := placeOSD(sp, t.base.Crush(), id, host, weight); err != nil {
			return nil, moncmd.Errorf(moncmd.EINVAL, "osd boot: %v", err)
		}
		status += fmt.Sprintf(", placed under host=%s with weight %s", host, fixed(weight))
	} else if !needClass {
		t.spec = nil
	}
	return t.propose(moncmd.Reply{Status: status})
}

// placeOSD puts device id under host, creating the host under the
// default root if it does not exist.
func placeOSD(sp *crush.Spec, cur *crush.Map, id int32, host string, weight uint32) error {
	ensureDevice(sp, id)
	hostType, ok := typeID(sp, "host")
	if !ok {
		return fmt.Errorf("the crush map has no host type")
	}
	hi := bucketIndex(sp, host)
	switch {
	case hi >= 0 && sp.Buckets[hi].Type != hostType:
		return fmt.Errorf("bucket %q exists and is not a host", host)
	case hi < 0:
		ri := bucketIndex(sp, DefaultRoot)
		if ri < 0 {
			return fmt.Errorf("no root %q to put host %q under", DefaultRoot, host)
		}
		hi = addBucket(sp, cur, host, hostType)
		link(sp, ri, sp.Buckets[hi].ID, 0)
	}
	link(sp, hi, id, weight)
	return nil
}

// checkExist refuses ids that are not OSDs.
func (s *Service) checkExist(prefix string, ids []int32) *moncmd.Reply {
	for _, id := range ids {
		if !s.m.Exists(id) {
			r := moncmd.Errorf(moncmd.ENOENT, "%s: osd.%d does not exist", prefix, id)
			return &r
		}
	}
	return nil
}

// prepareDown handles "osd down ids": an operator's mark-down (the
// nodown flag only stops failure reports).
func (s *Service) prepareDown(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	ids, err := osdIDs(c, "ids")
	if err != nil {
		return bad(err)
	}
	if r := s.checkExist(c.Prefix, ids); r != nil {
		return nil, *r
	}
	t := s.begin(now)
	var done []int32
	for _, id := range ids {
		if !t.base.IsUp(id) {
			t.notes = append(t.notes, fmt.Sprintf("osd.%d is already down", id))
			continue
		}
		t.markDown(id)
		done = append(done, id)
	}
	if len(done) == 0 {
		return t.unchanged()
	}
	return t.propose(t.status("marked down " + osdNames(done)))
}

// prepareMarkMeDown handles "osd markmedown id addr": an OSD that must
// stop (its disk fails) asks to be marked down at once rather than wait
// for its peers to report it. It applies only to the incarnation at addr:
// a late request never marks a restarted OSD down.
func (s *Service) prepareMarkMeDown(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	ids, err := osdIDs(c, "id")
	if err != nil {
		return bad(err)
	}
	addr, err := c.Str("addr")
	if err != nil {
		return bad(err)
	}
	if len(ids) != 1 {
		return nil, moncmd.Errorf(moncmd.EINVAL, "%s: one id, got %d", c.Prefix, len(ids))
	}
	if r := s.checkExist(c.Prefix, ids); r != nil {
		return nil, *r
	}
	id := ids[0]
	t := s.begin(now)
	if !t.base.IsUp(id) || t.base.OSD(id).Addr != addr {
		t.notes = append(t.notes, fmt.Sprintf("osd.%d at %s is not up", id, addr))
		return t.unchanged()
	}
	t.markDown(id)
	return t.propose(t.status(fmt.Sprintf("marked osd.%d down at its own request", id)))
}

// prepareAlive handles "osd alive id addr want": a primary about to
// activate a PG in an interval that began at epoch want asks that the
// map record its up_thru at least that high (Ceph's MOSDAlive), and
// activates once it sees such a map. Peering later skips an interval
// whose primary's up_thru never reached its start: it never went
// read-write. One request covers every PG of the OSD up to want. It
// applies only to the incarnation at addr, while up.
func (s *Service) prepareAlive(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	id, err := osdID(c, "id")
	if err != nil {
		return bad(err)
	}
	addr, err := c.Str("addr")
	if err != nil {
		return bad(err)
	}
	want, err := c.Int("want")
	if err != nil {
		return bad(err)
	}
	if r := s.checkExist(c.Prefix, []int32{id}); r != nil {
		return nil, *r
	}
	switch o := s.m.OSD(id); {
	case want < 1 || want > int64(s.m.Epoch()):
		return nil, moncmd.Errorf(moncmd.EINVAL, "%s: want %d is not an epoch of the map (1 to %d)", c.Prefix, want, s.m.Epoch())
	case !o.IsUp() || o.Addr != addr:
		return nil, moncmd.Errorf(moncmd.EAGAIN, "%s: osd.%d at %s is not up; boot it first", c.Prefix, id, addr)
	case uint64(o.UpThru) >= uint64(want):
		return nil, moncmd.Reply{Status: fmt.Sprintf("osd.%d up_thru is %d already", id, o.UpThru)}
	}
	t := s.begin(now)
	if err := t.inc.SetUpThru(t.base, id, osdmap.Epoch(want)); err != nil {
		return bad(err)
	}
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("osd.%d up_thru %d", id, want)})
}

// markDown marks id down and starts its down-out clock.
func (t *txn) markDown(id int32) {
	_ = t.inc.MarkDown(t.base, id) // id exists: checked by callers
	m := t.osdMeta(id)
	m.DownSince = t.now
	t.setMeta(id, m)
}

// prepareOut handles "osd out ids [auto]". With auto=true (the command
// Tick issues) it marks out only OSDs still due (dueOut) and flags them
// auto-out, so that they come back in when they boot; an operator's out
// sticks.
func (s *Service) prepareOut(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	ids, err := osdIDs(c, "ids")
	if err != nil {
		return bad(err)
	}
	auto, err := c.Bool("auto")
	if err != nil {
		return bad(err)
	}
	if r := s.checkExist(c.Prefix, ids); r != nil {
		return nil, *r
	}
	due := map[int32]bool{}
	for _, id := range s.dueOut(now) {
		due[id] = true
	}
	t := s.begin(now)
	var done []int32
	for _, id := range ids {
		o := t.base.OSD(id)
		switch {
		case !o.IsIn():
			t.notes = append(t.notes, fmt.Sprintf("osd.%d is already out", id))
			continue
		case auto && !due[id]:
			t.notes = append(t.notes, fmt.Sprintf("osd.%d is not due to be marked out", id))
			continue
		}
		o.Weight = osdmap.WeightOut
		o.State &^= osdmap.OSDNew | osdmap.OSDAutoOut
		if auto {
			o.State |= osdmap.OSDAutoOut
		}
		if err := t.inc.SetOSD(t.base, id, o); err != nil {
			return bad(err)
		}
		done = append(done, id)
	}
	if len(done) == 0 {
		return t.unchanged()
	}
	return t.propose(t.status("marked out " + osdNames(done)))
}

// dueOut returns the OSDs to mark out at now: down for at least the
// down-out interval (never if it is 0), in, and neither the noout flag nor
// their own noout state set.
func (s *Service) dueOut(now time.Time) []int32 {
	interval := s.opts.Duration(OptDownOutInterval)
	if interval <= 0 || s.m.Flags()&osdmap.FlagNoOut != 0 {
		return nil
	}
	var ids []int32
	for id := range s.m.MaxOSD() {
		o := s.m.OSD(id)
		since := s.meta[id].DownSince
		if !o.Exists() || o.IsUp() || !o.IsIn() || o.State&osdmap.OSDNoOut != 0 || since.IsZero() {
			continue
		}
		if now.Sub(since) >= interval {
			ids = append(ids, id)
		}
	}
	return ids
}

// prepareIn handles "osd in ids".
func (s *Service) prepareIn(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	ids, err := osdIDs(c, "ids")
	if err != nil {
		return bad(err)
	}
	if r := s.checkExist(c.Prefix, ids); r != nil {
		return nil, *r
	}
	t := s.begin(now)
	var done []int32
	for _, id := range ids {
		if t.base.IsIn(id) {
			t.notes = append(t.notes, fmt.Sprintf("osd.%d is already in", id))
			continue
		}
		if err := t.inc.MarkIn(t.base, id); err != nil {
			return bad(err)
		}
		// A down OSD marked in is marked out again after the interval,
		// counted from now if it was never up.
		if m := t.osdMeta(id); !t.base.IsUp(id) && m.DownSince.IsZero() {
			m.DownSince = now
			t.setMeta(id, m)
		}
		done = append(done, id)
	}
	if len(done) == 0 {
		return t.unchanged()
	}
	return t.propose(t.status("marked in " + osdNames(done)))
}

// prepareRm handles "osd rm ids": each must be down; it leaves the map
// and the CRUSH map.
func (s *Service) prepareRm(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	ids, err := osdIDs(c, "ids")
	if err != nil {
		return bad(err)
	}
	if r := s.checkExist(c.Prefix, ids); r != nil {
		return nil, *r
	}
	t := s.begin(now)
	for _, id := range ids {
		if t.base.IsUp(id) {
			return nil, moncmd.Errorf(moncmd.EBUSY, "osd.%d is still up; mark it down first (osd down %d)", id, id)
		}
		if err := t.inc.RemoveOSD(t.base, id); err != nil {
			return bad(err)
		}
		t.removeMeta(id)
		if cm := t.base.Crush(); cm.DeviceExists(id) {
			sp := t.crush()
			unlink(sp, id)
			if i := deviceIndex(sp, id); i >= 0 {
				sp.Devices = append(sp.Devices[:i], sp.Devices[i+1:]...)
			}
		}
	}
	return t.propose(moncmd.Reply{Status: "removed " + osdNames(ids)})
}

// prepareLost handles "osd lost id --yes-i-really-mean-it": the OSD, down,
// will not come back with its disk, and peering is to stop waiting for
// it: the writes only it held (in an ack primary pool, those it
// answered ahead of its replicas) are given up.
func (s *Service) prepareLost(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	id, err := osdID(c, "id")
	if err != nil {
		return bad(err)
	}
	if r := s.checkExist(c.Prefix, []int32{id}); r != nil {
		return nil, *r
	}
	if s.m.IsUp(id) {
		return nil, moncmd.Errorf(moncmd.EBUSY, "osd.%d is up; only a down OSD can be declared lost (mark it down first: osd down %d)", id, id)
	}
	sure, err := c.Bool(sureArg)
	if err != nil {
		return bad(err)
	}
	if !sure {
		return nil, moncmd.Errorf(moncmd.EPERM, "declaring osd.%d lost gives up whatever only it holds: the PGs that wait for it "+
			"go active without it, and writes it alone acknowledged are gone; if it can come back, start it instead. "+
			"If that is what you want, pass --yes-i-really-mean-it", id)
	}
	t := s.begin(now)
	if err := t.inc.MarkLost(t.base, id, t.inc.Epoch); err != nil {
		return bad(err)
	}
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("marked osd.%d lost at epoch %d", id, t.inc.Epoch)})
}

// prepareReweight handles "osd reweight id weight" (0 to 1).
func (s *Service) prepareReweight(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	id, err := osdID(c, "id")
	if err != nil {
		return bad(err)
	}
	w, err := unitWeight(c, "weight")
	if err != nil {
		return bad(err)
	}
	if r := s.checkExist(c.Prefix, []int32{id}); r != nil {
		return nil, *r
	}
	if s.m.OSD(id).Weight == w {
		return nil, moncmd.Reply{Status: fmt.Sprintf("osd.%d already has reweight %s", id, fixed(w))}
	}
	t := s.begin(now)
	if err := t.inc.Reweight(t.base, id, w); err != nil {
		return bad(err)
	}
	return t.propose(moncmd.Reply{Status: fmt.Sprintf("reweighted osd.%d to %s", id, fixed(w))})
}

// parseFlagArg reads the "key" of osd set/unset: a flag osdmap knows, or
// "pause" for pauserd and pausewr together.
func parseFlagArg(c moncmd.Command) (osdmap.Flags, string, error) {
	key, err := c.Str("key")
	if err != nil {
		return 0, "", err
	}
	if key == "pause" {
		return osdmap.FlagPauseRead | osdmap.FlagPauseWrite, key, nil
	}
	f, err := osdmap.ParseFlag(key)
	if err != nil {
		return 0, "", moncmd.BadArgf("%s: unknown flag %q", c.Prefix, key)
	}
	return f, key, nil
}

func (s *Service) prepareSetFlag(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	return s.changeFlag(c, now, true)
}

func (s *Service) prepareUnsetFlag(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	return s.changeFlag(c, now, false)
}

// changeFlag handles "osd set key" and "osd unset key".
func (s *Service) changeFlag(c moncmd.Command, now time.Time, set bool) ([]byte, moncmd.Reply) {
	f, key, err := parseFlagArg(c)
	if err != nil {
		return bad(err)
	}
	cur := s.m.Flags()
	next, word := cur&^f, "unset"
	if set {
		next, word = cur|f, "set"
	}
	if next == cur {
		return nil, moncmd.Reply{Status: fmt.Sprintf("%s is already %s", key, word)}
	}
	t := s.begin(now)
	t.inc.NewFlags = &next
	return t.propose(moncmd.Reply{Status: key + " is " + word})
}
