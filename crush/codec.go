package crush

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/encoding"
)

// Cuttle's binary form of a map (not Ceph's): a magic, then one envelope
// (version, compat, length) holding the Spec the map was built from. Shadow
// buckets are not stored; decoding rebuilds them, as it rebuilds every
// derived field, so a decoded map is validated exactly like a built one.
// docs/FORMATS.md describes the layout field by field.

// binaryMagic starts every encoded map, so tools can tell it from text.
var binaryMagic = []byte("CRSH")

const (
	codecVersion = 1
	codecCompat  = 1
	maxName      = 1 << 10 // longest device, bucket, type, rule or class name
)

// IsBinary reports whether data looks like Cuttle's binary form of a map.
func IsBinary(data []byte) bool { return bytes.HasPrefix(data, binaryMagic) }

// MarshalBinary encodes the map in Cuttle's versioned binary form.
func (m *Map) MarshalBinary() ([]byte, error) {
	var e encoding.Encoder
	for _, b := range binaryMagic {
		e.Uint8(b)
	}
	encodeSpec(&e, m.Spec())
	return e.Data(), nil
}

// UnmarshalBinary decodes a map encoded by MarshalBinary and builds it with
// New, so it returns an error, never a broken map, for any input.
func UnmarshalBinary(data []byte) (*Map, error) {
	if !IsBinary(data) {
		return nil, fmt.Errorf("crush: decode: missing magic %q: %w", binaryMagic, encoding.ErrCorrupt)
	}
	d := encoding.NewDecoder(data[len(binaryMagic):])
	spec := decodeSpec(d)
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("crush: decode: %w", err)
	}
	m, err := New(spec)
	if err != nil {
		return nil, fmt.Errorf("crush: decode: %w", err)
	}
	return m, nil
}

func encodeSpec(e *encoding.Encoder, s Spec) {
	mark := e.Begin(codecVersion, codecCompat)
	t := s.Tunables
	for _, v := range []uint32{t.ChooseLocalTries, t.ChooseLocalFallbackTries, t.ChooseTotalTries,
		t.ChooseleafDescendOnce, t.ChooseleafVaryR, t.ChooseleafStable, t.StrawCalcVersion, t.AllowedBucketAlgs} {
		e.Uvarint(uint64(v))
	}
	e.Uvarint(uint64(len(s.Devices)))
	for _, d := range s.Devices {
		e.Varint(int64(d.ID))
		e.String(d.Name)
		e.String(d.Class)
	}
	e.Uvarint(uint64(len(s.Types)))
	for _, t := range s.Types {
		e.Varint(int64(t.ID))
		e.String(t.Name)
	}
	e.Uvarint(uint64(len(s.Buckets)))
	for i := range s.Buckets {
		encodeBucket(e, &s.Buckets[i])
	}
	e.Uvarint(uint64(len(s.Rules)))
	for i := range s.Rules {
		encodeRule(e, &s.Rules[i])
	}
	indexes := slices.Sorted(maps.Keys(s.ChooseArgs))
	e.Uvarint(uint64(len(indexes)))
	for _, index := range indexes {
		e.Varint(index)
		encodeChooseArgs(e, s.ChooseArgs[index])
	}
	e.End(mark)
}

func encodeBucket(e *encoding.Encoder, b *Bucket) {
	mark := e.Begin(1, 1)
	e.Varint(int64(b.ID))
	e.String(b.Name)
	e.Varint(int64(b.Type))
	e.Uint8(uint8(b.Alg))
	e.Uint8(b.Hash)
	e.Uvarint(uint64(len(b.Items)))
	for i, item := range b.Items {
		e.Varint(int64(item))
		e.Uvarint(uint64(b.Weights[i]))
	}
	classes := slices.Sorted(maps.Keys(b.ClassIDs))
	e.Uvarint(uint64(len(classes)))
	for _, c := range classes {
		e.String(c)
		e.Varint(int64(b.ClassIDs[c]))
	}
	e.End(mark)
}

func encodeRule(e *encoding.Encoder, r *Rule) {
	mark := e.Begin(1, 1)
	e.Varint(int64(r.ID))
	e.String(r.Name)
	e.Uint8(uint8(r.Type))
	e.Varint(int64(r.MinSize))
	e.Varint(int64(r.MaxSize))
	e.Uvarint(uint64(len(r.Steps)))
	for _, s := range r.Steps {
		e.Uint8(uint8(s.Op))
		e.Varint(int64(s.Arg1))
		e.Varint(int64(s.Arg2))
		e.String(s.Class)
	}
	e.End(mark)
}

func encodeChooseArgs(e *encoding.Encoder, args []ChooseArg) {
	e.Uvarint(uint64(len(args)))
	for _, a := range args {
		e.Varint(int64(a.BucketID))
		e.Bool(a.IDs != nil)
		e.Uvarint(uint64(len(a.IDs)))
		for _, id := range a.IDs {
			e.Varint(int64(id))
		}
		e.Uvarint(uint64(len(a.Weights)))
		for _, ws := range a.Weights {
			e.Uvarint(uint64(len(ws)))
			for _, w := range ws {
				e.Uvarint(uint64(w))
			}
		}
	}
}

