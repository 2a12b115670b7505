package osdmap

import (
	"bytes"
	"fmt"
	"math"
	"time"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/encoding"
)

// Cuttle's binary form of maps and incrementals (not Ceph's). Each is one
// envelope (version, compat, length); MarshalBinary prefixes a magic so
// files can be told apart. Integers are varints unless noted, PGs are
// (pool varint, seed uvarint), OSD lists are a count and varints, and
// every keyed collection is written in key order, so equal maps encode to
// equal bytes. The CRUSH map is embedded as crush.Map.MarshalBinary wrote
// it. Decoders rebuild the map with New, so whatever decodes is valid.

var (
	mapMagic = []byte("OSDM")
	incMagic = []byte("OSDI")
)

const (
	mapVersion  = 3
	incVersion  = 3
	osdVersion  = 3
	poolVersion = 7
)

// Encode appends m to e:
//
//	version 1: epoch u32, fsid 16 bytes, created, modified (seconds varint,
//	nanoseconds uvarint), flags, pool_max, crush (bytes), OSDs (count,
//	then one envelope each), pools (count, one envelope each), pg_temp,
//	primary_temp, pg_upmap, pg_upmap_items (count, then entries)
//	version 2 (compat 1) appends: nearfull_ratio, backfillfull_ratio,
//	full_ratio (float32 bits, u32 each). A version 1 map decodes with
//	the default ratios; a version 1 decoder skips them.
//	version 3 (compat 1) appends the blocklist: count, then address
//	string and expiry time each, in address order. An older map has
//	none; an older decoder skips it.
func (m *Map) Encode(e *encoding.Encoder) error {
	crushBytes, err := m.crush.MarshalBinary()
	if err != nil {
		return fmt.Errorf("osdmap: encode epoch %d: %w", m.epoch, err)
	}
	mark := e.Begin(mapVersion, 1)
	e.Uint32(uint32(m.epoch))
	encodeFSID(e, m.fsid)
	encodeTime(e, m.created)
	encodeTime(e, m.modified)
	e.Uvarint(uint64(m.flags))
	e.Varint(m.poolMax)
	e.Bytes(crushBytes)
	e.Uvarint(uint64(len(m.osds)))
	for i := range m.osds {
		encodeOSD(e, &m.osds[i])
	}
	e.Uvarint(uint64(len(m.pools)))
	for i := range m.pools {
		encodePool(e, &m.pools[i])
	}
	encodeListMap(e, m.pgTemp, encodeOSDList)
	e.Uvarint(uint64(len(m.primaryTemp)))
	for _, pg := range sortedPGs(m.primaryTemp) {
		encodePG(e, pg)
		e.Varint(int64(m.primaryTemp[pg]))
	}
	encodeListMap(e, m.pgUpmap, encodeOSDList)
	encodeListMap(e, m.pgUpmapItems, encodeUpmapItems)
	encodeRatio(e, m.ratios.NearFull)
	encodeRatio(e, m.ratios.BackfillFull)
	encodeRatio(e, m.ratios.Full)
	encodeBlocklist(e, m.blocklist)
	e.End(mark)
	return nil
}

// DecodeMap reads a map written by Encode and validates it. Errors are
// recorded in d; on error DecodeMap returns nil.
func DecodeMap(d *encoding.Decoder) *Map {
	var s Spec
	version := d.Begin(mapVersion)
	s.Epoch = Epoch(d.Uint32())
	s.FSID = decodeFSID(d)
	s.Created = decodeTime(d)
	s.Modified = decodeTime(d)
	s.Flags = Flags(decodeU32(d))
	s.PoolMax = d.Varint()
	s.Crush = decodeCrush(d)
	s.OSDs = make([]OSD, d.Count(13)) // an envelope of 7 fields
	for i := range s.OSDs {
		s.OSDs[i] = decodeOSD(d)
	}
	s.Pools = make([]Pool, d.Count(16))
	for i := range s.Pools {
		s.Pools[i] = decodePool(d)
	}
	s.PGTemp = decodeListMap(d, decodeOSDList)
	n := d.Count(3)
	s.PrimaryTemp = make(map[PG]int32, n)
	for range n {
		pg := decodePG(d)
		if _, dup := s.PrimaryTemp[pg]; dup {
			d.Fail(fmt.Errorf("osdmap: primary_temp %s twice: %w", pg, encoding.ErrCorrupt))
		}
		s.PrimaryTemp[pg] = decodeI32(d)
	}
	s.PGUpmap = decodeListMap(d, decodeOSDList)
	s.PGUpmapItems = decodeListMap(d, decodeUpmapItems)
	if version >= 2 {
		s.Ratios = Ratios{NearFull: decodeRatio(d), BackfillFull: decodeRatio(d), Full: decodeRatio(d)}
	}
	if version >= 3 {
		s.Blocklist = decodeBlocklist(d)
	}
	d.End()
	if d.Err() != nil {
		return nil
	}
	m, err := New(s)
	if err != nil {
		d.Fail(fmt.Errorf("%w: %w", encoding.ErrCorrupt, err))
		return nil
	}
	return m
}

