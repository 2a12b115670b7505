package rbd

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// The header object's omap keys (librbd's format 2).
const (
	keySize        = "size"
	keyOrder       = "order"
	keyPrefix      = "object_prefix"
	keyFeatures    = "features"
	keySnapSeq     = "snap_seq"
	keyStripeUnit  = "stripe_unit"
	keyStripeCount = "stripe_count"
	keyDataPool    = "data_pool_id"
	keyCreated     = "create_timestamp"
	// SnapKeyPrefix + the id as %016x keys a snapshot.
	SnapKeyPrefix = "snapshot_"
)

// SnapKey is the header key of snapshot id.
func SnapKey(id uint64) string { return fmt.Sprintf("%s%016x", SnapKeyPrefix, id) }

// Register adds the rbd class's methods to r.
func Register(r *objclass.Registry) error {
	for _, m := range []struct {
		name string
		m    objclass.Method
	}{
		{"create", objclass.Method{Write: true, Run: create}},
		{"get", objclass.Method{Run: get}},
		{"set_size", objclass.Method{Write: true, Run: setSize}},
		{"snap_add", objclass.Method{Write: true, Run: snapAdd}},
		{"snap_remove", objclass.Method{Write: true, Run: snapRemove}},
		{"snap_protect", objclass.Method{Write: true, Run: snapProtect}},
		{"dir_add", objclass.Method{Write: true, Run: dirAdd}},
		{"dir_remove", objclass.Method{Write: true, Run: dirRemove}},
		{"dir_rename", objclass.Method{Write: true, Run: dirRename}},
		{"object_map_update", objclass.Method{Write: true, Run: objectMapUpdate}},
		{"object_map_resize", objclass.Method{Write: true, Run: objectMapResize}},
		{"child_attach", objclass.Method{Write: true, Run: childAttach}},
		{"child_detach", objclass.Method{Write: true, Run: childDetach}},
		{"children", objclass.Method{Run: children}},
		{"remove_parent", objclass.Method{Write: true, Run: removeParent}},
		{"set_overlap", objclass.Method{Write: true, Run: setOverlap}},
	} {
		if err := r.Register(Class, m.name, m.m); err != nil {
			return err
		}
	}
	return nil
}

func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// HeaderOmap returns the omap entries that store h (without its
// snapshots' keys).
func HeaderOmap(h Header) []wire.KV {
	kvs := []wire.KV{
		{Key: keySize, Value: u64(h.Size)},
		{Key: keyOrder, Value: []byte{h.Order}},
		{Key: keyPrefix, Value: []byte(h.ObjectPrefix)},
		{Key: keyFeatures, Value: u64(h.Features)},
		{Key: keySnapSeq, Value: u64(h.SnapSeq)},
		{Key: keyStripeUnit, Value: u64(h.StripeUnit)},
		{Key: keyStripeCount, Value: u64(h.StripeCount)},
		{Key: keyCreated, Value: u64(uint64(h.Created))},
	}
	if h.DataPool != NoDataPool {
		kvs = append(kvs, wire.KV{Key: keyDataPool, Value: u64(uint64(h.DataPool))})
	}
	if !h.Parent.IsZero() {
		kvs = append(kvs, wire.KV{Key: keyParent, Value: h.Parent.Encode()})
	}
	return kvs
}

