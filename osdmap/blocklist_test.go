package osdmap

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
	"time"
)

// Blocklist entries travel in incrementals (compat 3, so an older decoder
// refuses rather than drops a fence), apply, diff back, encode with the
// map, and match an address by itself or by its host.
func TestBlocklist(t *testing.T) {
	m := smallMap(t)
	now := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	inc := m.NewIncremental()
	inc.NewBlocklist = map[string]time.Time{"10.0.0.5:6800": now.Add(time.Hour), "10.0.0.9": now.Add(time.Minute),
		"10.0.0.7:6800/42": now.Add(time.Hour)}
	data, err := inc.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if got := data[len(incMagic)+1]; got != 3 {
		t.Fatalf("incremental adding blocklist entries has compat %d, want 3", got)
	}
	dec, err := UnmarshalIncremental(data)
	if err != nil {
		t.Fatal(err)
	}
	next, err := m.Apply(dec)
	if err != nil {
		t.Fatal(err)
	}
	if got := next.BlocklistAddrs(); !slices.Equal(got, []string{"10.0.0.5:6800", "10.0.0.7:6800/42", "10.0.0.9"}) {
		t.Fatalf("blocklist %v", got)
	}
	for addr, want := range map[string]bool{"10.0.0.5:6800": true, "10.0.0.5:6801": false, "10.0.0.9:1234": true, "10.0.0.1:6800": false,
		"10.0.0.5:6800/7": true, "10.0.0.7:6800/42": true, "10.0.0.7:6800/43": false, "10.0.0.7:6800": false} {
		if got := next.IsBlocklisted(addr, now); got != want {
			t.Errorf("IsBlocklisted(%s) = %v", addr, got)
		}
	}
	if next.IsBlocklisted("10.0.0.9:1234", now.Add(2*time.Minute)) {
		t.Error("an expired entry still blocks")
	}
	d := Diff(m, next)
	if len(d.NewBlocklist) != 3 || len(d.OldBlocklist) != 0 {
		t.Fatalf("Diff: %+v", d)
	}
	b, err := next.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalMap(b)
	if err != nil {
		t.Fatal(err)
	}
	requireSameMap(t, back, next)

	rm := next.NewIncremental()
	rm.OldBlocklist = []string{"10.0.0.9"}
	after, err := next.Apply(rm)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.BlocklistAddrs(); !slices.Equal(got, []string{"10.0.0.5:6800", "10.0.0.7:6800/42"}) {
		t.Fatalf("after rm: %v", got)
	}
	if d := Diff(next, after); !slices.Equal(d.OldBlocklist, []string{"10.0.0.9"}) || len(d.NewBlocklist) != 0 {
		t.Fatalf("Diff of a removal: %+v", d)
	}
	bad := after.NewIncremental()
	bad.NewBlocklist = map[string]time.Time{"two words": now}
	if _, err := after.Apply(bad); err == nil {
		t.Fatal("a bad address applied")
	}
}

// Maps stored before the blocklist (version 2) load with none.
func TestMapVersion2DecodesWithoutBlocklist(t *testing.T) {
	m := sampleMaps(t)[1]
	data, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	hdr := len(mapMagic)
	v2 := bytes.Clone(data[:len(data)-1])
	v2[hdr] = 2
	n := binary.LittleEndian.Uint32(v2[hdr+2:])
	binary.LittleEndian.PutUint32(v2[hdr+2:], n-1)
	got, err := UnmarshalMap(v2)
	if err != nil {
		t.Fatal(err)
	}
	requireSameMap(t, got, m)
}
