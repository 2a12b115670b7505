package objid

import (
	"errors"
	"fmt"
)

// MaxNameLen bounds the length of a namespace, key or name. Ceph's default
// limit (osd_max_object_name_len) is 2048.
const MaxNameLen = 4096

// codecVersion is the version Encode writes and the newest Decode reads.
const codecVersion = 1

// ErrInvalid is wrapped by every error Validate returns.
var ErrInvalid = errors.New("objid: invalid object id")

// Encoder is the part of *encoding.Encoder that Encode uses. Package
// objid sits in layer 0 with package encoding and imports only the
// standard library, so it names the methods rather than the type; pass an
// *encoding.Encoder.
type Encoder interface {
	Begin(version, compat uint8) int
	End(mark int)
	Bool(v bool)
	Varint(v int64)
	Uvarint(v uint64)
	Uint32(v uint32)
	String(s string)
}

// Decoder is the part of *encoding.Decoder that Decode uses; pass an
// *encoding.Decoder. Its errors are sticky and classified by package
// encoding's sentinels.
type Decoder interface {
	Begin(supported uint8) uint8
	End()
	Bool() bool
	Varint() int64
	Uvarint() uint64
	Uint32() uint32
	String(max int) string
}

// Validate reports whether id can be encoded and decoded: no namespace,
// key or name longer than MaxNameLen.
func (id ID) Validate() error {
	for _, s := range []string{id.Namespace, id.Key, id.Name} {
		if len(s) > MaxNameLen {
			return fmt.Errorf("%w: %d-byte string exceeds %d", ErrInvalid, len(s), MaxNameLen)
		}
	}
	return nil
}

// Encode appends id to e in a versioned envelope:
//
//	version 1: max bool; unless max: pool varint, namespace, key, name
//	           (strings), snap uvarint, hash u32
//
// An ID that fails Validate encodes but does not decode.
func (id ID) Encode(e Encoder) {
	mark := e.Begin(codecVersion, 1)
	e.Bool(id.max)
	if !id.max {
		e.Varint(id.Pool)
		e.String(id.Namespace)
		e.String(id.Key)
		e.String(id.Name)
		e.Uvarint(id.Snap)
		e.Uint32(id.Hash)
	}
	e.End(mark)
}

// Decode reads an ID written by Encode. Errors are recorded in d (check
// its Err or Finish); after an error the returned ID is meaningless.
func Decode(d Decoder) ID {
	var id ID
	d.Begin(codecVersion)
	defer d.End()
	if d.Bool() {
		return Max()
	}
	id.Pool = d.Varint()
	id.Namespace = d.String(MaxNameLen)
	id.Key = d.String(MaxNameLen)
	id.Name = d.String(MaxNameLen)
	id.Snap = d.Uvarint()
	id.Hash = d.Uint32()
	return id
}
