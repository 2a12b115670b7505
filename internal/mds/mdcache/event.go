package mdcache

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// Event is one entry of the rank's journal (docs/FORMATS.md, "MDS journal
// events"): the result of one metadata change, as full values, so that
// replaying it over objects that already hold it (or hold a later state
// of the keys it touches, written back by a round that crashed before
// its trim) changes nothing that later events do not set again.
type Event struct {
	// Client and Tid name the request (0, 0 for the engine's own
	// changes: a purge, a flush from a cap message); Op is its
	// operation, Result and CreatedIno its answer, so a request resent
	// after a failover (wire.RequestReplay) is answered, not applied
	// twice. OldestTid is the client's oldest request without a safe
	// reply: completed requests below it are forgotten.
	Client     ClientID
	Tid        uint64
	OldestTid  uint64
	Op         wire.MetaOp
	Result     int32
	CreatedIno mdtypes.Ino
	// Frags are the fragments the change touched, each with its new
	// header and the dentries set (with their inodes) and removed.
	Frags []FragDelta
	// Bases are the base inodes (root, mdsdir) the change touched.
	Bases []*mdtypes.Inode
	// InoAlloc are ranges taken from the rank's inode table, InoFree
	// ranges given back to it.
	InoAlloc []mdtypes.Range
	InoFree  []mdtypes.Range
	// Truncs are the truncations the change began (version 2): the
	// data a file had past its new size is removed after the event is
	// durable, and replay finishes those not recorded done.
	Truncs []Trunc
	// TruncsDone are files whose data was cut (version 2): every
	// truncation of Ino begun by an event at or before journal
	// position Pos is finished.
	TruncsDone []TruncDone
}

// Trunc is a truncation begun: file Ino's data past To, up to From (the
// size it had), is to be removed, striped as Layout.
type Trunc struct {
	Ino      mdtypes.Ino
	From, To uint64
	Layout   layout.Layout
}

// TruncDone says the truncations of Ino begun at journal positions up
// to Pos are finished.
type TruncDone struct {
	Ino mdtypes.Ino
	Pos uint64
}

// FragDelta is what an event changed in one directory fragment.
type FragDelta struct {
	Dir    mdtypes.Ino
	Frag   mdtypes.Frag
	Header mdtypes.FragHeader
	// New: the fragment's object may not exist yet (a new directory).
	New bool
	// Removed: the directory was removed; its object is deleted.
	Removed bool
	Set     []*mdtypes.Dentry
	Remove  []string
}

// Limits the decoder enforces.
const (
	maxEventFrags  = 64      // an event touches a handful of fragments
	maxEventDentry = 1 << 12 // dentries set or removed in one fragment
	maxDentryValue = 2 << 20 // one encoded dentry (an inode with 1 MiB of xattrs)
	maxEventRanges = 1 << 10
	maxEventTruncs = 1 << 10
)

// Marshal encodes e (version 2: version 1 and the truncations; a
// version-1 decoder reads the rest and skips them).
func (e *Event) Marshal() []byte {
	var en encoding.Encoder
	m := en.Begin(2, 1)
	en.Uvarint(uint64(e.Client))
	en.Uvarint(e.Tid)
	en.Uvarint(e.OldestTid)
	en.Uint16(uint16(e.Op))
	en.Varint(int64(e.Result))
	en.Uvarint(uint64(e.CreatedIno))
	en.Uvarint(uint64(len(e.Frags)))
	for i := range e.Frags {
		e.Frags[i].encode(&en)
	}
	en.Uvarint(uint64(len(e.Bases)))
	for _, in := range e.Bases {
		in.Encode(&en)
	}
	encodeRanges(&en, e.InoAlloc)
	encodeRanges(&en, e.InoFree)
	en.Uvarint(uint64(len(e.Truncs)))
	for _, tr := range e.Truncs {
		en.Uint64(uint64(tr.Ino))
		en.Uvarint(tr.From)
		en.Uvarint(tr.To)
		tr.Layout.Encode(&en)
	}
	en.Uvarint(uint64(len(e.TruncsDone)))
	for _, td := range e.TruncsDone {
		en.Uint64(uint64(td.Ino))
		en.Uvarint(td.Pos)
	}
	en.End(m)
	return en.Data()
}

func (f *FragDelta) encode(en *encoding.Encoder) {
	en.Uint64(uint64(f.Dir))
	en.Uint32(uint32(f.Frag))
	en.Bytes(f.Header.Marshal())
	en.Bool(f.New)
	en.Bool(f.Removed)
	en.Uvarint(uint64(len(f.Set)))
	for _, d := range f.Set {
		en.String(d.Name)
		en.Bytes(d.MarshalValue())
	}
	en.Uvarint(uint64(len(f.Remove)))
	for _, n := range f.Remove {
		en.String(n)
	}
}

func encodeRanges(en *encoding.Encoder, rs []mdtypes.Range) {
	en.Uvarint(uint64(len(rs)))
	for _, r := range rs {
		en.Uint64(uint64(r.Start))
		en.Uvarint(r.Len)
	}
}

