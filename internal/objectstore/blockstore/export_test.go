package blockstore

// GroupStats returns how many commit groups s has committed and how many
// transactions they held.
func GroupStats(s *Store) (groups, txns uint64) {
	return s.statSyncs.Load(), s.statTxns.Load()
}