func decodeSpec(d *encoding.Decoder) Spec {
	var s Spec
	d.Begin(codecVersion)
	vals := make([]uint32, 8)
	for i := range vals {
		vals[i] = decodeUint32(d)
	}
	s.Tunables = Tunables{vals[0], vals[1], vals[2], vals[3], vals[4], vals[5], vals[6], vals[7]}
	s.Devices = make([]Device, d.Count(3))
	for i := range s.Devices {
		s.Devices[i] = Device{ID: decodeInt32(d), Name: d.String(maxName), Class: d.String(maxName)}
	}
	s.Types = make([]BucketType, d.Count(2))
	for i := range s.Types {
		s.Types[i] = BucketType{ID: decodeInt32(d), Name: d.String(maxName)}
	}
	s.Buckets = make([]Bucket, d.Count(6))
	for i := range s.Buckets {
		s.Buckets[i] = decodeBucket(d)
	}
	s.Rules = make([]Rule, d.Count(6))
	for i := range s.Rules {
		s.Rules[i] = decodeRule(d)
	}
	if n := d.Count(2); n > 0 {
		s.ChooseArgs = make(map[int64][]ChooseArg, n)
		for range n {
			index := d.Varint()
			s.ChooseArgs[index] = decodeChooseArgs(d)
		}
	}
	d.End()
	return s
}

func decodeBucket(d *encoding.Decoder) Bucket {
	var b Bucket
	d.Begin(1)
	b.ID = decodeInt32(d)
	b.Name = d.String(maxName)
	b.Type = decodeInt32(d)
	b.Alg = Alg(d.Uint8())
	b.Hash = d.Uint8()
	n := d.Count(2)
	b.Items, b.Weights = make([]int32, n), make([]uint32, n)
	for i := range n {
		b.Items[i] = decodeInt32(d)
		b.Weights[i] = decodeUint32(d)
	}
	if n := d.Count(2); n > 0 {
		b.ClassIDs = make(map[string]int32, n)
		for range n {
			class := d.String(maxName)
			b.ClassIDs[class] = decodeInt32(d)
		}
	}
	d.End()
	return b
}

func decodeRule(d *encoding.Decoder) Rule {
	var r Rule
	d.Begin(1)
	r.ID = decodeInt32(d)
	r.Name = d.String(maxName)
	r.Type = RuleType(d.Uint8())
	r.MinSize = decodeInt32(d)
	r.MaxSize = decodeInt32(d)
	r.Steps = make([]Step, d.Count(4))
	for i := range r.Steps {
		r.Steps[i] = Step{Op: Op(d.Uint8()), Arg1: decodeInt32(d), Arg2: decodeInt32(d), Class: d.String(maxName)}
	}
	d.End()
	return r
}

func decodeChooseArgs(d *encoding.Decoder) []ChooseArg {
	args := make([]ChooseArg, d.Count(4))
	for i := range args {
		a := &args[i]
		a.BucketID = decodeInt32(d)
		hasIDs := d.Bool()
		n := d.Count(1)
		if hasIDs {
			a.IDs = make([]int32, n)
		}
		for j := range n {
			id := decodeInt32(d)
			if hasIDs {
				a.IDs[j] = id
			}
		}
		if n := d.Count(1); n > 0 {
			a.Weights = make([][]uint32, n)
			for j := range a.Weights {
				a.Weights[j] = make([]uint32, d.Count(1))
				for k := range a.Weights[j] {
					a.Weights[j][k] = decodeUint32(d)
				}
			}
		}
	}
	return args
}

func decodeInt32(d *encoding.Decoder) int32 {
	v := d.Varint()
	if int64(int32(v)) != v {
		d.Fail(fmt.Errorf("crush: value %d out of int32 range: %w", v, encoding.ErrCorrupt))
	}
	return int32(v)
}

func decodeUint32(d *encoding.Decoder) uint32 {
	v := d.Uvarint()
	if v > 0xffffffff {
		d.Fail(fmt.Errorf("crush: value %d out of uint32 range: %w", v, encoding.ErrCorrupt))
	}
	return uint32(v)
}

// Spec returns a Spec that builds an identical map: shadow buckets are left
// out (their ids stay in ClassIDs) and class-restricted take steps name the
// original bucket again.
func (m *Map) Spec() Spec {
	s := Spec{Tunables: m.tunables, Devices: m.Devices(), Types: slices.Clone(m.types)}
	for _, b := range m.Buckets() {
		if b.IsShadow() {
			continue
		}
		c := cloneBucket(b)
		s.Buckets = append(s.Buckets, *c)
	}
	for _, r := range m.Rules() {
		c := *r
		c.Steps = slices.Clone(r.Steps)
		for i, st := range c.Steps {
			if b := m.Bucket(st.Arg1); st.Op == OpTake && b != nil && b.IsShadow() {
				c.Steps[i].Arg1, c.Steps[i].Class = b.ShadowOf, b.Class
			}
		}
		s.Rules = append(s.Rules, c)
	}
	if len(m.chooseArgs) > 0 {
		s.ChooseArgs = map[int64][]ChooseArg{}
		for index, ca := range m.chooseArgs {
			var args []ChooseArg
			for _, a := range ca.Args() {
				args = append(args, ChooseArg{BucketID: a.BucketID, IDs: slices.Clone(a.IDs), Weights: cloneWeights(a.Weights)})
			}
			s.ChooseArgs[index] = args
		}
	}
	return s
}
