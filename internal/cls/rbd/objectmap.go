package rbd

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// The object map (librbd's object-map feature): which data objects of an
// image exist, two bits an object, in the object rbd_object_map.<id> (the
// head) and rbd_object_map.<id>.<snap id as %016x> (as the image was at
// a snapshot), in the image's pool. The writer holding the exclusive lock
// marks an object exists before a write can create it, and pending before
// a discard removes it (nonexistent after), so the map never says
// nonexistent for an object that exists: a crash leaves it over-counting
// at worst. A map found wrong (missing, undecodable, of another size) is
// flagged invalid until rebuilt.

// ObjectMapPrefix + id (+ "." + snap id) names an object map.
const ObjectMapPrefix = "rbd_object_map."

// ObjectMapName names the object map of image id at snapshot snap (0: the
// head).
func ObjectMapName(id string, snap uint64) string {
	if snap == 0 {
		return ObjectMapPrefix + id
	}
	return fmt.Sprintf("%s%s.%016x", ObjectMapPrefix, id, snap)
}

// FeatureObjectMap is librbd's object-map feature bit.
const FeatureObjectMap uint64 = 1 << 3

// Object states in the map.
const (
	ObjectNonexistent uint8 = 0
	ObjectExists      uint8 = 1
	ObjectPending     uint8 = 2 // being removed: may still exist
)

// ObjectMapInvalid flags a map not to be trusted until rebuilt.
const ObjectMapInvalid uint8 = 1 << 0

// MaxObjectMapObjects bounds the objects an object map covers (64 MiB of
// map); larger images are created without the feature, as librbd's
// limit.
const MaxObjectMapObjects = 1 << 28

// ObjectMap is a decoded object map.
type ObjectMap struct {
	Flags uint8
	count uint64
	bits  []byte // object n: bits (n%4)*2 of byte n/4
}

// NewObjectMap returns a map of count objects, all nonexistent.
func NewObjectMap(count uint64) ObjectMap {
	return ObjectMap{count: count, bits: make([]byte, (count+3)/4)}
}

// Count is how many objects the map covers.
func (m ObjectMap) Count() uint64 { return m.count }

// State returns object n's state (nonexistent past the end).
func (m ObjectMap) State(n uint64) uint8 {
	if n >= m.count {
		return ObjectNonexistent
	}
	return m.bits[n/4] >> ((n % 4) * 2) & 3
}

// Set sets object n's state (n below Count).
func (m *ObjectMap) Set(n uint64, s uint8) {
	sh := (n % 4) * 2
	m.bits[n/4] = m.bits[n/4]&^(3<<sh) | (s&3)<<sh
}

// Resize makes the map cover count objects: new ones nonexistent.
func (m *ObjectMap) Resize(count uint64) {
	if count < m.count {
		for n := count; n < m.count && n%4 != 0; n++ {
			m.Set(n, ObjectNonexistent) // clear the tail of the last byte kept
		}
	}
	nb := (count + 3) / 4
	if nb <= uint64(len(m.bits)) {
		m.bits = m.bits[:nb]
	} else {
		m.bits = append(m.bits, make([]byte, nb-uint64(len(m.bits)))...)
	}
	m.count = count
}

// Clone returns a copy of m.
func (m ObjectMap) Clone() ObjectMap {
	m.bits = append([]byte(nil), m.bits...)
	return m
}

// Encode encodes m: version 1: flags u8, count u64, bits bytes.
func (m ObjectMap) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint8(m.Flags)
	e.Uint64(m.count)
	e.Bytes(m.bits)
	e.End(mk)
	return e.Data()
}

// DecodeObjectMap decodes what Encode wrote.
func DecodeObjectMap(b []byte) (ObjectMap, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := ObjectMap{Flags: d.Uint8(), count: d.Uint64()}
	m.bits = d.Bytes(MaxObjectMapObjects / 4)
	d.End()
	if err := d.Finish(); err != nil {
		return ObjectMap{}, fmt.Errorf("object map: %w", err)
	}
	if m.count > MaxObjectMapObjects || uint64(len(m.bits)) != (m.count+3)/4 {
		return ObjectMap{}, fmt.Errorf("%w: object map of %d objects has %d bytes", ErrInvalid, m.count, len(m.bits))
	}
	return m, nil
}

