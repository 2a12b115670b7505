package blockstore

// GroupStats returns how many commit groups s has committed and how many
// transactions they held.
func GroupStats(s *Store) (groups, txns uint64) {
	return s.pipe.statSyncs.Load(), s.pipe.statTxns.Load()
}

// RecordCacheBytes returns what the record cache counts against its
// budget.
func RecordCacheBytes(s *Store) int64 { return s.cache.usedBytes() }

// DirectWrites returns how many copy-on-write writes went with O_DIRECT.
func DirectWrites(s *Store) uint64 { return s.dev.statDirectWrites.Load() }

// ReadaheadHits returns how many large reads a prefetch served.
func ReadaheadHits(s *Store) uint64 { return s.dev.statReadahead.Load() }

// WaitKeyFilter waits for a running key filter build to finish.
func WaitKeyFilter(s *Store) { s.filterBuilds.Wait() }
