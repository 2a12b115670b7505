//go:build !linux

package dio

// mapStaging returns nil: large reads use Go buffers off Linux.
func mapStaging() (mapping, buf []byte) { return nil, nil }

func unmapStaging([]byte) {}
