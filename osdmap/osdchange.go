package osdmap

import "fmt"

// This file holds helpers that record common OSD changes in an
// incremental. Each takes the map the incremental applies to (base) and
// builds on what inc already holds for the OSD, so helpers compose.

// PendingOSD returns the entry OSD id will have once inc is applied to
// base.
func (inc *Incremental) PendingOSD(base *Map, id int32) OSD {
	if o, ok := inc.NewOSDs[id]; ok {
		return o
	}
	if inc.NewMaxOSD != nil && id >= *inc.NewMaxOSD {
		return OSD{}
	}
	return base.OSD(id)
}

// SetOSD records the whole new entry of OSD id, growing max_osd if id is
// beyond it.
func (inc *Incremental) SetOSD(base *Map, id int32, o OSD) error {
	if id < 0 || id >= MaxOSDs {
		return fmt.Errorf("osdmap: osd id %d out of [0, %d)", id, MaxOSDs)
	}
	maxOSD := base.MaxOSD()
	if inc.NewMaxOSD != nil {
		maxOSD = *inc.NewMaxOSD
	}
	if id >= maxOSD {
		n := id + 1
		inc.NewMaxOSD = &n
	}
	inc.NewOSDs = setEntry(inc.NewOSDs, id, o)
	return nil
}

// update applies fn to the pending entry of an existing OSD.
func (inc *Incremental) update(base *Map, id int32, fn func(*OSD)) error {
	o := inc.PendingOSD(base, id)
	if !o.Exists() {
		return fmt.Errorf("%w: osd.%d", ErrNoSuchOSD, id)
	}
	fn(&o)
	return inc.SetOSD(base, id, o)
}

// MarkUp records that OSD id is up at addr as of inc's epoch, creating
// the OSD (out, with the default primary affinity) if it does not exist.
func (inc *Incremental) MarkUp(base *Map, id int32, addr string) error {
	o := inc.PendingOSD(base, id)
	if !o.Exists() {
		o = OSD{State: OSDExists | OSDNew, PrimaryAffinity: DefaultPrimaryAffinity}
	}
	o.State |= OSDUp
	o.Addr = addr
	o.UpFrom = inc.Epoch
	o.LostAt = 0 // back after all: peering may ask it again
	return inc.SetOSD(base, id, o)
}

// MarkDown records that OSD id went down in inc's epoch.
func (inc *Incremental) MarkDown(base *Map, id int32) error {
	return inc.update(base, id, func(o *OSD) {
		if o.State&OSDUp != 0 {
			o.DownAt = inc.Epoch
		}
		o.State &^= OSDUp
	})
}

// Reweight sets OSD id's in/out weight (16.16; WeightOut to WeightIn).
func (inc *Incremental) Reweight(base *Map, id int32, weight uint32) error {
	if weight > WeightIn {
		return fmt.Errorf("osdmap: osd.%d: weight %#x above %#x", id, weight, WeightIn)
	}
	return inc.update(base, id, func(o *OSD) {
		o.Weight = weight
		if weight != WeightOut {
			o.State &^= OSDAutoOut | OSDNew // as Ceph does when marking in
		}
	})
}

// MarkOut sets OSD id's weight to WeightOut.
func (inc *Incremental) MarkOut(base *Map, id int32) error { return inc.Reweight(base, id, WeightOut) }

// MarkIn sets OSD id's weight to WeightIn.
func (inc *Incremental) MarkIn(base *Map, id int32) error { return inc.Reweight(base, id, WeightIn) }

// SetPrimaryAffinity sets OSD id's primary affinity (16.16; 0 to
// DefaultPrimaryAffinity).
func (inc *Incremental) SetPrimaryAffinity(base *Map, id int32, affinity uint32) error {
	if affinity > DefaultPrimaryAffinity {
		return fmt.Errorf("osdmap: osd.%d: primary affinity %#x above %#x", id, affinity, DefaultPrimaryAffinity)
	}
	return inc.update(base, id, func(o *OSD) { o.PrimaryAffinity = affinity })
}

// RemoveOSD records that OSD id no longer exists.
func (inc *Incremental) RemoveOSD(base *Map, id int32) error {
	if o := inc.PendingOSD(base, id); !o.Exists() {
		return fmt.Errorf("%w: osd.%d", ErrNoSuchOSD, id)
	}
	return inc.SetOSD(base, id, OSD{})
}

// MarkLost records that OSD id, down, is lost as of epoch: peering stops
// waiting for it in the intervals that began before.
func (inc *Incremental) MarkLost(base *Map, id int32, epoch Epoch) error {
	o := inc.PendingOSD(base, id)
	switch {
	case !o.Exists():
		return fmt.Errorf("%w: osd.%d", ErrNoSuchOSD, id)
	case o.IsUp():
		return fmt.Errorf("osd.%d is up: only a down OSD can be declared lost", id)
	}
	return inc.update(base, id, func(o *OSD) { o.LostAt = epoch })
}

// SetUpThru records that OSD id, up, has gone active in intervals up to
// epoch (its up_thru; it never moves back).
func (inc *Incremental) SetUpThru(base *Map, id int32, epoch Epoch) error {
	return inc.update(base, id, func(o *OSD) { o.UpThru = max(o.UpThru, epoch) })
}