// ParseOmap rebuilds a header from the omap entries of its object (those
// HeaderOmap wrote and the snapshots' keys). A missing key, a value of
// the wrong length or a snapshot that does not decode is an error naming
// it; the header is then validated.
func ParseOmap(kvs []wire.KV) (Header, error) {
	h := Header{DataPool: NoDataPool}
	seen := map[string]bool{}
	for _, kv := range kvs {
		v := kv.Value
		fixed := func(dst *uint64) error {
			if len(v) != 8 {
				return fmt.Errorf("key %q holds %d bytes, not 8", kv.Key, len(v))
			}
			*dst = binary.LittleEndian.Uint64(v)
			return nil
		}
		var err error
		switch kv.Key {
		case keySize:
			err = fixed(&h.Size)
		case keyOrder:
			if len(v) != 1 {
				err = fmt.Errorf("key %q holds %d bytes, not 1", kv.Key, len(v))
			} else {
				h.Order = v[0]
			}
		case keyPrefix:
			h.ObjectPrefix = string(v)
		case keyFeatures:
			err = fixed(&h.Features)
		case keySnapSeq:
			err = fixed(&h.SnapSeq)
		case keyStripeUnit:
			err = fixed(&h.StripeUnit)
		case keyStripeCount:
			err = fixed(&h.StripeCount)
		case keyDataPool:
			var p uint64
			err = fixed(&p)
			h.DataPool = int64(p)
		case keyCreated:
			var c uint64
			err = fixed(&c)
			h.Created = int64(c)
		case keyParent:
			if h.Parent, err = DecodeParentSpec(v); err == nil && h.Parent.IsZero() {
				err = fmt.Errorf("key %q holds no parent", kv.Key)
			}
		default:
			if !strings.HasPrefix(kv.Key, SnapKeyPrefix) {
				continue // keys of later versions
			}
			var s Snapshot
			if s, err = DecodeSnapshot(v); err == nil && SnapKey(s.ID) != kv.Key {
				err = fmt.Errorf("key %q holds snapshot %d", kv.Key, s.ID)
			}
			h.Snapshots = append(h.Snapshots, s)
		}
		if err != nil {
			return Header{}, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		seen[kv.Key] = true
	}
	for _, k := range []string{keySize, keyOrder, keyPrefix, keyFeatures, keySnapSeq, keyStripeUnit, keyStripeCount} {
		if !seen[k] {
			return Header{}, fmt.Errorf("%w: no key %q", ErrInvalid, k)
		}
	}
	if err := h.Validate(); err != nil {
		return Header{}, err
	}
	return h, nil
}

// load reads the header of the object c runs on: ENOENT if there is
// none, EIO if it does not parse.
func load(c objclass.Context) (Header, error) {
	if !c.Exists() {
		return Header{}, objclass.Errorf(wire.ENOENT, "no image header")
	}
	var all []wire.KV
	after := ""
	for {
		kvs, more, err := objclass.OmapList(c, after, "", 0)
		if err != nil {
			return Header{}, err
		}
		all = append(all, kvs...)
		if !more || len(kvs) == 0 {
			break
		}
		after = kvs[len(kvs)-1].Key
	}
	h, err := ParseOmap(all)
	if err != nil {
		return Header{}, objclass.Errorf(wire.EIO, "%v", err)
	}
	return h, nil
}

func create(c objclass.Context, in []byte) ([]byte, error) {
	h, err := DecodeHeader(in)
	if err != nil {
		return nil, objclass.Errorf(wire.EINVAL, "%v", err)
	}
	if err := h.Validate(); err != nil {
		return nil, objclass.Errorf(wire.EINVAL, "%v", err)
	}
	if len(h.Snapshots) > 0 || h.SnapSeq != 0 {
		return nil, objclass.Errorf(wire.EINVAL, "a new image has no snapshots")
	}
	if c.Exists() {
		return nil, objclass.Errorf(wire.EEXIST, "the image header exists")
	}
	h.Created = c.Now()
	return nil, objclass.OmapSet(c, HeaderOmap(h)...)
}

func get(c objclass.Context, _ []byte) ([]byte, error) {
	h, err := load(c)
	if err != nil {
		return nil, err
	}
	return h.Encode(), nil
}

func setSize(c objclass.Context, in []byte) ([]byte, error) {
	size, err := DecodeSize(in)
	if err != nil {
		return nil, objclass.Errorf(wire.EINVAL, "%v", err)
	}
	if size > MaxSize {
		return nil, objclass.Errorf(wire.EINVAL, "size %d is over the largest image (%d)", size, uint64(MaxSize))
	}
	h, err := load(c)
	if err != nil {
		return nil, err
	}
	kvs := []wire.KV{{Key: keySize, Value: u64(size)}}
	if p := h.Parent; !p.IsZero() && p.Overlap > size {
		// A shrink cuts a clone's overlap; growing back does not restore it.
		p.Overlap = size
		kvs = append(kvs, wire.KV{Key: keyParent, Value: p.Encode()})
	}
	return nil, objclass.OmapSet(c, kvs...)
}

// snapRequest decodes a snapshot method's input and loads the header.
func snapRequest(c objclass.Context, in []byte) (SnapRequest, Header, error) {
	r, err := DecodeSnapRequest(in)
	if err != nil {
		return r, Header{}, objclass.Errorf(wire.EINVAL, "%v", err)
	}
	h, err := load(c)
	return r, h, err
}

// find returns the index of snapshot id in h, or ENOENT.
func find(h Header, id uint64) (int, error) {
	for i, s := range h.Snapshots {
		if s.ID == id {
			return i, nil
		}
	}
	return 0, objclass.Errorf(wire.ENOENT, "no snapshot %d", id)
}

func snapAdd(c objclass.Context, in []byte) ([]byte, error) {
	r, h, err := snapRequest(c, in)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Name == "" || r.ID == 0:
		return nil, objclass.Errorf(wire.EINVAL, "a snapshot needs a name and an id")
	case r.ID <= h.SnapSeq:
		return nil, objclass.Errorf(wire.ESTALE, "snapshot id %d is not newer than the image's snap seq %d", r.ID, h.SnapSeq)
	case len(h.Snapshots) >= MaxSnapshots:
		return nil, objclass.Errorf(wire.EMLINK, "the image has %d snapshots, the most it may have", len(h.Snapshots))
	}
	if _, dup := h.Snap(r.Name); dup {
		return nil, objclass.Errorf(wire.EEXIST, "snapshot %q exists", r.Name)
	}
	s := Snapshot{ID: r.ID, Name: r.Name, Size: h.Size, Created: c.Now(), ParentOverlap: h.Parent.Overlap}
	return nil, objclass.OmapSet(c, wire.KV{Key: keySnapSeq, Value: u64(r.ID)}, wire.KV{Key: SnapKey(r.ID), Value: s.Encode()})
}

