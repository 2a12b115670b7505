package mdcache

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
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
)

// Marshal encodes e (version 1).
func (e *Event) Marshal() []byte {
	var en encoding.Encoder
	m := en.Begin(1, 1)
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
	d.Begin(1)
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
