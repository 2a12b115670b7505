package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/mdsmap"
)

func beaconSamples() []MDSBeacon {
	return []MDSBeacon{
		{Name: "a", Addr: "127.0.0.1:6800", Nonce: 0xfeedface, State: mdsmap.StateBoot, WantRank: mdsmap.NoRank},
		{Name: "b", Addr: "10.0.0.2:6801", Nonce: 7, GID: 12, Seq: 99, State: mdsmap.StateRejoin, WantFS: "cephfs", WantRank: 0, Epoch: 31},
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
		if err != nil || got != b {
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
		"no name":       func(b *MDSBeacon) { b.Name = "" },
		"state none":    func(b *MDSBeacon) { b.State = mdsmap.StateNone },
		"unknown state": func(b *MDSBeacon) { b.State = 200 },
		"rank -2":       func(b *MDSBeacon) { b.WantRank = -2 },
		"rank too high": func(b *MDSBeacon) { b.WantRank = mdsmap.MaxRanks },
	} {
		b := beaconSamples()[1]
		spoil(&b)
		if _, err := DecodeMDSBeacon(b.Encode()); !errors.Is(err, encoding.ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := BeaconFromCommand(NewCommand(BeaconPrefix, "beacon", "!!")); !errors.Is(err, encoding.ErrCorrupt) {
		t.Errorf("bad base64: %v", err)
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
		if got, err := DecodeMDSBeacon(b.Encode()); err != nil || got != b {
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
