//go:build !linux

package dio

// mapStaging returns nil: large reads use Go buffers off Linux.
func mapStaging() (mapping, buf []byte) { return nil, nil }

func unmapStaging([]byte) {}

// MapMemory returns n bytes of zeroed memory (from the Go heap here).
func MapMemory(n int) (mapping, buf []byte) {
	b := make([]byte, n)
	return b, b
}

// UnmapMemory releases a mapping from MapMemory (nothing to do here).
func UnmapMemory([]byte) {}