// MarshalBinary encodes m with a leading magic, as stored in files.
func (m *Map) MarshalBinary() ([]byte, error) {
	var e encoding.Encoder
	for _, b := range mapMagic {
		e.Uint8(b)
	}
	if err := m.Encode(&e); err != nil {
		return nil, err
	}
	return e.Data(), nil
}

// UnmarshalMap decodes what Map.MarshalBinary wrote.
func UnmarshalMap(data []byte) (*Map, error) {
	if !bytes.HasPrefix(data, mapMagic) {
		return nil, fmt.Errorf("osdmap: decode map: missing magic %q: %w", mapMagic, encoding.ErrCorrupt)
	}
	d := encoding.NewDecoder(data[len(mapMagic):])
	m := DecodeMap(d)
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("osdmap: decode map: %w", err)
	}
	return m, nil
}

// Equal reports whether m and o describe the same map (they encode to the
// same bytes).
func (m *Map) Equal(o *Map) bool {
	a, errA := m.MarshalBinary()
	b, errB := o.MarshalBinary()
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

func encodeFSID(e *encoding.Encoder, f FSID) {
	for _, b := range f {
		e.Uint8(b)
	}
}

func decodeFSID(d *encoding.Decoder) FSID {
	var f FSID
	for i := range f {
		f[i] = d.Uint8()
	}
	return f
}

// Times are kept between years 1 and 9999, so they round-trip exactly.
const (
	minUnix = -62135596800 // 0001-01-01T00:00:00Z, the zero time.Time
	maxUnix = 253402300799 // 9999-12-31T23:59:59Z
)

func encodeTime(e *encoding.Encoder, t time.Time) {
	e.Varint(t.Unix())
	e.Uvarint(uint64(t.Nanosecond()))
}

func decodeTime(d *encoding.Decoder) time.Time {
	sec, nsec := d.Varint(), d.Uvarint()
	if sec < minUnix || sec > maxUnix || nsec >= 1e9 {
		d.Fail(fmt.Errorf("osdmap: time %d.%d out of range: %w", sec, nsec, encoding.ErrCorrupt))
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

func encodeRatio(e *encoding.Encoder, r float32) { e.Uint32(math.Float32bits(r)) }

// decodeRatio reads a ratio; one outside (0, 1] is corrupt.
func decodeRatio(d *encoding.Decoder) float32 {
	r := math.Float32frombits(d.Uint32())
	if d.Err() == nil {
		if err := CheckRatio("ratio", r); err != nil {
			d.Fail(fmt.Errorf("osdmap: %w: %w", err, encoding.ErrCorrupt))
			return 0
		}
	}
	return r
}

func decodeU32(d *encoding.Decoder) uint32 {
	v := d.Uvarint()
	if v > math.MaxUint32 {
		d.Fail(fmt.Errorf("osdmap: %d out of uint32 range: %w", v, encoding.ErrCorrupt))
		return 0
	}
	return uint32(v)
}

func decodeI32(d *encoding.Decoder) int32 {
	v := d.Varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.Fail(fmt.Errorf("osdmap: %d out of int32 range: %w", v, encoding.ErrCorrupt))
		return 0
	}
	return int32(v)
}

// decodeInt reads a uvarint count-like field (sizes), saturating so that
// validation, not conversion, rejects huge values.
func decodeInt(d *encoding.Decoder) int {
	return int(min(d.Uvarint(), math.MaxInt32))
}

func decodeCrush(d *encoding.Decoder) *crush.Map {
	b := d.Bytes(d.Remaining())
	if d.Err() != nil {
		return nil
	}
	c, err := crush.UnmarshalBinary(b)
	if err != nil {
		d.Fail(fmt.Errorf("osdmap: %w", err))
		return nil
	}
	return c
}

// encodeOSD appends an OSD entry:
//
//	version 1: state, weight, primary affinity (uvarints), address,
//	up_from, up_thru, down_at (uvarints)
//	version 2 appends lost_at (uvarint). Compat stays 1: a decoder that
//	skips it waits for a lost OSD, the safe side.
//	version 3 appends the load (disk, CPU, memory: u8 percent each),
//	which an older decoder skips and an older entry decodes without
//	(all 0: idle).
func encodeOSD(e *encoding.Encoder, o *OSD) {
	mark := e.Begin(osdVersion, 1)
	e.Uvarint(uint64(o.State))
	e.Uvarint(uint64(o.Weight))
	e.Uvarint(uint64(o.PrimaryAffinity))
	e.String(o.Addr)
	e.Uvarint(uint64(o.UpFrom))
	e.Uvarint(uint64(o.UpThru))
	e.Uvarint(uint64(o.DownAt))
	e.Uvarint(uint64(o.LostAt))
	e.Uint8(o.Load.Disk)
	e.Uint8(o.Load.CPU)
	e.Uint8(o.Load.Memory)
	e.End(mark)
}

func decodeOSD(d *encoding.Decoder) OSD {
	var o OSD
	version := d.Begin(osdVersion)
	o.State = OSDState(decodeU32(d))
	o.Weight = decodeU32(d)
	o.PrimaryAffinity = decodeU32(d)
	o.Addr = d.String(MaxNameLen)
	o.UpFrom = Epoch(decodeU32(d))
	o.UpThru = Epoch(decodeU32(d))
	o.DownAt = Epoch(decodeU32(d))
	if version >= 2 {
		o.LostAt = Epoch(decodeU32(d))
	}
	if version >= 3 {
		o.Load = Load{Disk: d.Uint8(), CPU: d.Uint8(), Memory: d.Uint8()}
	}
	d.End()
	return o
}

// encodePool appends a pool:
//
//	version 1: id, name, type, size, min_size, crush_rule, pg_num,
//	pgp_num, flags, last_change
//	version 2 appends the snapshot fields (encodePoolSnaps). A pool with
//	snapshots (snap_seq above 0) carries compat 2, so that a version 1
//	decoder refuses it rather than drop them; one without carries
//	compat 1.
//	version 3 appends pg_num_target and pgp_num_target (uvarints, the
//	effective values: Targets); a version 1 or 2 pool decodes with its
//	targets equal to pg_num and pgp_num (none pending).
//	version 4 appends the autoscaler's settings: pg_autoscale_mode (u8),
//	target_size_bytes (uvarint), target_size_ratio and pg_autoscale_bias
//	(float64 bits, u64 each; bias 0 is the default, 1); an older pool
//	decodes with mode warn, no target and the default bias. They are
//	hints, so compat stays: an older decoder skips them.
//	version 5 appends the merge fields (encodePoolMerge). A pool with a
//	merge pending or recorded carries compat 5, so that an older
//	decoder refuses it rather than let writes reach PGs that merge.
//	version 6 appends the ack mode (u8: 0 all, 1 primary). A pool in
//	ack primary carries compat 6, so that an older decoder refuses it
//	rather than peer without the rule that keeps the writes only its
//	primary acknowledged (docs/OSD.md); an older pool decodes as ack
//	all.
//	version 7 appends the read policy (u8: 0 primary, 1 balance, 2
//	score). A pool with replica reads carries compat 7, so that an older
//	OSD refuses it rather than let its primary show reads a write that
//	is not on every replica yet (docs/OSD.md, "Reading from replicas");
//	an older pool decodes as read_policy primary.
func encodePool(e *encoding.Encoder, p *Pool) {
	compat := uint8(1)
	if p.SnapSeq > 0 {
		compat = 2
	}
	if p.PGNumPending != 0 || p.LastMerge.From != 0 {
		compat = 5
	}
	if p.Ack != AckAll {
		compat = 6
	}
	if p.ReadPolicy != ReadPrimary {
		compat = 7
	}
	mark := e.Begin(poolVersion, compat)
	e.Varint(p.ID)
	e.String(p.Name)
	e.Uint8(uint8(p.Type))
	e.Uvarint(uint64(p.Size))
	e.Uvarint(uint64(p.MinSize))
	e.Varint(int64(p.CrushRule))
	e.Uvarint(uint64(p.PGNum))
	e.Uvarint(uint64(p.PGPNum))
	e.Uvarint(uint64(p.Flags))
	e.Uvarint(uint64(p.LastChange))
	encodePoolSnaps(e, p)
	pgNum, pgpNum := p.Targets()
	e.Uvarint(uint64(pgNum))
	e.Uvarint(uint64(pgpNum))
	e.Uint8(uint8(p.AutoscaleMode))
	e.Uvarint(p.TargetSizeBytes)
	e.Uint64(math.Float64bits(p.TargetSizeRatio))
	e.Uint64(math.Float64bits(p.AutoscaleBias))
	encodePoolMerge(e, p)
	e.Uint8(uint8(p.Ack))
	e.Uint8(uint8(p.ReadPolicy))
	e.End(mark)
}

func decodePool(d *encoding.Decoder) Pool {
	var p Pool
	version := d.Begin(poolVersion)
	p.ID = d.Varint()
	p.Name = d.String(MaxNameLen)
	p.Type = PoolType(d.Uint8())
	p.Size = decodeInt(d)
	p.MinSize = decodeInt(d)
	p.CrushRule = decodeI32(d)
	p.PGNum = decodeU32(d)
	p.PGPNum = decodeU32(d)
	p.Flags = PoolFlags(d.Uvarint())
	p.LastChange = Epoch(decodeU32(d))
	if version >= 2 {
		decodePoolSnaps(d, &p)
	}
	if version >= 3 {
		pgNum, pgpNum := decodeU32(d), decodeU32(d)
		p.SetTargets(pgNum, pgpNum)
	}
	if version >= 4 {
		p.AutoscaleMode = AutoscaleMode(d.Uint8())
		p.TargetSizeBytes = d.Uvarint()
		p.TargetSizeRatio = math.Float64frombits(d.Uint64())
		p.SetBias(math.Float64frombits(d.Uint64()))
	}
	if version >= 5 {
		decodePoolMerge(d, &p)
	}
	if version >= 6 {
		p.Ack = AckMode(d.Uint8())
	}
	if version >= 7 {
		p.ReadPolicy = ReadPolicy(d.Uint8())
	}
	d.End()
	if d.Err() == nil {
		if err := p.validate(); err != nil {
			d.Fail(fmt.Errorf("%w: %w: %w", encoding.ErrCorrupt, ErrInvalidMap, err))
		}
	}
	return p
}

// encodePoolSnaps appends a pool's snapshot fields (pool version 2,
// compat 1; a version 1 pool decodes with none): snap_seq, the snaps
// (count, then id, name, created each), the removed snaps (count, then
// start and length each).
func encodePoolSnaps(e *encoding.Encoder, p *Pool) {
	e.Uvarint(p.SnapSeq)
	e.Uvarint(uint64(len(p.Snaps)))
	for _, s := range p.Snaps {
		e.Uvarint(s.ID)
		e.String(s.Name)
		encodeTime(e, s.Created)
	}
	e.Uvarint(uint64(len(p.RemovedSnaps)))
	for _, iv := range p.RemovedSnaps {
		e.Uvarint(iv.Start)
		e.Uvarint(iv.Len)
	}
}

func decodePoolSnaps(d *encoding.Decoder, p *Pool) {
	p.SnapSeq = d.Uvarint()
	n := d.Count(4)
	if n > MaxPoolSnaps {
		d.Fail(fmt.Errorf("osdmap: pool %d: %d snaps exceed %d: %w", p.ID, n, MaxPoolSnaps, encoding.ErrCorrupt))
		return
	}
	if n > 0 {
		p.Snaps = make([]PoolSnap, n)
		for i := range p.Snaps {
			p.Snaps[i] = PoolSnap{ID: d.Uvarint(), Name: d.String(MaxNameLen), Created: decodeTime(d)}
		}
	}
	n = d.Count(2)
	if n > MaxSnapIntervals {
		d.Fail(fmt.Errorf("osdmap: pool %d: %d removed-snap intervals exceed %d: %w", p.ID, n, MaxSnapIntervals, encoding.ErrCorrupt))
		return
	}
	if n > 0 {
		p.RemovedSnaps = make(SnapIntervals, n)
		for i := range p.RemovedSnaps {
			p.RemovedSnaps[i] = SnapInterval{Start: d.Uvarint(), Len: d.Uvarint()}
		}
	}
}

func encodePG(e *encoding.Encoder, pg PG) {
	e.Varint(pg.Pool)
	e.Uvarint(uint64(pg.Seed))
}

func decodePG(d *encoding.Decoder) PG {
	pg := PG{Pool: d.Varint(), Seed: decodeU32(d)}
	if pg.Pool < 0 {
		d.Fail(fmt.Errorf("osdmap: pg %s: negative pool: %w", pg, encoding.ErrCorrupt))
	}
	return pg
}

func encodeOSDList(e *encoding.Encoder, osds []int32) {
	e.Uvarint(uint64(len(osds)))
	for _, o := range osds {
		e.Varint(int64(o))
	}
}

// decodeOSDList reads an OSD list; an empty list decodes as nil.
func decodeOSDList(d *encoding.Decoder) []int32 {
	n := d.Count(1)
	if n > MaxPoolSize {
		d.Fail(fmt.Errorf("osdmap: osd list of %d exceeds %d: %w", n, MaxPoolSize, encoding.ErrCorrupt))
		return nil
	}
	if n == 0 {
		return nil
	}
	osds := make([]int32, n)
	for i := range osds {
		osds[i] = decodeI32(d)
	}
	return osds
}

func encodeUpmapItems(e *encoding.Encoder, items []UpmapItem) {
	e.Uvarint(uint64(len(items)))
	for _, it := range items {
		e.Varint(int64(it.From))
		e.Varint(int64(it.To))
	}
}

func decodeUpmapItems(d *encoding.Decoder) []UpmapItem {
	n := d.Count(2)
	if n > MaxPoolSize {
		d.Fail(fmt.Errorf("osdmap: %d upmap items exceed %d: %w", n, MaxPoolSize, encoding.ErrCorrupt))
		return nil
	}
	if n == 0 {
		return nil
	}
	items := make([]UpmapItem, n)
	for i := range items {
		items[i] = UpmapItem{From: decodeI32(d), To: decodeI32(d)}
	}
	return items
}

func encodeListMap[T any](e *encoding.Encoder, m map[PG][]T, enc func(*encoding.Encoder, []T)) {
	e.Uvarint(uint64(len(m)))
	for _, pg := range sortedPGs(m) {
		encodePG(e, pg)
		enc(e, m[pg])
	}
}

func decodeListMap[T any](d *encoding.Decoder, dec func(*encoding.Decoder) []T) map[PG][]T {
	n := d.Count(3)
	m := make(map[PG][]T, n)
	for range n {
		pg := decodePG(d)
		if _, dup := m[pg]; dup {
			d.Fail(fmt.Errorf("osdmap: pg %s listed twice: %w", pg, encoding.ErrCorrupt))
		}
		m[pg] = dec(d)
		if d.Err() != nil {
			break
		}
	}
	return m
}

func encodePGList(e *encoding.Encoder, pgs []PG) {
	e.Uvarint(uint64(len(pgs)))
	for _, pg := range pgs {
		encodePG(e, pg)
	}
}

func decodePGList(d *encoding.Decoder) []PG {
	n := d.Count(2)
	if n == 0 {
		return nil
	}
	pgs := make([]PG, n)
	for i := range pgs {
		pgs[i] = decodePG(d)
	}
	return pgs
}
