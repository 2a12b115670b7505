package ops

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// InfoAttr is the internal attribute holding an object's Info. User
// attributes are stored as UserAttrPrefix + name, so a user can never
// read or overwrite it.
const (
	InfoAttr       = "@"
	UserAttrPrefix = "_"
)

// Info is what the OSD keeps about an object beside its data: the version
// of the last write and when it happened (Ceph's object_info_t, reduced
// to what Cuttle uses).
type Info struct {
	Version wire.Version
	Mtime   int64 // Unix nanoseconds
}

// Encode encodes i: version 1: epoch, counter, mtime.
func (i Info) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uvarint(i.Version.Epoch)
	e.Uvarint(i.Version.Counter)
	e.Varint(i.Mtime)
	e.End(mk)
	return e.Data()
}

// VersionOf is the version in an encoded info attribute b, zero if b is
// absent or damaged (recovery and scrub then compare it as unknown).
func VersionOf(b []byte) wire.Version {
	i, err := DecodeInfo(b)
	if err != nil {
		return wire.Version{}
	}
	return i.Version
}

// DecodeInfo decodes what Encode wrote.
func DecodeInfo(b []byte) (Info, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	i := Info{Version: wire.Version{Epoch: d.Uvarint(), Counter: d.Uvarint()}, Mtime: d.Varint()}
	d.End()
	if err := d.Finish(); err != nil {
		return Info{}, fmt.Errorf("object info: %w", err)
	}
	return i, nil
}
