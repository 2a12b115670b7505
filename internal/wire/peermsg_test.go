package wire

import (
	"reflect"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

func peerSamples() []any {
	h := PGInterval{PG: osdmap.PG{Pool: 3, Seed: 17}, Epoch: 40, IntervalStart: 38}
	o := objid.Object(3, "ns", "obj")
	return []any{
		PGQuery{h},
		PGNotify{PGInterval: h, Info: []byte("info"), Log: [][]byte{[]byte("e1"), []byte("e2")}},
		PGNotify{PGInterval: h, Info: []byte("info"), Missing: []objid.ID{o}},
		PGPull{PGInterval: h, Objects: []objid.ID{o, objid.Object(3, "", "other")}},
		PGPull{PGInterval: h, All: true},
		PGPull{PGInterval: h, Objects: []objid.ID{o}, Search: true},
		PGPush{PGInterval: h, Object: o, Exists: true, Data: []byte("data"), Attrs: []KV{{Key: "_", Value: []byte("v")}},
			OmapHeader: []byte("hdr"), Omap: []KV{{Key: "k", Value: []byte("v")}}},
		PGPush{PGInterval: h, Object: o},
		PGActivate{PGInterval: h, Info: []byte("info"), Log: [][]byte{[]byte("e")}, Backfill: true},
		PGActivate{PGInterval: h, Info: []byte("info"), Missing: []objid.ID{o, objid.Object(3, "", "other")}},
		PGAck{PGInterval: h, Object: o, Result: -EIO},
		PGAck{PGInterval: h, Activate: true},
		PGAck{PGInterval: h, Activate: true, Current: []objid.ID{o}},
		PGActivate{PGInterval: h, Info: []byte("info"), Backfill: true, Missing: []objid.ID{o, objid.Object(3, "", "other")},
			Versions: []Version{{Epoch: 3, Counter: 8}, {Epoch: 4, Counter: 1}}},
		ScrubRequest{PGInterval: h, Token: 9, Start: o, End: objid.Max(), Deep: true},
		ScrubMap{PGInterval: h, Token: 9, Objects: []ScrubObject{{ID: o, Size: 4096, Version: Version{Epoch: 3, Counter: 8},
			AttrsDigest: 1, OmapDigest: 2, DataDigest: 3}, {ID: objid.Object(3, "", "other"), ReadError: "checksum mismatch"}}},
		ScrubMap{PGInterval: h, Token: 10},
		PGRemove{h},
		PGInfo{PGInterval: h, Info: []byte("info")},
	}
}

func encodePeer(m any) []byte {
	switch m := m.(type) {
	case PGQuery:
		return m.Encode()
	case PGNotify:
		return m.Encode()
	case PGPull:
		return m.Encode()
	case PGPush:
		return m.Encode()
	case PGActivate:
		return m.Encode()
	case PGAck:
		return m.Encode()
	case ScrubRequest:
		return m.Encode()
	case ScrubMap:
		return m.Encode()
	case PGRemove:
		return m.Encode()
	case PGInfo:
		return m.Encode()
	}
	panic("unknown message")
}

// decodePeerAll tries every peering decoder on b.
func decodePeerAll(b []byte) []any {
	var out []any
	if m, err := DecodePGQuery(b); err == nil {
		out = append(out, m)
	}
	if m, err := DecodePGNotify(b); err == nil {
		out = append(out, m)
	}
	if m, err := DecodePGPull(b); err == nil {
		out = append(out, m)
	}
	if m, err := DecodePGPush(b); err == nil {
		out = append(out, m)
	}
	if m, err := DecodePGActivate(b); err == nil {
		out = append(out, m)
	}
	if m, err := DecodePGAck(b); err == nil {
		out = append(out, m)
	}
	if m, err := DecodeScrubRequest(b); err == nil {
		out = append(out, m)
	}
	if m, err := DecodeScrubMap(b); err == nil {
		out = append(out, m)
	}
	if m, err := DecodePGRemove(b); err == nil {
		out = append(out, m)
	}
	if m, err := DecodePGInfo(b); err == nil {
		out = append(out, m)
	}
	return out
}

func TestPeeringMessagesRoundTrip(t *testing.T) {
	for _, m := range peerSamples() {
		b := encodePeer(m)
		var got any
		var err error
		switch m.(type) {
		case PGQuery:
			got, err = DecodePGQuery(b)
		case PGNotify:
			got, err = DecodePGNotify(b)
		case PGPull:
			got, err = DecodePGPull(b)
		case PGPush:
			got, err = DecodePGPush(b)
		case PGActivate:
			got, err = DecodePGActivate(b)
		case PGAck:
			got, err = DecodePGAck(b)
		case ScrubRequest:
			got, err = DecodeScrubRequest(b)
		case ScrubMap:
			got, err = DecodeScrubMap(b)
		case PGRemove:
			got, err = DecodePGRemove(b)
		case PGInfo:
			got, err = DecodePGInfo(b)
		}
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Fatalf("%T: got %+v, %v; want %+v", m, got, err, m)
		}
		for n := range len(b) {
			for _, d := range decodePeerAll(b[:n]) {
				t.Fatalf("%T truncated to %d bytes decoded as %T", m, n, d)
			}
		}
	}
}

func FuzzPeeringMessages(f *testing.F) {
	for _, m := range peerSamples() {
		f.Add(encodePeer(m))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range decodePeerAll(b) {
			again := decodePeerAll(encodePeer(m))
			found := false
			for _, a := range again {
				if reflect.DeepEqual(a, m) {
					found = true
				}
			}
			if !found {
				t.Fatalf("%T %+v does not survive re-encoding", m, m)
			}
		}
	})
}

// A PGPull of version 1 (before Search) still decodes, as a pull that
// does not search.
func TestPGPullVersion1(t *testing.T) {
	h := PGInterval{PG: osdmap.PG{Pool: 3, Seed: 17}, Epoch: 40, IntervalStart: 38}
	o := objid.Object(3, "ns", "obj")
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	h.encode(&e)
	encodeObjects(&e, []objid.ID{o})
	e.Bool(false)
	e.End(mk)
	got, err := DecodePGPull(e.Data())
	if want := (PGPull{PGInterval: h, Objects: []objid.ID{o}}); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
}