// UnmarshalEvent decodes and checks what Marshal wrote: names valid,
// inodes valid, no name both set and removed, ranges non-empty.
func UnmarshalEvent(b []byte) (*Event, error) {
	d := encoding.NewDecoder(b)
	e := &Event{}
	v := d.Begin(2)
	e.Client = ClientID(d.Uvarint())
	e.Tid = d.Uvarint()
	e.OldestTid = d.Uvarint()
	e.Op = wire.MetaOp(d.Uint16())
	r := d.Varint()
	if r > 0 || r < -4095 {
		d.Fail(fmt.Errorf("%w: result %d is not 0 or an errno", encoding.ErrCorrupt, r))
	}
	e.Result = int32(r)
	e.CreatedIno = mdtypes.Ino(d.Uvarint())
	if n := d.Count(8); n > maxEventFrags {
		d.Fail(fmt.Errorf("%w: %d fragments in one event", encoding.ErrCorrupt, n))
	} else if n > 0 {
		e.Frags = make([]FragDelta, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			e.Frags[i].decode(d)
		}
	}
	if n := d.Count(8); n > maxEventFrags {
		d.Fail(fmt.Errorf("%w: %d base inodes in one event", encoding.ErrCorrupt, n))
	} else {
		for i := 0; i < n && d.Err() == nil; i++ {
			in := new(mdtypes.Inode)
			in.Decode(d)
			if d.Err() == nil && !mdtypes.IsBase(in.Ino) {
				d.Fail(fmt.Errorf("%w: inode %v is not a base inode", encoding.ErrCorrupt, in.Ino))
			}
			e.Bases = append(e.Bases, in)
		}
	}
	e.InoAlloc = decodeRanges(d)
	e.InoFree = decodeRanges(d)
	if v >= 2 {
		e.decodeTruncs(d)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("mdcache: journal event: %w", err)
	}
	return e, nil
}

func (f *FragDelta) decode(d *encoding.Decoder) {
	f.Dir = mdtypes.Ino(d.Uint64())
	f.Frag = mdtypes.Frag(d.Uint32())
	if d.Err() == nil && !f.Frag.Valid() {
		d.Fail(fmt.Errorf("%w: fragment %#x", encoding.ErrCorrupt, uint32(f.Frag)))
	}
	if raw := d.Bytes(256); d.Err() == nil {
		h, err := mdtypes.UnmarshalFragHeader(raw)
		if err != nil {
			d.Fail(fmt.Errorf("%w: %w", encoding.ErrCorrupt, err))
			return
		}
		f.Header = h
	}
	f.New = d.Bool()
	f.Removed = d.Bool()
	seen := map[string]bool{}
	n := d.Count(2)
	if n > maxEventDentry {
		d.Fail(fmt.Errorf("%w: %d dentries set in one fragment", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		name := d.String(mdtypes.MaxNameLen)
		val := d.Bytes(maxDentryValue)
		if d.Err() != nil {
			return
		}
		if err := mdtypes.ValidateName(name); err != nil || seen[name] {
			d.Fail(fmt.Errorf("%w: dentry %q invalid or twice", encoding.ErrCorrupt, name))
			return
		}
		seen[name] = true
		de, err := mdtypes.UnmarshalDentry(name, val)
		if err != nil {
			d.Fail(fmt.Errorf("%w: dentry %q: %w", encoding.ErrCorrupt, name, err))
			return
		}
		f.Set = append(f.Set, de)
	}
	n = d.Count(1)
	if n > maxEventDentry {
		d.Fail(fmt.Errorf("%w: %d dentries removed in one fragment", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		name := d.String(mdtypes.MaxNameLen)
		if d.Err() != nil {
			return
		}
		if err := mdtypes.ValidateName(name); err != nil || seen[name] {
			d.Fail(fmt.Errorf("%w: removed dentry %q invalid or also set", encoding.ErrCorrupt, name))
			return
		}
		seen[name] = true
		f.Remove = append(f.Remove, name)
	}
}

func decodeRanges(d *encoding.Decoder) []mdtypes.Range {
	n := d.Count(9)
	if n > maxEventRanges {
		d.Fail(fmt.Errorf("%w: %d inode ranges", encoding.ErrCorrupt, n))
		return nil
	}
	var rs []mdtypes.Range
	for i := 0; i < n && d.Err() == nil; i++ {
		r := mdtypes.Range{Start: mdtypes.Ino(d.Uint64()), Len: d.Uvarint()}
		if d.Err() == nil && (r.Len == 0 || r.End() < r.Start) {
			d.Fail(fmt.Errorf("%w: inode range %v+%d", encoding.ErrCorrupt, r.Start, r.Len))
		}
		rs = append(rs, r)
	}
	return rs
}

func (e *Event) decodeTruncs(d *encoding.Decoder) {
	n := d.Count(12)
	if n > maxEventTruncs {
		d.Fail(fmt.Errorf("%w: %d truncations in one event", encoding.ErrCorrupt, n))
		return
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		tr := Trunc{Ino: mdtypes.Ino(d.Uint64()), From: d.Uvarint(), To: d.Uvarint()}
		tr.Layout.Decode(d)
		if d.Err() != nil {
			return
		}
		if tr.To >= tr.From {
			d.Fail(fmt.Errorf("%w: truncation of %v from %d to %d", encoding.ErrCorrupt, tr.Ino, tr.From, tr.To))
			return
		}
		if err := tr.Layout.Validate(); err != nil {
			d.Fail(fmt.Errorf("%w: truncation of %v: %w", encoding.ErrCorrupt, tr.Ino, err))
			return
		}
		e.Truncs = append(e.Truncs, tr)
	}
	n = d.Count(9)
	if n > maxEventTruncs {
		d.Fail(fmt.Errorf("%w: %d finished truncations in one event", encoding.ErrCorrupt, n))
		return
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		e.TruncsDone = append(e.TruncsDone, TruncDone{Ino: mdtypes.Ino(d.Uint64()), Pos: d.Uvarint()})
	}
}
