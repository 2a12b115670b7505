package osdmon

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// txn builds one proposal from a command: an incremental on the applied
// map, CRUSH edits on a Spec, and meta changes. Nothing is changed until
// the proposal is applied.
type txn struct {
	s     *Service
	base  *osdmap.Map
	inc   *osdmap.Incremental
	spec  *crush.Spec // CRUSH edits, nil if none
	meta  map[int32]metaChange
	now   time.Time
	notes []string // per-item remarks for the reply ("osd.1 is already down")
}

func (s *Service) begin(now time.Time) *txn {
	inc := s.m.NewIncremental()
	inc.Modified = now
	return &txn{s: s, base: s.m, inc: inc, meta: map[int32]metaChange{}, now: now}
}

// crush returns the CRUSH Spec to edit, starting from the map's.
func (t *txn) crush() *crush.Spec {
	if t.spec == nil {
		sp := t.base.Crush().Spec()
		t.spec = &sp
	}
	return t.spec
}

// osdMeta returns OSD id's meta as this txn leaves it.
func (t *txn) osdMeta(id int32) osdMeta {
	if c, ok := t.meta[id]; ok {
		return c.meta
	}
	return t.s.meta[id]
}

func (t *txn) setMeta(id int32, m osdMeta) { t.meta[id] = metaChange{id: id, meta: m} }

func (t *txn) removeMeta(id int32) { t.meta[id] = metaChange{id: id, remove: true} }

// propose finishes the txn: it builds the CRUSH map, checks that the
// incremental applies to the base map, and encodes the proposal with the
// reply the client will get.
func (t *txn) propose(reply moncmd.Reply) ([]byte, moncmd.Reply) {
	if t.spec != nil {
		cm, err := buildCrush(*t.spec)
		if err != nil {
			return nil, moncmd.Errorf(moncmd.EINVAL, "crush: %v", err)
		}
		for _, r := range t.spec.Rules {
			for _, st := range r.Steps {
				if st.Op == crush.OpTake && st.Class != "" && !slices.Contains(cm.Classes(), st.Class) {
					return nil, moncmd.Errorf(moncmd.EBUSY, "crush: rule %s takes device class %s, which would have no devices", r.Name, st.Class)
				}
			}
		}
		t.inc.NewCrush = cm
	}
	// Check what Apply will do: decode the encoded incremental and apply
	// it, so that a map the codec cannot carry is refused here. The
	// pools' full flags follow the map it makes (full.go).
	body, err := t.check()
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "%v", err)
	}
	p := proposal{kind: kindInc, base: t.base.Epoch(), body: body, meta: sortChanges(t.meta), reply: reply}
	return p.encode(), reply
}

// check encodes the incremental, decodes and applies it to the base
// map, brings the pools' full flags in step with the result, removes the
// upmaps the result makes invalid (an OSD destroyed or out, a hierarchy
// that breaks a PG's failure domains: osdmap.StaleUpmaps, as Ceph's
// clean_pg_upmaps), and returns the encoded incremental.
func (t *txn) check() ([]byte, error) {
	for range 3 {
		body, err := t.inc.MarshalBinary()
		if err != nil {
			return nil, err
		}
		inc, err := osdmap.UnmarshalIncremental(body)
		if err != nil {
			return nil, err
		}
		next, err := t.base.Apply(inc)
		if err != nil {
			return nil, err
		}
		stale := next.StaleUpmaps()
		stale.AddTo(t.inc)
		if !t.syncPoolFull(next) && stale.Empty() {
			return body, nil
		}
	}
	// Changing a pool's flag changes no OSD state, and removing upmaps
	// leaves the others valid, so the third pass finds nothing to do.
	return nil, fmt.Errorf("osdmon: pool full flags or upmaps do not settle")
}

// status returns a reply whose status is msg followed by the txn's notes.
func (t *txn) status(msg string) moncmd.Reply {
	for _, n := range t.notes {
		if msg != "" {
			msg += "; "
		}
		msg += n
	}
	return moncmd.Reply{Status: msg}
}

// unchanged is the reply to a command that finds its change in place.
func (t *txn) unchanged() ([]byte, moncmd.Reply) { return nil, t.status("") }

// replyJSON is a successful reply with v as Data and text as Text.
func replyJSON(v any, text string) moncmd.Reply {
	data, err := json.Marshal(v)
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "osdmon: encoding reply: %v", err)
	}
	return moncmd.Reply{Data: data, Text: text}
}
