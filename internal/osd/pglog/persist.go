package pglog

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/invariants"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// MetaObject is the object of pg's collection whose omap holds the PG's
// info and log. Its pool is -1-pg.Pool, which no client object has (pools
// are never negative), so listings skip it by pool and it sorts first.
func MetaObject(pg osdmap.PG) objid.ID {
	return objid.New(-1-pg.Pool, "", "", "pgmeta."+pg.String(), objid.NoSnap)
}

// Keys of the meta object's omap.
const (
	infoKey   = "info"
	logPrefix = "log."
	// missingPrefix starts the key of each object the PG's log says
	// this OSD has but its store lacks (hex of the object's encoding);
	// the value is the encoding.
	missingPrefix    = "missing."
	missingPrefixEnd = "missing/"
)

// logKey sorts entries by version: epoch and counter as fixed-width hex.
func logKey(v wire.Version) string {
	b := make([]byte, 0, len(logPrefix)+16+1+16)
	b = appendHex16(append(b, logPrefix...), v.Epoch)
	return string(appendHex16(append(b, '.'), v.Counter))
}

// appendHex16 appends v as 16 lower-case hex digits, as %016x prints it.
func appendHex16(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>uint(shift)&0xf])
	}
	return b
}

// Info is what a PG knows about itself beyond its log.
type Info struct {
	PG           osdmap.PG
	EpochCreated uint64
	// LastUpdate is the newest entry applied here; LastComplete the
	// version up to which every object is up to date (they differ while
	// recovering). LogTail is the log's tail.
	LastUpdate   wire.Version
	LastComplete wire.Version
	LogTail      wire.Version
	// SameIntervalSince is the epoch the current interval (acting set
	// and primary) began; LastEpochStarted the last epoch the PG went
	// active in.
	SameIntervalSince uint64
	LastEpochStarted  uint64
	// Stats counts the PG's objects and their bytes (logical sizes).
	Stats Stats
	// LastScrub and LastDeepScrub are when the last scrub and deep scrub
	// of the PG finished (Unix nanoseconds; 0: never).
	LastScrub, LastDeepScrub int64
	// PurgedSnaps are the removed snapshots the PG has trimmed (Ceph's
	// purged_snaps): no clone of its objects serves one of them. The
	// trim work is the pool's removed snaps less these.
	PurgedSnaps osdmap.SnapIntervals
}

// Equal reports whether i and j are the same info (Info holds a slice,
// so == does not compile).
// The encoding has every field, canonically.
func (i Info) Equal(j Info) bool { return bytes.Equal(i.Encode(), j.Encode()) }

// Stats are a PG's object statistics, kept with its info and updated in
// every write's transaction.
type Stats struct {
	Objects int64
	Bytes   int64
}

// Add returns s changed by one write: an object created or removed
// (existed, exists) and its size before and after.
func (s Stats) Add(existed, exists bool, before, after uint64) Stats {
	if existed {
		s.Objects--
		s.Bytes -= int64(before)
	}
	if exists {
		s.Objects++
		s.Bytes += int64(after)
	}
	return s
}

// Encode encodes i: version 1: pool, seed, epoch created, the three
// versions (epoch, counter each), same interval since, last epoch
// started, objects and bytes (varints); version 2 adds the last scrub
// and deep scrub times (varints); version 3 the purged snaps (a count,
// then start and length of each interval, varints). Compat stays 1: a
// decoder that predates version 3 drops the purged snaps, and its PG
// trims them again (the trim of a trimmed snap finds nothing).
func (i Info) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(3, 1)
	e.Varint(i.PG.Pool)
	e.Uint32(i.PG.Seed)
	e.Uvarint(i.EpochCreated)
	for _, v := range []wire.Version{i.LastUpdate, i.LastComplete, i.LogTail} {
		e.Uvarint(v.Epoch)
		e.Uvarint(v.Counter)
	}
	e.Uvarint(i.SameIntervalSince)
	e.Uvarint(i.LastEpochStarted)
	e.Varint(i.Stats.Objects)
	e.Varint(i.Stats.Bytes)
	e.Varint(i.LastScrub)
	e.Varint(i.LastDeepScrub)
	e.Uvarint(uint64(len(i.PurgedSnaps)))
	for _, iv := range i.PurgedSnaps {
		e.Uvarint(iv.Start)
		e.Uvarint(iv.Len)
	}
	e.End(mk)
	return e.Data()
}

