package osdmap

import "errors"

// Error classes; test for them with errors.Is. Decoding errors also match
// package encoding's sentinels (ErrTruncated, ErrCorrupt, ...).
var (
	// ErrInvalidMap is wrapped by every error New, Apply and the decoders
	// return for a map or incremental that breaks an invariant.
	ErrInvalidMap = errors.New("osdmap: invalid map")
	// ErrWrongEpoch means an incremental is not for the epoch after the
	// map's: it is stale, or a later one arrived first.
	ErrWrongEpoch = errors.New("osdmap: incremental is not for the next epoch")
	// ErrWrongCluster means an incremental carries another cluster's fsid.
	ErrWrongCluster = errors.New("osdmap: incremental is for another cluster")
	// ErrNoSuchPool means a pool id or name is not in the map.
	ErrNoSuchPool = errors.New("osdmap: no such pool")
	// ErrNoSuchOSD means an OSD does not exist in the map.
	ErrNoSuchOSD = errors.New("osdmap: no such osd")
)
