package pgmon

// What the autoscaler (internal/mon/autoscalemon, through the daemon's
// wiring) reads of the statistics: the same figures as "df".

// PoolStored returns each pool's stored bytes (one copy), summed over its
// PGs' last reports: "df"'s STORED.
func (s *Service) PoolStored() map[int64]int64 {
	out := map[int64]int64{}
	for _, e := range s.st.pgs {
		out[e.stat.PG.Pool] += e.stat.Bytes
	}
	return out
}

// OSDCapacity returns the size in bytes of every OSD's store as it last
// reported it, up or down: the physical space a CRUSH root offers, as
// Ceph's autoscaler counts it.
func (s *Service) OSDCapacity() map[int32]uint64 {
	out := make(map[int32]uint64, len(s.st.osds))
	for id, u := range s.st.osds {
		out[id] = u.total
	}
	return out
}
