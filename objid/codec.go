package objid

import (
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// MaxNameLen bounds the length of a namespace, key or name. Ceph's default
// limit (osd_max_object_name_len) is 2048.
const MaxNameLen = 4096

// codecVersion is the version Encode writes and the newest Decode reads.
const codecVersion = 1

// ErrInvalid is wrapped by every error Validate returns.
var ErrInvalid = errors.New("objid: invalid object id")

// Validate reports whether id can be encoded and decoded: names no longer
// than MaxNameLen, and nothing but the flag set in Max().
func (id ID) Validate() error {
	for _, s := range []string{id.Namespace, id.Key, id.Name} {
		if len(s) > MaxNameLen {
			return fmt.Errorf("%w: %d-byte string exceeds %d", ErrInvalid, len(s), MaxNameLen)
		}
	}
	if id.max && id != Max() {
		return fmt.Errorf("%w: the maximum id has other fields set", ErrInvalid)
	}
	return nil
}

// Encode appends id to e in a versioned envelope:
//
//	version 1: max bool, pool varint, namespace, key, name (strings),
//	           snap uvarint, hash u32
//
// IDs that fail Validate encode but do not decode.
func (id ID) Encode(e *encoding.Encoder) {
	mark := e.Begin(codecVersion, 1)
	e.Bool(id.max)
	e.Varint(id.Pool)
	e.String(id.Namespace)
	e.String(id.Key)
	e.String(id.Name)
	e.Uvarint(id.Snap)
	e.Uint32(id.Hash)
	e.End(mark)
}

// Decode reads an ID written by Encode. Errors are recorded in d (check
// d.Err or d.Finish); on error the returned ID is meaningless.
func Decode(d *encoding.Decoder) ID {
	var id ID
	d.Begin(codecVersion)
	id.max = d.Bool()
	id.Pool = d.Varint()
	id.Namespace = d.String(MaxNameLen)
	id.Key = d.String(MaxNameLen)
	id.Name = d.String(MaxNameLen)
	id.Snap = d.Uvarint()
	id.Hash = d.Uint32()
	d.End()
	if d.Err() == nil {
		if err := id.Validate(); err != nil {
			d.Fail(fmt.Errorf("%w: %w", encoding.ErrCorrupt, err))
		}
	}
	return id
}

// MarshalBinary encodes id alone.
func (id ID) MarshalBinary() ([]byte, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	var e encoding.Encoder
	id.Encode(&e)
	return e.Data(), nil
}

// UnmarshalBinary decodes an id encoded by MarshalBinary; trailing bytes
// are an error.
func (id *ID) UnmarshalBinary(data []byte) error {
	d := encoding.NewDecoder(data)
	v := Decode(d)
	if err := d.Finish(); err != nil {
		return fmt.Errorf("objid: decode: %w", err)
	}
	*id = v
	return nil
}
