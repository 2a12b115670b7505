package wire

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/objid"
)

func sampleSnapSetInfo() SnapSetInfo {
	return SnapSetInfo{Seq: 9, Clones: []CloneInfo{
		{ID: 3, Snaps: []uint64{3, 2}, Size: 100, Overlap: []Extent{{0, 50}}},
		{ID: objid.NoSnap, Size: 120},
	}}
}

func TestSnapSetInfoRoundTrip(t *testing.T) {
	for _, s := range []SnapSetInfo{{}, sampleSnapSetInfo()} {
		got, err := DecodeSnapSetInfo(s.Encode())
		if err != nil || !reflect.DeepEqual(got, s) {
			t.Fatalf("%+v: %+v %v", s, got, err)
		}
	}
	s := sampleSnapSetInfo()
	if h := s.Head(); h == nil || h.Size != 120 {
		t.Fatalf("Head = %+v", h)
	}
	s.Clones = s.Clones[:1]
	if s.Head() != nil {
		t.Fatal("Head of a snap set without one")
	}
	b := sampleSnapSetInfo().Encode()
	for n := range len(b) {
		if _, err := DecodeSnapSetInfo(b[:n]); err == nil {
			t.Fatalf("decoded %d of %d bytes", n, len(b))
		}
	}
}

func FuzzSnapSetInfo(f *testing.F) {
	f.Add(sampleSnapSetInfo().Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSnapSetInfo(b)
		if err != nil {
			if !errors.Is(err, encoding.ErrCorrupt) && !errors.Is(err, encoding.ErrTruncated) && !errors.Is(err, encoding.ErrUnsupportedVersion) {
				t.Fatalf("unclassified: %v", err)
			}
			return
		}
		again, err := DecodeSnapSetInfo(s.Encode())
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("re-decode: %v", err)
		}
	})
}
