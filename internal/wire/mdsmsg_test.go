package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/mdsmap"
)

func beaconSamples() []MDSBeacon {
	return []MDSBeacon{
		{Name: "a", Addr: "127.0.0.1:6800", Nonce: 0xfeedface, State: mdsmap.StateBoot, WantRank: mdsmap.NoRank},
		{Name: "b", Addr: "10.0.0.2:6801", Nonce: 7, GID: 12, Seq: 99, State: mdsmap.StateRejoin, WantFS: "cephfs", WantRank: 0, Epoch: 31},
		{Name: "c", Addr: "10.0.0.3:6800", Nonce: 8, GID: 13, Seq: 5, State: mdsmap.StateActive, WantRank: mdsmap.NoRank, Epoch: 40,
			Health: MDSHealth{Sessions: 3, InFlight: 4, Slow: 2, ComplaintTime: 30 * time.Second, Oldest: 95 * time.Second, LateClients: 2,
				LateRelease: []MDSLateRelease{{ClientID: 4305, Entity: "client.admin", Host: "10.0.0.9", Ino: 0x10000000001, Age: 31500 * time.Millisecond},
					{ClientID: 4306, Entity: "client.b", Host: "h2", Ino: 1, Age: 30 * time.Second}}, Damaged: 3}},
	}
}

func replySamples() []MDSBeaconReply {
	m, _ := mdsmap.New().MarshalBinary()
	return []MDSBeaconReply{
		{Seq: 1, GID: 3, Epoch: 4, State: mdsmap.StateStandby, Rank: mdsmap.NoRank, Map: m},
		{Seq: 9, GID: 12, Epoch: 31, State: mdsmap.StateReplay, FS: 1, Rank: 2},
		{Seq: 10, State: mdsmap.StateNone, Rank: mdsmap.NoRank},
	}
}

func TestMDSBeaconRoundTrip(t *testing.T) {
	for _, b := range beaconSamples() {
		got, err := BeaconFromCommand(BeaconCommand(b))
		if err != nil || !reflect.DeepEqual(got, b) {
			t.Fatalf("got %+v, %v; want %+v", got, err, b)
		}
		enc := b.Encode()
		for n := range len(enc) {
			if _, err := DecodeMDSBeacon(enc[:n]); err == nil {
				t.Fatalf("beacon truncated to %d bytes decoded", n)
			}
		}
	}
	for _, r := range replySamples() {
		got, err := DecodeMDSBeaconReply(r.Encode())
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Fatalf("got %+v, %v; want %+v", got, err, r)
		}
	}
}

func TestMDSBeaconRefusesBadFields(t *testing.T) {
	for name, spoil := range map[string]func(b *MDSBeacon){
		"no name":          func(b *MDSBeacon) { b.Name = "" },
		"state none":       func(b *MDSBeacon) { b.State = mdsmap.StateNone },
		"unknown state":    func(b *MDSBeacon) { b.State = 200 },
		"rank -2":          func(b *MDSBeacon) { b.WantRank = -2 },
		"rank too high":    func(b *MDSBeacon) { b.WantRank = mdsmap.MaxRanks },
		"slow > in flight": func(b *MDSBeacon) { b.Health.Slow = b.Health.InFlight + 1 },
		"listed > late":    func(b *MDSBeacon) { b.Health.LateClients = 1 },
		"too many listed": func(b *MDSBeacon) {
			b.Health.LateRelease = make([]MDSLateRelease, MaxLateRelease+1)
			b.Health.LateClients = MaxLateRelease + 1
		},
	} {
		b := beaconSamples()[2]
		spoil(&b)
		if _, err := DecodeMDSBeacon(b.Encode()); !errors.Is(err, encoding.ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := BeaconFromCommand(NewCommand(BeaconPrefix, "beacon", "!!")); !errors.Is(err, encoding.ErrCorrupt) {
		t.Errorf("bad base64: %v", err)
	}
}

// A version 1 beacon (before health reports) decodes with no health.
func TestMDSBeaconVersion1(t *testing.T) {
	b := beaconSamples()[1]
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(b.Name)
	e.String(b.Addr)
	e.Uint64(b.Nonce)
	e.Uvarint(uint64(b.GID))
	e.Uvarint(b.Seq)
	e.Uint8(uint8(b.State))
	e.String(b.WantFS)
	e.Varint(int64(b.WantRank))
	e.Uint32(uint32(b.Epoch))
	e.End(mk)
	got, err := DecodeMDSBeacon(e.Data())
	if err != nil || !reflect.DeepEqual(got, b) {
		t.Fatalf("got %+v, %v; want %+v", got, err, b)
	}
}

func classified(err error) bool {
	return errors.Is(err, encoding.ErrCorrupt) || errors.Is(err, encoding.ErrTruncated) || errors.Is(err, encoding.ErrUnsupportedVersion)
}

// FuzzMDSBeacon: the decoder never panics, fails only with the
// encoding's error classes, and what it accepts encodes back the same.
func FuzzMDSBeacon(f *testing.F) {
	for _, b := range beaconSamples() {
		f.Add(b.Encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeMDSBeacon(data)
		if err != nil {
			if !classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		if got, err := DecodeMDSBeacon(b.Encode()); err != nil || !reflect.DeepEqual(got, b) {
			t.Fatalf("re-decoded %+v, %v; want %+v", got, err, b)
		}
	})
}

// FuzzMDSBeaconReply is FuzzMDSBeacon's twin for replies.
func FuzzMDSBeaconReply(f *testing.F) {
	for _, r := range replySamples() {
		f.Add(r.Encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeMDSBeaconReply(data)
		if err != nil {
			if !classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		if !bytes.Equal(r.Encode(), func() []byte { r2, _ := DecodeMDSBeaconReply(r.Encode()); return r2.Encode() }()) {
			t.Fatal("encoding not stable")
		}
	})
}
