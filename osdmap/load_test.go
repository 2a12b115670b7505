package osdmap

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
)

func TestOSDLoadRoundTrip(t *testing.T) {
	o := OSD{State: OSDExists | OSDUp, Weight: WeightIn, PrimaryAffinity: DefaultPrimaryAffinity, Addr: "a:1", UpFrom: 3,
		Load: Load{Disk: 80, CPU: 15, Memory: 40}}
	var e encoding.Encoder
	encodeOSD(&e, &o)
	b := e.Data()
	if b[0] != 3 || b[1] != 1 {
		t.Fatalf("osd entry version %d compat %d, want 3 and 1 (older decoders skip the load)", b[0], b[1])
	}
	d := encoding.NewDecoder(b)
	if got := decodeOSD(d); d.Finish() != nil || got != o {
		t.Fatalf("decoded %+v, want %+v", got, o)
	}
	// A version 2 entry (before loads) decodes idle.
	old := bytes.Clone(b[:len(b)-3])
	old[0] = 2
	binary.LittleEndian.PutUint32(old[2:], binary.LittleEndian.Uint32(old[2:])-3)
	d = encoding.NewDecoder(old)
	want := o
	want.Load = Load{}
	if got := decodeOSD(d); d.Finish() != nil || got != want {
		t.Fatalf("version 2 entry decoded %+v, want %+v", got, want)
	}
}

func TestSetLoad(t *testing.T) {
	m := sampleMaps(t)[5]
	inc := m.NewIncremental()
	if err := inc.SetLoad(m, 1, Load{Disk: 101}); err == nil {
		t.Fatal("a load above 100% was taken")
	}
	if err := inc.SetLoad(m, 1, Load{Disk: 50, CPU: 20, Memory: 70}); err != nil {
		t.Fatal(err)
	}
	next, err := m.Apply(inc)
	if err != nil {
		t.Fatal(err)
	}
	if got := next.OSD(1).Load; got != (Load{Disk: 50, CPU: 20, Memory: 70}) {
		t.Fatalf("load %v after the incremental", got)
	}
	data, err := next.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalMap(data)
	if err != nil || back.OSD(1).Load != next.OSD(1).Load {
		t.Fatalf("map round trip: %v %v", back.OSD(1).Load, err)
	}
}
