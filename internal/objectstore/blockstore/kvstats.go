package blockstore

import (
	"context"
	"math"

	"github.com/cuttlestore/cuttle/internal/objectstore"
)

// KVStats reports the state of the store's Pebble database
// (objectstore.KVReporter).
func (s *Store) KVStats(ctx context.Context) (objectstore.KVStats, error) {
	if err := s.begin(ctx); err != nil { // the database stays open meanwhile
		return objectstore.KVStats{}, err
	}
	m := s.db.Metrics()
	s.applyMu.RUnlock()
	st := objectstore.KVStats{
		WALFiles:              m.WAL.Files,
		WALFilesHeld:          s.pipe.wals.heldCount(),
		WALBytesIn:            m.WAL.BytesIn,
		WALBytesWritten:       m.WAL.BytesWritten,
		MemTables:             m.MemTable.Count,
		MemTableBytes:         m.MemTable.Size,
		Flushes:               m.Flush.Count,
		Compactions:           m.Compact.Count,
		CompactionsInProgress: m.Compact.NumInProgress,
		CompactionDebtBytes:   m.Compact.EstimatedDebt,
		Tombstones:            m.Keys.TombstoneCount,
		BlockCacheBytes:       m.BlockCache.Size,
		BlockCacheHits:        m.BlockCache.Hits,
		BlockCacheMisses:      m.BlockCache.Misses,
		Report:                m.String(),
	}
	for i, l := range m.Levels {
		st.Levels = append(st.Levels, objectstore.KVLevel{
			Level:        i,
			Sublevels:    l.Sublevels,
			Tables:       l.TablesCount,
			Bytes:        l.TablesSize,
			Score:        finite(l.Score),
			BytesIn:      l.TableBytesIn,
			BytesRead:    l.TableBytesRead,
			BytesWritten: l.TableBytesFlushed + l.TableBytesCompacted,
		})
	}
	return st, nil
}

// finite returns f, or 0 for a NaN or an infinity. Pebble floors the
// divisors of its level scores, so they should be finite, but one that
// is not would fail the JSON encoding of the whole answer.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
