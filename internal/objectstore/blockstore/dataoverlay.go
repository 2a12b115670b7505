package blockstore

import "sync"

// dataOverlay holds checksum blocks whose contents are not yet on the
// data file: copy-on-write data of queued transactions (until the
// committer has written it) and deferred writes (until applied in
// place). Each block keeps its versions in transaction order, so that
// Queue sees the newest and readers see the newest applied one.
type dataOverlay struct {
	mu sync.Mutex
	m  map[uint64][]blockVersion // device offset of a checksum block -> versions, oldest first
}

type blockVersion struct {
	seq  uint64
	data []byte // immutable
}

func (d *dataOverlay) init() { d.m = make(map[uint64][]blockVersion) }

func (d *dataOverlay) put(seq, devOff uint64, data []byte) {
	d.mu.Lock()
	d.m[devOff] = append(d.m[devOff], blockVersion{seq, data})
	d.mu.Unlock()
}

// latest returns the newest version of the block.
func (d *dataOverlay) latest(devOff uint64) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.m[devOff]
	if len(v) == 0 {
		return nil, false
	}
	return v[len(v)-1].data, true
}

// visible returns the newest version written by a transaction at or
// before seq.
func (d *dataOverlay) visible(devOff, seq uint64) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.m[devOff]
	for i := len(v) - 1; i >= 0; i-- {
		if v[i].seq <= seq {
			return v[i].data, true
		}
	}
	return nil, false
}

// drop forgets the versions of the block written at or before seq, once
// the file holds them (or newer).
func (d *dataOverlay) drop(devOff, seq uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.m[devOff]
	i := 0
	for i < len(v) && v[i].seq <= seq {
		i++
	}
	if i == len(v) {
		delete(d.m, devOff)
		return
	}
	d.m[devOff] = v[i:]
}

func (d *dataOverlay) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.m)
}

// any reports whether the overlay holds any block.
func (d *dataOverlay) any() bool { return d.len() > 0 }
