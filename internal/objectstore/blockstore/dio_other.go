//go:build !linux

package blockstore

import "os"

// openDirect returns nil: direct reads are implemented on Linux only.
func openDirect(string) *os.File { return nil }

func adviseRandom(uintptr) {}

func (s *Store) dropCached(uint64, int) {}

func (s *Store) startWriteback(uint64, uint64) {}

func (s *Store) writeVectored(bufs [][]byte, off uint64) error { return s.writeEach(bufs, off) }