func snapRemove(c objclass.Context, in []byte) ([]byte, error) {
	r, h, err := snapRequest(c, in)
	if err != nil {
		return nil, err
	}
	i, err := find(h, r.ID)
	if err != nil {
		return nil, err
	}
	if h.Snapshots[i].Protected {
		return nil, objclass.Errorf(wire.EBUSY, "snapshot %q is protected; unprotect it first", h.Snapshots[i].Name)
	}
	if err := busyWithChildren(c, h.Snapshots[i], "remove"); err != nil {
		return nil, err
	}
	return nil, objclass.OmapRm(c, SnapKey(r.ID))
}

func snapProtect(c objclass.Context, in []byte) ([]byte, error) {
	r, h, err := snapRequest(c, in)
	if err != nil {
		return nil, err
	}
	i, err := find(h, r.ID)
	if err != nil {
		return nil, err
	}
	s := h.Snapshots[i]
	if s.Protected && !r.Protected {
		if err := busyWithChildren(c, s, "unprotect"); err != nil {
			return nil, err
		}
	}
	s.Protected = r.Protected
	return nil, objclass.OmapSet(c, wire.KV{Key: SnapKey(r.ID), Value: s.Encode()})
}

// ParseID reads an image id: lower-case hexadecimal of a non-zero 64-bit
// number, the striper's file number for the data objects.
func ParseID(id string) (uint64, error) {
	n, err := strconv.ParseUint(id, 16, 64)
	if err != nil || n == 0 || strconv.FormatUint(n, 16) != id {
		return 0, fmt.Errorf("%w: image id %q is not lower-case hexadecimal of a non-zero number", ErrInvalid, id)
	}
	return n, nil
}
