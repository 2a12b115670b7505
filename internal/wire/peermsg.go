package wire

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Peering and recovery between the OSDs of a PG (internal/osd/recovery.go).
// Every message names the PG and the interval it belongs to (the sender's
// epoch and the epoch the interval began); a receiver in another interval
// ignores it.

// PGInterval names a PG in one interval.
type PGInterval struct {
	PG            osdmap.PG
	Epoch         uint64 // the sender's map epoch
	IntervalStart uint64 // the epoch the PG's interval began
}

func (h PGInterval) encode(e *encoding.Encoder) {
	e.Varint(h.PG.Pool)
	e.Uint32(h.PG.Seed)
	e.Uvarint(h.Epoch)
	e.Uvarint(h.IntervalStart)
}

func decodePGInterval(d *encoding.Decoder) PGInterval {
	return PGInterval{PG: osdmap.PG{Pool: d.Varint(), Seed: d.Uint32()}, Epoch: d.Uvarint(), IntervalStart: d.Uvarint()}
}

// PGQuery asks a member of the PG for its info and log (answered by
// PGNotify).
type PGQuery struct{ PGInterval }

// PGInfo gives a replica the primary's info of the PG in the interval it
// names (Ceph's MOSDPGInfo, share_pg_info): the primary sends it when it
// records snapshots as trimmed (purged snaps) without a write that would
// carry its info. Info is a pglog.Info's encoding.
type PGInfo struct {
	PGInterval
	Info []byte
}

// PGRemove tells an OSD outside the acting set (a stray) that the PG is
// active and clean without it: it may delete its copy.
type PGRemove struct{ PGInterval }

// PGNotify answers PGQuery: the member's encoded pglog.Info, its log
// entries, oldest first, and the objects its log says it has but its
// store lacks (recovery behind client I/O had not reached them yet).
type PGNotify struct {
	PGInterval
	Info    []byte
	Log     [][]byte
	Missing []objid.ID
}

// PGPull asks a member of the PG to push the objects listed. All is
// kept in the encoding but no longer sent (a primary that needs every
// object asks for pg_temp instead); members ignore it. Search says the
// primary searches for a copy outside the members whose copy is
// current (for an unfound object, or an older copy to revert it to):
// the OSD pushes whatever readable copy it holds, even of an object its
// missing set lists, and the primary checks the version; without it an
// OSD refuses the objects it lists as missing.
type PGPull struct {
	PGInterval
	Objects []objid.ID
	All     bool
	Search  bool
}

// PGPush carries an object's whole state to a member that must match the
// sender's copy: Exists false means the member must not have it.
type PGPush struct {
	PGInterval
	Object     objid.ID
	Exists     bool
	Data       []byte
	Attrs      []KV
	OmapHeader []byte
	Omap       []KV
}

// PGActivate tells a member to adopt the authoritative info and log and
// to remember Missing, the objects the primary will push to it after the
// PG goes active. With Backfill, Missing lists every object of the PG
// and Versions (if not empty) the primary's version of each: the member
// keeps the copies it holds at that version, removes every other object
// of the PG it holds, and answers with the ones it kept (PGAck.Current).
type PGActivate struct {
	PGInterval
	Info     []byte
	Log      [][]byte
	Backfill bool
	Missing  []objid.ID
	Versions []Version
}

// PGAck says a PGPush (Object set) or PGActivate (Activate) is committed
// (Result 0) or failed (a negated errno). Current, for a backfill's
// activation, lists the objects the member holds at the primary's
// version already: they are not pushed.
type PGAck struct {
	PGInterval
	Object   objid.ID
	Activate bool
	Result   int32
	Current  []objid.ID
}

// maxLogEntries bounds the entries a PGNotify or PGActivate carries.
const maxLogEntries = 1 << 20

func encodeLog(e *encoding.Encoder, log [][]byte) {
	e.Uvarint(uint64(len(log)))
	for _, b := range log {
		e.Bytes(b)
	}
}

