package blockstore

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// The overlay answers with the newest version at or before a sequence
// number, whether it is a deferred block or part of a copy-on-write run,
// and forgets runs by sequence number.
func TestDataOverlayVersions(t *testing.T) {
	const cb = 4
	var d dataOverlay
	d.init()
	d.putRun(1, 100, []byte("aaaabbbbcccc")) // blocks 100, 104, 108
	d.put(2, 104, []byte("BBBB"))            // deferred overwrite of 104
	d.putRun(3, 200, []byte("xxxx"))
	check := func(devOff, seq uint64, want string) {
		t.Helper()
		got, ok := d.visible(devOff, seq, cb)
		if want == "" {
			if ok {
				t.Errorf("visible(%d, %d) = %q, want none", devOff, seq, got)
			}
			return
		}
		if !ok || string(got) != want {
			t.Errorf("visible(%d, %d) = %q, %v; want %q", devOff, seq, got, ok, want)
		}
	}
	check(100, 0, "")
	check(100, 1, "aaaa")
	check(104, 1, "bbbb")
	check(104, 2, "BBBB")
	check(108, 9, "cccc")
	check(112, 9, "") // past the run
	check(200, 2, "")
	check(200, 3, "xxxx")
	if got, _ := d.latest(104, cb); string(got) != "BBBB" {
		t.Errorf("latest(104) = %q", got)
	}
	// A run newer than a deferred version wins.
	d.putRun(4, 104, []byte("NNNN"))
	if got, _ := d.latest(104, cb); string(got) != "NNNN" {
		t.Errorf("latest(104) after a newer run = %q", got)
	}
	d.dropRuns(3)
	check(100, 9, "")
	check(104, 2, "BBBB")
	check(104, 9, "NNNN")
	check(200, 9, "")
	d.dropRuns(4)
	d.drop(104, 2)
	if d.any() {
		t.Fatalf("overlay still holds %d entries", d.len())
	}
}

// Transactions queued back to back, each partly overwriting blocks the
// one before wrote by copy-on-write, build on data that may not be on
// the file yet: they must see it in the overlay.
func TestQueuedOverwritesOfUnwrittenData(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	s := mkfsOpen(t, opts)
	defer s.Close()
	ctx := context.Background()
	c := objectstore.PGCollection(1, 0)
	apply(t, s, new(objectstore.Transaction).CreateCollection(c))
	r := rand.New(rand.NewPCG(7, 8))
	for round := range 20 {
		o := objid.Object(1, "", string(rune('a'+round)))
		want := randBytes(r, 16*testAU)
		comps := make([]*objectstore.Completion, 0, 9)
		// The store keeps what it is given until applied: queue a copy,
		// as want changes below.
		comp, err := s.Queue(ctx, new(objectstore.Transaction).Write(c, o, 0, slices.Clone(want)))
		if err != nil {
			t.Fatal(err)
		}
		comps = append(comps, comp)
		for range 8 {
			off, d := r.IntN(len(want)-100), randBytes(r, 1+r.IntN(100))
			copy(want[off:], d)
			comp, err := s.Queue(ctx, new(objectstore.Transaction).Write(c, o, uint64(off), d))
			if err != nil {
				t.Fatal(err)
			}
			comps = append(comps, comp)
		}
		for _, comp := range comps {
			if err := comp.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := read(t, s, c, o); !bytes.Equal(got, want) {
			t.Fatalf("round %d: object differs from its writes", round)
		}
	}
}

// A write's DataCRCs become the blocks' checksums without hashing: right
// ones read back and pass a deep fsck; a wrong one (the data changed in
// memory after the messenger checked it) makes the block read as corrupt
// instead of being blessed with a fresh checksum.
func TestWriteKeepsGivenDataCRCs(t *testing.T) {
	opts := testOptions(vfs.NewMem())
	s := mkfsOpen(t, opts)
	c := objectstore.PGCollection(1, 0)
	apply(t, s, new(objectstore.Transaction).CreateCollection(c))
	if s.sb.ChecksumBlock != objectstore.DataCRCPiece {
		t.Skipf("checksum block %d", s.sb.ChecksumBlock)
	}
	r := rand.New(rand.NewPCG(9, 10))
	data := randBytes(r, 8*objectstore.DataCRCPiece+100)
	crcs := make([]uint32, 8)
	for i := range crcs {
		crcs[i] = crc32.Checksum(data[i*objectstore.DataCRCPiece:(i+1)*objectstore.DataCRCPiece], s.table)
	}
	good, bad := objid.Object(1, "", "good"), objid.Object(1, "", "bad")
	tx := new(objectstore.Transaction).Write(c, good, 0, data)
	tx.Ops[0].DataCRCs = crcs
	apply(t, s, tx)
	if got := read(t, s, c, good); !bytes.Equal(got, data) {
		t.Fatal("object written with its data checksums reads back other bytes")
	}
	wrong := slices.Clone(crcs)
	wrong[5] ^= 1
	tx = new(objectstore.Transaction).Write(c, bad, 0, data)
	tx.Ops[0].DataCRCs = wrong
	apply(t, s, tx)
	if _, err := s.Read(context.Background(), c, bad, 0, 0); !errors.Is(err, objectstore.ErrCorrupt) {
		t.Fatalf("read with a wrong given checksum: %v, want ErrCorrupt", err)
	}
	tx = new(objectstore.Transaction).Write(c, good, 0, data[:2*objectstore.DataCRCPiece])
	tx.Ops[0].DataCRCs = crcs[:3]
	if err := objectstore.Apply(context.Background(), s, tx); !errors.Is(err, objectstore.ErrInvalid) {
		t.Fatalf("more checksums than pieces: %v, want ErrInvalid", err)
	}
	tx = new(objectstore.Transaction).Remove(c, bad)
	apply(t, s, tx)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Fsck(context.Background(), opts, FsckOptions{Deep: true})
	if err != nil || !rep.Clean() {
		t.Fatalf("deep fsck: %v, %v", err, rep.Problems)
	}
}
