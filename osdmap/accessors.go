package osdmap

import (
	"time"

	"github.com/cuttlestore/cuttle/crush"
)

// Epoch returns the map's epoch.
func (m *Map) Epoch() Epoch { return m.epoch }

// FSID returns the id of the cluster the map describes.
func (m *Map) FSID() FSID { return m.fsid }

// Created returns when the cluster was created.
func (m *Map) Created() time.Time { return m.created }

// Modified returns when this epoch was made.
func (m *Map) Modified() time.Time { return m.modified }

// Flags returns the cluster-wide flags.
func (m *Map) Flags() Flags { return m.flags }

// Crush returns the CRUSH map.
func (m *Map) Crush() *crush.Map { return m.crush }

// MaxOSD returns one more than the highest OSD id the map has room for.
func (m *Map) MaxOSD() int32 { return int32(len(m.osds)) }

// OSD returns the entry of OSD id; ids out of range give the zero OSD.
func (m *Map) OSD(id int32) OSD {
	if id < 0 || int(id) >= len(m.osds) {
		return OSD{}
	}
	return m.osds[id]
}

// Exists reports whether OSD id exists.
func (m *Map) Exists(id int32) bool {
	return id >= 0 && int(id) < len(m.osds) && m.osds[id].Exists()
}

// IsUp reports whether OSD id exists and is up.
func (m *Map) IsUp(id int32) bool {
	return id >= 0 && int(id) < len(m.osds) && m.osds[id].IsUp()
}

// IsIn reports whether OSD id exists and is in.
func (m *Map) IsIn(id int32) bool {
	return id >= 0 && int(id) < len(m.osds) && m.osds[id].IsIn()
}

// Weights returns the reweight vector CRUSH maps with: each OSD's 16.16
// in/out weight, by id (read-only).
func (m *Map) Weights() []uint32 { return m.weights }

// NumOSDs returns how many OSDs exist, are up and are in.
func (m *Map) NumOSDs() (exist, up, in int) {
	for i := range m.osds {
		o := &m.osds[i]
		if o.Exists() {
			exist++
		}
		if o.IsUp() {
			up++
		}
		if o.IsIn() {
			in++
		}
	}
	return exist, up, in
}

// Pools returns the pools in id order (read-only).
func (m *Map) Pools() []Pool { return m.pools }

// Pool returns pool id, or nil (read-only).
func (m *Map) Pool(id int64) *Pool {
	i, ok := m.poolIndex[id]
	if !ok {
		return nil
	}
	return &m.pools[i]
}

// PoolByName returns the pool called name, or nil (read-only).
func (m *Map) PoolByName(name string) *Pool {
	for i := range m.pools {
		if m.pools[i].Name == name {
			return &m.pools[i]
		}
	}
	return nil
}

// PoolMax returns the highest pool id ever used.
func (m *Map) PoolMax() int64 { return m.poolMax }

// PGTemp returns pg's pg_temp entry, or nil (read-only).
func (m *Map) PGTemp(pg PG) []int32 { return m.pgTemp[pg] }

// PrimaryTemp returns pg's primary_temp entry.
func (m *Map) PrimaryTemp(pg PG) (int32, bool) {
	osd, ok := m.primaryTemp[pg]
	return osd, ok
}

// PGUpmap returns pg's pg_upmap entry, or nil (read-only).
func (m *Map) PGUpmap(pg PG) []int32 { return m.pgUpmap[pg] }

// PGUpmapItems returns pg's pg_upmap_items entry, or nil (read-only).
func (m *Map) PGUpmapItems(pg PG) []UpmapItem { return m.pgUpmapItems[pg] }