func decodeLog(d *encoding.Decoder) [][]byte {
	n := d.Count(1)
	if n > maxLogEntries {
		d.Fail(fmt.Errorf("%w: %d log entries", encoding.ErrCorrupt, n))
	}
	if n == 0 || d.Err() != nil {
		return nil
	}
	out := make([][]byte, n)
	for i := 0; i < n && d.Err() == nil; i++ {
		out[i] = d.Bytes(maxEntryBytes)
	}
	return out
}

// encodeObjects writes a count and the objects.
func encodeObjects(e *encoding.Encoder, objs []objid.ID) {
	e.Uvarint(uint64(len(objs)))
	for _, id := range objs {
		id.Encode(e)
	}
}

// decodeObjects reads what encodeObjects wrote (nil for none).
func decodeObjects(d *encoding.Decoder) []objid.ID {
	n := d.Count(1)
	if n > maxEntries {
		d.Fail(fmt.Errorf("%w: %d objects", encoding.ErrCorrupt, n))
		return nil
	}
	if n == 0 || d.Err() != nil {
		return nil
	}
	out := make([]objid.ID, n)
	for i := 0; i < n && d.Err() == nil; i++ {
		out[i] = objid.Decode(d)
	}
	return out
}

// Encode encodes m (version 1).
func (m PGQuery) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	m.encode(&e)
	e.End(mk)
	return e.Data()
}

// DecodePGQuery decodes a PGQuery.
func DecodePGQuery(b []byte) (PGQuery, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := PGQuery{decodePGInterval(d)}
	d.End()
	if err := d.Finish(); err != nil {
		return PGQuery{}, fmt.Errorf("wire: pg query: %w", err)
	}
	return m, nil
}

// Encode encodes m: version 1: interval, info, log; version 2 adds the
// missing objects.
func (m PGNotify) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	m.encode(&e)
	e.Bytes(m.Info)
	encodeLog(&e, m.Log)
	encodeObjects(&e, m.Missing)
	e.End(mk)
	return e.Data()
}

// DecodePGNotify decodes a PGNotify.
func DecodePGNotify(b []byte) (PGNotify, error) {
	d := encoding.NewDecoder(b)
	version := d.Begin(2)
	m := PGNotify{PGInterval: decodePGInterval(d), Info: d.Bytes(maxEntryBytes)}
	m.Log = decodeLog(d)
	if version >= 2 {
		m.Missing = decodeObjects(d)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return PGNotify{}, fmt.Errorf("wire: pg notify: %w", err)
	}
	return m, nil
}

// Encode encodes m: version 1: interval, objects, all; version 2 adds
// search (an OSD of version 1 ignores it, and refuses what it lacks).
func (m PGPull) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	m.encode(&e)
	encodeObjects(&e, m.Objects)
	e.Bool(m.All)
	e.Bool(m.Search)
	e.End(mk)
	return e.Data()
}

// DecodePGPull decodes a PGPull.
func DecodePGPull(b []byte) (PGPull, error) {
	d := encoding.NewDecoder(b)
	version := d.Begin(2)
	m := PGPull{PGInterval: decodePGInterval(d)}
	m.Objects = decodeObjects(d)
	m.All = d.Bool()
	if version >= 2 {
		m.Search = d.Bool()
	}
	d.End()
	if err := d.Finish(); err != nil {
		return PGPull{}, fmt.Errorf("wire: pg pull: %w", err)
	}
	return m, nil
}

// Encode encodes m (version 1).
func (m PGPush) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	m.encode(&e)
	m.Object.Encode(&e)
	e.Bool(m.Exists)
	e.Bytes(m.Data)
	encodeKVs(&e, m.Attrs)
	e.Bytes(m.OmapHeader)
	encodeKVs(&e, m.Omap)
	e.End(mk)
	return e.Data()
}