// ObjectMapUpdate is the input of object_map_update: objects [Start, End)
// whose state is Expect (AnyState: whatever it is) take State; then the
// flags SetFlags are set and ClearFlags cleared.
type ObjectMapUpdate struct {
	Start, End           uint64
	State, Expect        uint8
	SetFlags, ClearFlags uint8
}

// AnyState, as ObjectMapUpdate.Expect, updates every object of the range.
const AnyState uint8 = 0xff

// Encode encodes u: version 1: start, end u64, state, expect, set, clear u8.
func (u ObjectMapUpdate) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint64(u.Start)
	e.Uint64(u.End)
	e.Uint8(u.State)
	e.Uint8(u.Expect)
	e.Uint8(u.SetFlags)
	e.Uint8(u.ClearFlags)
	e.End(mk)
	return e.Data()
}

// DecodeObjectMapUpdate decodes what Encode wrote.
func DecodeObjectMapUpdate(b []byte) (ObjectMapUpdate, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	u := ObjectMapUpdate{Start: d.Uint64(), End: d.Uint64(), State: d.Uint8(), Expect: d.Uint8(), SetFlags: d.Uint8(), ClearFlags: d.Uint8()}
	d.End()
	if err := d.Finish(); err != nil {
		return ObjectMapUpdate{}, fmt.Errorf("object map update: %w", err)
	}
	return u, nil
}

// readObjectMap reads and decodes the map the method runs on: ENOENT if
// there is none, EIO if it does not decode.
func readObjectMap(c objclass.Context) (ObjectMap, error) {
	if !c.Exists() {
		return ObjectMap{}, objclass.Errorf(wire.ENOENT, "no object map")
	}
	b, err := objclass.Read(c, 0, 0)
	if err != nil {
		return ObjectMap{}, err
	}
	m, err := DecodeObjectMap(b)
	if err != nil {
		return ObjectMap{}, objclass.Errorf(wire.EIO, "%v", err)
	}
	return m, nil
}

func writeObjectMap(c objclass.Context, m ObjectMap) error {
	_, err := c.Do(wire.ObjectOp{Code: wire.OpWriteFull, Data: m.Encode()})
	return err
}

// objectMapUpdate runs ObjectMapUpdate: EINVAL for a range past the map's
// end or a bad state.
func objectMapUpdate(c objclass.Context, in []byte) ([]byte, error) {
	u, err := DecodeObjectMapUpdate(in)
	if err != nil {
		return nil, objclass.Errorf(wire.EINVAL, "%v", err)
	}
	m, err := readObjectMap(c)
	if err != nil {
		return nil, err
	}
	if u.Start > u.End || u.End > m.count || u.State > ObjectPending {
		return nil, objclass.Errorf(wire.EINVAL, "object map update [%d,%d) to state %d of a map of %d objects", u.Start, u.End, u.State, m.count)
	}
	for n := u.Start; n < u.End; n++ {
		if u.Expect == AnyState || m.State(n) == u.Expect {
			m.Set(n, u.State)
		}
	}
	m.Flags = m.Flags&^u.ClearFlags | u.SetFlags
	return nil, writeObjectMap(c, m)
}

// objectMapResize makes the map cover Size.Size objects (new ones
// nonexistent): the input is a Size.
func objectMapResize(c objclass.Context, in []byte) ([]byte, error) {
	count, err := DecodeSize(in)
	if err != nil {
		return nil, objclass.Errorf(wire.EINVAL, "%v", err)
	}
	if count > MaxObjectMapObjects {
		return nil, objclass.Errorf(wire.EINVAL, "object map of %d objects is over the largest (%d)", count, MaxObjectMapObjects)
	}
	m, err := readObjectMap(c)
	if err != nil {
		return nil, err
	}
	m.Resize(count)
	return nil, writeObjectMap(c, m)
}