// DecodeInfo decodes what Encode wrote.
func DecodeInfo(b []byte) (Info, error) {
	d := encoding.NewDecoder(b)
	version := d.Begin(3)
	i := Info{PG: osdmap.PG{Pool: d.Varint(), Seed: d.Uint32()}, EpochCreated: d.Uvarint()}
	for _, v := range []*wire.Version{&i.LastUpdate, &i.LastComplete, &i.LogTail} {
		*v = wire.Version{Epoch: d.Uvarint(), Counter: d.Uvarint()}
	}
	i.SameIntervalSince = d.Uvarint()
	i.LastEpochStarted = d.Uvarint()
	i.Stats = Stats{Objects: d.Varint(), Bytes: d.Varint()}
	if version >= 2 {
		i.LastScrub, i.LastDeepScrub = d.Varint(), d.Varint()
	}
	if version >= 3 {
		n := d.Count(2)
		if n > osdmap.MaxSnapIntervals {
			d.Fail(fmt.Errorf("%d purged-snap intervals: %w", n, encoding.ErrCorrupt))
		} else if n > 0 {
			i.PurgedSnaps = make(osdmap.SnapIntervals, n)
			for k := range i.PurgedSnaps {
				i.PurgedSnaps[k] = osdmap.SnapInterval{Start: d.Uvarint(), Len: d.Uvarint()}
			}
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return Info{}, fmt.Errorf("pglog: info: %w", err)
	}
	if err := i.PurgedSnaps.Validate(); err != nil {
		return Info{}, fmt.Errorf("pglog: info: purged snaps: %w: %w", encoding.ErrCorrupt, err)
	}
	return i, nil
}

// Encode encodes e: version 1: version, prior (epoch, counter each),
// kind, object, request (client, incarnation, tid), result.
func (e Entry) Encode() []byte {
	var enc encoding.Encoder
	mk := enc.Begin(1, 1)
	enc.Uvarint(e.Version.Epoch)
	enc.Uvarint(e.Version.Counter)
	enc.Uvarint(e.Prior.Epoch)
	enc.Uvarint(e.Prior.Counter)
	enc.Uint8(uint8(e.Kind))
	e.Object.Encode(&enc)
	enc.String(e.Req.Client)
	enc.Uint64(e.Req.Incarnation)
	enc.Uint64(e.Req.Tid)
	enc.Varint(int64(e.Result))
	enc.End(mk)
	return enc.Data()
}

// maxClient bounds a decoded request's client name.
const maxClient = 256

// DecodeEntry decodes what Encode wrote.
func DecodeEntry(b []byte) (Entry, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	e := Entry{
		Version: wire.Version{Epoch: d.Uvarint(), Counter: d.Uvarint()},
		Prior:   wire.Version{Epoch: d.Uvarint(), Counter: d.Uvarint()},
		Kind:    Kind(d.Uint8()),
		Object:  objid.Decode(d),
		Req:     wire.ReqID{Client: d.String(maxClient), Incarnation: d.Uint64(), Tid: d.Uint64()},
	}
	r := d.Varint()
	d.End()
	if err := d.Finish(); err != nil {
		return Entry{}, fmt.Errorf("pglog: entry: %w", err)
	}
	if e.Kind != Modify && e.Kind != Delete {
		return Entry{}, fmt.Errorf("pglog: entry: %w: kind %d", encoding.ErrCorrupt, e.Kind)
	}
	if r < -1<<31 || r > 0 {
		return Entry{}, fmt.Errorf("pglog: entry: %w: result %d", encoding.ErrCorrupt, r)
	}
	e.Result = int32(r)
	return e, nil
}

// CreateTxn adds to t the creation of pg's collection and meta object
// with info.
func CreateTxn(t *objectstore.Transaction, info Info) {
	c := objectstore.PGCollection(info.PG.Pool, info.PG.Seed)
	t.CreateCollection(c)
	t.Touch(c, MetaObject(info.PG))
	SaveInfoTxn(t, info)
}

// SaveInfoTxn adds to t the update of the PG's persisted info.
func SaveInfoTxn(t *objectstore.Transaction, info Info) {
	c := objectstore.PGCollection(info.PG.Pool, info.PG.Seed)
	t.OmapSetKeys(c, MetaObject(info.PG), map[string][]byte{infoKey: info.Encode()})
}

// AppendTxn adds to t the persisted form of entries of pg's log.
func AppendTxn(t *objectstore.Transaction, pg osdmap.PG, entries ...Entry) {
	kv := make(map[string][]byte, len(entries))
	for _, e := range entries {
		kv[logKey(e.Version)] = e.Encode()
	}
	t.OmapSetKeys(objectstore.PGCollection(pg.Pool, pg.Seed), MetaObject(pg), kv)
}

// TrimTxn adds to t the removal of trimmed entries of pg's log, its
// oldest, in order: one removal of the key range from the first's key
// to just past the last's (the log's keys sort by version, and none
// lies between two consecutive entries'), which the store keeps as one
// range deletion rather than a deleted key per entry.
func TrimTxn(t *objectstore.Transaction, pg osdmap.PG, trimmed []Entry) {
	if len(trimmed) == 0 {
		return
	}
	last := trimmed[len(trimmed)-1].Version
	t.OmapRmKeyRange(objectstore.PGCollection(pg.Pool, pg.Seed), MetaObject(pg),
		logKey(trimmed[0].Version), logKey(wire.Version{Epoch: last.Epoch, Counter: last.Counter + 1}))
}

// ReplaceTxn adds to t the replacement of pg's whole persisted log by
// entries and of its info by info: what a member does when peering
// gives it the authoritative history.
func ReplaceTxn(t *objectstore.Transaction, info Info, entries []Entry) {
	c := objectstore.PGCollection(info.PG.Pool, info.PG.Seed)
	t.OmapRmKeyRange(c, MetaObject(info.PG), logPrefix, logPrefixEnd)
	if len(entries) > 0 {
		AppendTxn(t, info.PG, entries...)
	}
	SaveInfoTxn(t, info)
}

// SetMissingTxn adds to t the recording of ids as missing here.
func SetMissingTxn(t *objectstore.Transaction, pg osdmap.PG, ids ...objid.ID) {
	if len(ids) == 0 {
		return
	}
	kv := make(map[string][]byte, len(ids))
	for _, id := range ids {
		b := encodeObject(id)
		kv[missingPrefix+hex.EncodeToString(b)] = b
	}
	t.OmapSetKeys(objectstore.PGCollection(pg.Pool, pg.Seed), MetaObject(pg), kv)
}

// RecoveredTxn adds to t that id is no longer missing here.
func RecoveredTxn(t *objectstore.Transaction, pg osdmap.PG, id objid.ID) {
	t.OmapRmKeys(objectstore.PGCollection(pg.Pool, pg.Seed), MetaObject(pg), missingPrefix+hex.EncodeToString(encodeObject(id)))
}

// ClearMissingTxn adds to t that nothing is missing here.
func ClearMissingTxn(t *objectstore.Transaction, pg osdmap.PG) {
	t.OmapRmKeyRange(objectstore.PGCollection(pg.Pool, pg.Seed), MetaObject(pg), missingPrefix, missingPrefixEnd)
}

func encodeObject(id objid.ID) []byte {
	var e encoding.Encoder
	id.Encode(&e)
	return e.Data()
}

// LoadMissing reads the objects recorded missing for pg in s.
func LoadMissing(ctx context.Context, s objectstore.Store, pg osdmap.PG) (map[objid.ID]bool, error) {
	c, meta := objectstore.PGCollection(pg.Pool, pg.Seed), MetaObject(pg)
	out := map[objid.ID]bool{}
	for after := ""; ; {
		kvs, more, err := s.OmapIterate(ctx, c, meta, after, missingPrefix, loadBatch)
		if err != nil {
			return nil, fmt.Errorf("pglog: %v: missing set: %w", pg, err)
		}
		for _, kv := range kvs {
			d := encoding.NewDecoder(kv.Value)
			id := objid.Decode(d)
			if err := d.Finish(); err != nil {
				return nil, fmt.Errorf("pglog: %v: %s: %w", pg, kv.Key, err)
			}
			out[id] = true
			after = kv.Key
		}
		if !more {
			return out, nil
		}
	}
}

// logPrefixEnd is the first key after every log key.
const logPrefixEnd = "log/"

// loadBatch is how many log entries Load reads per store call.
const loadBatch = 1024

// Load reads pg's info and log from s. A missing or damaged record is an
// error naming what is wrong; the caller decides whether the PG is lost.
func Load(ctx context.Context, s objectstore.Store, pg osdmap.PG) (Info, *Log, error) {
	c, meta := objectstore.PGCollection(pg.Pool, pg.Seed), MetaObject(pg)
	vals, err := s.OmapGetValues(ctx, c, meta, []string{infoKey})
	if err != nil {
		return Info{}, nil, fmt.Errorf("pglog: %v: %w", pg, err)
	}
	raw, ok := vals[infoKey]
	if !ok {
		return Info{}, nil, fmt.Errorf("pglog: %v: no info record", pg)
	}
	info, err := DecodeInfo(raw)
	if err != nil {
		return Info{}, nil, fmt.Errorf("pglog: %v: %w", pg, err)
	}
	if info.PG != pg {
		return Info{}, nil, fmt.Errorf("pglog: %v: info names pg %v", pg, info.PG)
	}
	log := NewLog(info.LogTail)
	for after := ""; ; {
		kvs, more, err := s.OmapIterate(ctx, c, meta, after, logPrefix, loadBatch)
		if err != nil {
			return Info{}, nil, fmt.Errorf("pglog: %v: %w", pg, err)
		}
		for _, kv := range kvs {
			e, err := DecodeEntry(kv.Value)
			if err != nil {
				return Info{}, nil, fmt.Errorf("pglog: %v: %s: %w", pg, kv.Key, err)
			}
			if err := log.Append(e); err != nil {
				return Info{}, nil, fmt.Errorf("pglog: %v: %s: %w", pg, kv.Key, err)
			}
			after = kv.Key
		}
		if !more {
			break
		}
	}
	if log.Head() != info.LastUpdate && log.Len() > 0 {
		return Info{}, nil, fmt.Errorf("pglog: %v: log head %v but info says last update %v", pg, log.Head(), info.LastUpdate)
	}
	if invariants.Enabled { // once per PG at startup: the whole log
		invariants.Check(log.verify())
	}
	return info, log, nil
}

// ParseLogKey is the inverse of the key AppendTxn writes, for tools.
func ParseLogKey(k string) (wire.Version, bool) {
	if len(k) != len(logPrefix)+33 || k[:len(logPrefix)] != logPrefix || k[len(logPrefix)+16] != '.' {
		return wire.Version{}, false
	}
	ep, err1 := strconv.ParseUint(k[len(logPrefix):len(logPrefix)+16], 16, 64)
	ct, err2 := strconv.ParseUint(k[len(logPrefix)+17:], 16, 64)
	if err1 != nil || err2 != nil {
		return wire.Version{}, false
	}
	return wire.Version{Epoch: ep, Counter: ct}, true
}