// DecodePGPush decodes a PGPush; Data aliases b.
func DecodePGPush(b []byte) (PGPush, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := PGPush{PGInterval: decodePGInterval(d), Object: objid.Decode(d), Exists: d.Bool()}
	m.Data = d.BytesRef(maxOpData)
	m.Attrs = decodeKVs(d)
	m.OmapHeader = d.Bytes(maxOpData)
	m.Omap = decodeKVs(d)
	d.End()
	if err := d.Finish(); err != nil {
		return PGPush{}, fmt.Errorf("wire: pg push: %w", err)
	}
	return m, nil
}

// Encode encodes m: version 1: interval, info, log, backfill; version
// 2 adds the missing objects; version 3 their versions.
func (m PGActivate) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(3, 1)
	m.encode(&e)
	e.Bytes(m.Info)
	encodeLog(&e, m.Log)
	e.Bool(m.Backfill)
	encodeObjects(&e, m.Missing)
	e.Uvarint(uint64(len(m.Versions)))
	for _, v := range m.Versions {
		e.Uvarint(v.Epoch)
		e.Uvarint(v.Counter)
	}
	e.End(mk)
	return e.Data()
}

// DecodePGActivate decodes a PGActivate.
func DecodePGActivate(b []byte) (PGActivate, error) {
	d := encoding.NewDecoder(b)
	version := d.Begin(2)
	m := PGActivate{PGInterval: decodePGInterval(d), Info: d.Bytes(maxEntryBytes)}
	m.Log = decodeLog(d)
	m.Backfill = d.Bool()
	if version >= 2 {
		m.Missing = decodeObjects(d)
	}
	if version >= 3 {
		n := d.Count(2)
		if n != 0 && n != len(m.Missing) && d.Err() == nil {
			d.Fail(fmt.Errorf("%w: %d versions for %d objects", encoding.ErrCorrupt, n, len(m.Missing)))
		}
		for i := 0; i < n && d.Err() == nil; i++ {
			m.Versions = append(m.Versions, Version{Epoch: d.Uvarint(), Counter: d.Uvarint()})
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return PGActivate{}, fmt.Errorf("wire: pg activate: %w", err)
	}
	return m, nil
}

// Encode encodes m: version 1: interval, object, activate, result;
// version 2 adds the current objects.
func (m PGAck) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	m.encode(&e)
	m.Object.Encode(&e)
	e.Bool(m.Activate)
	e.Varint(int64(m.Result))
	encodeObjects(&e, m.Current)
	e.End(mk)
	return e.Data()
}

// DecodePGAck decodes a PGAck.
func DecodePGAck(b []byte) (PGAck, error) {
	d := encoding.NewDecoder(b)
	version := d.Begin(2)
	m := PGAck{PGInterval: decodePGInterval(d), Object: objid.Decode(d), Activate: d.Bool()}
	m.Result = decodeResult(d)
	if version >= 2 {
		m.Current = decodeObjects(d)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return PGAck{}, fmt.Errorf("wire: pg ack: %w", err)
	}
	return m, nil
}

// Encode encodes m (version 1).
func (m PGRemove) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	m.encode(&e)
	e.End(mk)
	return e.Data()
}

// DecodePGRemove decodes a PGRemove.
func DecodePGRemove(b []byte) (PGRemove, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := PGRemove{decodePGInterval(d)}
	d.End()
	if err := d.Finish(); err != nil {
		return PGRemove{}, fmt.Errorf("wire: pg remove: %w", err)
	}
	return m, nil
}

// Encode encodes m (version 1: the interval, then the info's bytes).
func (m PGInfo) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	m.encode(&e)
	e.Bytes(m.Info)
	e.End(mk)
	return e.Data()
}

// DecodePGInfo decodes a PGInfo.
func DecodePGInfo(b []byte) (PGInfo, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := PGInfo{PGInterval: decodePGInterval(d), Info: d.Bytes(maxEntryBytes)}
	d.End()
	if err := d.Finish(); err != nil {
		return PGInfo{}, fmt.Errorf("wire: pg info: %w", err)
	}
	return m, nil
}
