package blockstore

// Counter is one of the store's running totals of its internal work, for
// monitoring: Name is short and snake_case, Help says what it counts.
type Counter struct {
	Name, Help string
	Value      uint64
}

// Counters returns the store's running totals, the same names in the
// same order on every call (the record cache's are in CacheStats).
func (s *Store) Counters() []Counter {
	dc := s.DataCacheStats()
	return []Counter{
		{"wal_syncs", "Group commits: syncs of the store's metadata write-ahead log.", s.pipe.statSyncs.Load()},
		{"transactions", "Transactions the store's group commits made durable.", s.pipe.statTxns.Load()},
		{"direct_writes", "Copy-on-write data writes the store made with O_DIRECT.", s.dev.statDirectWrites.Load()},
		{"cached_reads", "Small reads the store served through the page cache.", s.dev.statCachedReads.Load()},
		{"stale_cached_reads", "Reads through the page cache that failed their checksums and were read again from the device.", s.dev.statStaleCached.Load()},
		{"readahead_hits", "Large reads the store served from a readahead.", s.dev.statReadahead.Load()},
		{"staged_reads", "Large reads through a huge-page staging buffer.", s.dev.statStaged.Load()},
		{"unstaged_reads", "Large reads that found no staging buffer free and read into ordinary pages.", s.dev.statUnstaged.Load()},
		{"filtered_lookups", "Lookups of object records that the key filter showed absent without reading the metadata database.", s.statFilterSkips.Load()},
		{"deferred_wal_rotations", "WALs the store ended early because they carried 64 MiB of deferred small-write data.", s.pipe.statWALRotations.Load()},
		{"key_filter_builds", "Key filters built: one after the store opens, another whenever more objects were created than the filter was sized for.", s.statFilterBuilds.Load()},
		{"data_cache_hits", "Checksum blocks reads found in the store's data cache (osd_cache_size).", dc.Hits},
		{"data_cache_misses", "Checksum blocks reads looked for in the data cache and read from the data file.", dc.Misses},
		{"data_cache_fills", "Checksum blocks reads put in the data cache.", dc.Fills},
		{"data_cache_refused_fills", "Fills of the data cache given up because the data file was written in their range meanwhile.", dc.Refused},
		{"data_cache_invalidations", "Checksum blocks writes to the data file removed from the data cache.", dc.Invalidated},
	}
}
