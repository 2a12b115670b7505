//go:build !linux

package blockstore

import "os"

// openDirect returns nil: direct reads are implemented on Linux only.
func openDirect(string) *os.File { return nil }

func adviseRandom(uintptr) {}

func (d *dataFile) dropCached(uint64, int) {}

func (d *dataFile) startWriteback(uint64, uint64) {}

func (d *dataFile) writeVectored(bufs [][]byte, off uint64) error { return d.writeEach(bufs, off) }
