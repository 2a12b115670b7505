package pgmon

// What the autoscaler (internal/mon/autoscalemon, through the daemon's
// wiring) reads of the statistics: the same figures as "df".

// PoolStored returns each pool's stored bytes (one copy), summed over its
// PGs' last reports: "df"'s STORED.
func (s *Service) PoolStored() map[int64]int64 {
	sums := s.poolSums()
	out := make(map[int64]int64, len(sums))
	for pool, sum := range sums {
		out[pool] = sum.bytes
	}
	return out
}

// poolSum is what the PG statistics count in one pool.
type poolSum struct{ objects, bytes int64 }

// poolSums adds up the PG statistics by pool (df, the autoscaler, the
// MDS map's check of a new file system's pools).
func (s *Service) poolSums() map[int64]poolSum {
	out := map[int64]poolSum{}
	for _, e := range s.st.pgs {
		p := out[e.stat.PG.Pool]
		p.objects += e.stat.Objects
		p.bytes += e.stat.Bytes
		out[e.stat.PG.Pool] = p
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
