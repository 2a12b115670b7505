package mdsmap

import (
	"errors"
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
)

// ErrCorrupt wraps every decoding failure (and encoding.ErrCorrupt or
// ErrTruncated below it).
var ErrCorrupt = errors.New("mdsmap: corrupt map")

// MarshalBinary encodes the map, file systems and daemons in id order,
// so equal maps encode to equal bytes:
//
//	envelope v1 (compat 1) {
//	  epoch u32, next_fsid varint, next_gid uvarint,
//	  file systems: count uvarint, each envelope v1 {
//	    id varint, name string, metadata_pool varint,
//	    data_pools count uvarint, varint each,
//	    max_mds uvarint, standby_count_wanted uvarint, flags uvarint,
//	    session_timeout_ms uvarint, session_autoclose_ms uvarint,
//	    created u32, modified u32,
//	    in count uvarint, varint each; up count uvarint, each rank varint, gid uvarint;
//	    damaged count uvarint, varint each }
//	  daemons: count uvarint, each envelope v1 {
//	    gid uvarint, name string, addr string, nonce u64, state u8, fs varint,
//	    rank varint, join_fs string, since u32 }
//	}
func (m *Map) MarshalBinary() ([]byte, error) {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint32(uint32(m.Epoch))
	e.Varint(int64(m.NextFSID))
	e.Uvarint(uint64(m.NextGID))
	ids := m.FSIDs()
	e.Uvarint(uint64(len(ids)))
	for _, id := range ids {
		encodeFS(&e, m.FS[id])
	}
	gids := m.GIDs()
	e.Uvarint(uint64(len(gids)))
	for _, g := range gids {
		d := m.Daemons[g]
		dm := e.Begin(1, 1)
		e.Uvarint(uint64(d.GID))
		e.String(d.Name)
		e.String(d.Addr)
		e.Uint64(d.Nonce)
		e.Uint8(uint8(d.State))
		e.Varint(int64(d.FS))
		e.Varint(int64(d.Rank))
		e.String(d.JoinFS)
		e.Uint32(uint32(d.Since))
		e.End(dm)
	}
	e.End(mk)
	return e.Data(), nil
}

func encodeFS(e *encoding.Encoder, f *FS) {
	mk := e.Begin(1, 1)
	e.Varint(int64(f.ID))
	e.String(f.Name)
	e.Varint(f.MetadataPool)
	e.Uvarint(uint64(len(f.DataPools)))
	for _, p := range f.DataPools {
		e.Varint(p)
	}
	e.Uvarint(uint64(f.MaxMDS))
	e.Uvarint(uint64(f.StandbyWanted))
	e.Uvarint(uint64(f.Flags))
	e.Uvarint(uint64(f.SessionTimeout / time.Millisecond))
	e.Uvarint(uint64(f.SessionAutoclose / time.Millisecond))
	e.Uint32(uint32(f.Created))
	e.Uint32(uint32(f.Modified))
	e.Uvarint(uint64(len(f.In)))
	for _, r := range f.In {
		e.Varint(int64(r))
	}
	e.Uvarint(uint64(len(f.Up)))
	for _, r := range f.In {
		if g, ok := f.Up[r]; ok {
			e.Varint(int64(r))
			e.Uvarint(uint64(g))
		}
	}
	e.Uvarint(uint64(len(f.Damaged)))
	for _, r := range f.Damaged {
		e.Varint(int64(r))
	}
	e.End(mk)
}

// maxMillis bounds decoded durations (about 24 days).
const maxMillis = 1 << 31

// Unmarshal decodes a map and checks its invariants; hostile input gives
// an error wrapping ErrCorrupt, never a panic.
func Unmarshal(b []byte) (*Map, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := &Map{Epoch: Epoch(d.Uint32()), NextFSID: FSID(smallInt(d, 1<<31)), NextGID: GID(d.Uvarint()),
		FS: map[FSID]*FS{}, Daemons: map[GID]*Daemon{}}
	n := d.Count(8)
	if n > MaxFS {
		d.Fail(fmt.Errorf("%w: %d file systems", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		f := decodeFS(d)
		if d.Err() == nil && m.FS[f.ID] != nil {
			d.Fail(fmt.Errorf("%w: file system %d twice", encoding.ErrCorrupt, f.ID))
		}
		m.FS[f.ID] = f
	}
	n = d.Count(8)
	if n > MaxDaemons {
		d.Fail(fmt.Errorf("%w: %d daemons", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		d.Begin(1)
		dm := &Daemon{GID: GID(d.Uvarint()), Name: d.String(MaxName), Addr: d.String(MaxAddr), Nonce: d.Uint64(), State: State(d.Uint8()),
			FS: FSID(smallInt(d, 1<<31)), Rank: Rank(smallInt(d, MaxRanks)), JoinFS: d.String(MaxName), Since: Epoch(d.Uint32())}
		d.End()
		if d.Err() == nil && m.Daemons[dm.GID] != nil {
			d.Fail(fmt.Errorf("%w: gid %d twice", encoding.ErrCorrupt, dm.GID))
		}
		m.Daemons[dm.GID] = dm
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return m, nil
}

// smallInt reads a varint that must lie in (-lim, lim).
func smallInt(d *encoding.Decoder, lim int64) int64 {
	v := d.Varint()
	if d.Err() == nil && (v <= -lim || v >= lim) {
		d.Fail(fmt.Errorf("%w: %d out of range", encoding.ErrCorrupt, v))
	}
	return v
}

func decodeFS(d *encoding.Decoder) *FS {
	d.Begin(1)
	defer d.End()
	f := &FS{ID: FSID(smallInt(d, 1<<31)), Name: d.String(MaxName), MetadataPool: d.Varint(), Up: map[Rank]GID{}}
	n := d.Count(1)
	if n > MaxPools {
		d.Fail(fmt.Errorf("%w: %d data pools", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		f.DataPools = append(f.DataPools, d.Varint())
	}
	f.MaxMDS, f.StandbyWanted = int(bounded(d, MaxRanks)), int(bounded(d, MaxStandby))
	f.Flags = Flags(bounded(d, 1<<32-1))
	f.SessionTimeout = time.Duration(bounded(d, maxMillis)) * time.Millisecond
	f.SessionAutoclose = time.Duration(bounded(d, maxMillis)) * time.Millisecond
	f.Created, f.Modified = Epoch(d.Uint32()), Epoch(d.Uint32())
	n = d.Count(1)
	if n > MaxRanks {
		d.Fail(fmt.Errorf("%w: %d ranks in", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		f.In = append(f.In, Rank(smallInt(d, MaxRanks)))
	}
	n = d.Count(2)
	if n > MaxRanks {
		d.Fail(fmt.Errorf("%w: %d ranks up", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		r, g := Rank(smallInt(d, MaxRanks)), GID(d.Uvarint())
		if _, dup := f.Up[r]; dup && d.Err() == nil {
			d.Fail(fmt.Errorf("%w: rank %d up twice", encoding.ErrCorrupt, r))
		}
		f.Up[r] = g
	}
	n = d.Count(1)
	if n > MaxRanks {
		d.Fail(fmt.Errorf("%w: %d ranks damaged", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		f.Damaged = append(f.Damaged, Rank(smallInt(d, MaxRanks)))
	}
	return f
}

// bounded reads a uvarint of at most lim.
func bounded(d *encoding.Decoder, lim uint64) uint64 {
	v := d.Uvarint()
	if d.Err() == nil && v > lim {
		d.Fail(fmt.Errorf("%w: %d over %d", encoding.ErrCorrupt, v, lim))
	}
	return v
}
