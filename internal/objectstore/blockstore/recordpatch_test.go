package blockstore

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEncodeRecordPatch checks that patching a base record's encoding
// gives the same bytes as encoding from scratch, whatever changed.
func TestEncodeRecordPatch(t *testing.T) {
	sb := superblock{Size: 1 << 30, AllocUnit: testAU, ChecksumBlock: testCB}
	r := rand.New(rand.NewPCG(3, 4))
	base := &onode{Nid: 7, Size: 20 * testAU, Attrs: map[string][]byte{"a": []byte("x")}, Pages: []span{{0, 20 * testAU}}}
	for lu := range uint64(20) {
		dev := lu * testAU
		if lu >= 10 {
			dev += 5 * testAU // two extents
		}
		cs := make([]uint32, sb.blocksPerUnit())
		for i := range cs {
			cs[i] = r.Uint32()
		}
		base.Units = append(base.Units, unit{LU: lu, Dev: dev, Csums: cs})
	}
	base.encodeRecord(sb)
	if base.enc == nil {
		t.Fatal("no encoding kept for a big record")
	}
	for i := range 200 {
		n := base.clone()
		switch i % 4 {
		case 0, 1: // checksums only: patched
			for range 1 + r.IntN(3) {
				u := r.IntN(len(n.Units))
				cs := slices.Clone(n.Units[u].Csums)
				cs[r.IntN(len(cs))] = r.Uint32()
				n.Units[u].Csums = cs
			}
		case 2:
			n.Size++
		case 3:
			n.Attrs["b"] = []byte{byte(i)}
		}
		got := n.encodeRecord(sb)
		fresh := *n
		fresh.base, fresh.enc = nil, nil
		if want := fresh.encode(sb); !bytes.Equal(got, want) {
			t.Fatalf("case %d: patched encoding differs", i)
		}
		if _, err := decodeOnode(got, sb); err != nil {
			t.Fatal(err)
		}
		if i%4 < 2 {
			base = n // chain: patch a patched record
		}
	}
}
