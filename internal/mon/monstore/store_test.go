package monstore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// TestEntrySize checks that entrySize is the protobuf size raft counts.
func TestEntrySize(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	d := &diffRun{r: r}
	for range 2000 {
		e := d.randEntry(r.Uint64()>>r.IntN(64), r.Uint64()>>r.IntN(64))
		switch r.IntN(5) {
		case 0:
			e.Term = nil
		case 1:
			e.Index = nil
		case 2:
			e.Type = pb.EntryType(-1 - r.IntN(3)).Enum() // negative enums take 10 bytes
		}
		if got, want := entrySize(e), uint64(proto.Size(e)); got != want {
			t.Fatalf("entrySize(%v) = %d, proto.Size = %d", e, got, want)
		}
		k := entryKey(e.GetIndex())
		back, err := decodeEntry(k, encodeEntry(e))
		if err != nil || !proto.Equal(back, e) {
			t.Fatalf("round trip of %v: %v, %v", e, back, err)
		}
	}
}

func TestAppendContract(t *testing.T) {
	s := testOpen(t, vfs.NewMem(), "mon")
	defer s.Close()
	ents := func(from, n, term uint64) []*pb.Entry {
		var out []*pb.Entry
		for i := range n {
			out = append(out, mkEntry(from+i, term, nil))
		}
		return out
	}
	if err := s.Append(mkHardState(1, 1, 0), ents(1, 5, 1), nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ents []*pb.Entry
	}{
		{"gap", ents(7, 1, 1)},
		{"not contiguous", append(ents(6, 1, 1), ents(8, 1, 1)...)},
		{"term regress inside", append(ents(6, 1, 2), ents(7, 1, 1)...)},
		{"term below previous entry", ents(6, 1, 0)},
	} {
		if err := s.Append(nil, tc.ents, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
		}
	}
	if err := s.Commit(3, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(nil, ents(3, 2, 2), nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("overwrite of applied entry 3: %v, want ErrInvalid", err)
	}
	// Overwriting the unapplied suffix with a shorter one truncates.
	if err := s.Append(nil, ents(4, 1, 2), nil); err != nil {
		t.Fatal(err)
	}
	if last, _ := s.LastIndex(); last != 4 {
		t.Fatalf("last index %d after truncating append, want 4", last)
	}
	for _, tc := range []struct {
		applied uint64
	}{{3}, {2}, {5}} {
		if err := s.Commit(tc.applied, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("Commit(%d): %v, want ErrInvalid", tc.applied, err)
		}
	}
	if err := s.Compact(4); !errors.Is(err, ErrInvalid) {
		t.Errorf("compact beyond applied: %v", err)
	}
	if err := s.Compact(9); !errors.Is(err, raft.ErrUnavailable) {
		t.Errorf("compact beyond last: %v", err)
	}
	if err := s.Compact(3); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(2); !errors.Is(err, raft.ErrCompacted) {
		t.Errorf("compact below log start: %v", err)
	}
	if _, err := s.Entries(3, 4, 100); err != raft.ErrCompacted {
		t.Errorf("Entries at the log start: %v", err)
	}
	if _, err := s.Entries(4, 6, 100); err != raft.ErrUnavailable {
		t.Errorf("Entries beyond the last entry: %v", err)
	}
	if tm, err := s.Term(3); tm != 1 || err != nil {
		t.Errorf("Term(3) = %d, %v after compaction", tm, err)
	}
}

func TestClosed(t *testing.T) {
	s := testOpen(t, vfs.NewMem(), "mon")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Append(mkHardState(1, 1, 0), nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Append: %v", err)
	}
	if _, err := s.Term(0); !errors.Is(err, ErrClosed) {
		t.Errorf("Term: %v", err)
	}
	if _, err := s.Get("kv", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Get: %v", err)
	}
	if _, err := s.Snapshot(); !errors.Is(err, ErrClosed) {
		t.Errorf("Snapshot: %v", err)
	}
}

func TestServiceKeys(t *testing.T) {
	s := testOpen(t, vfs.NewMem(), "mon")
	defer s.Close()
	if err := s.Append(nil, []*pb.Entry{mkEntry(1, 1, nil), mkEntry(2, 1, nil)}, nil); err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	b.Put("a", []byte("x/1"), []byte("1"))
	b.Put("a", []byte("x/2"), []byte("2"))
	b.Put("a", []byte("y"), []byte("3"))
	b.Put("ab", []byte("x/3"), nil) // a service whose name extends another's
	if err := s.Commit(1, b); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := s.Scan("a", []byte("x/"), func(k, v []byte) error {
		got = append(got, fmt.Sprintf("%s=%s", k, v))
		return nil
	})
	if err != nil || fmt.Sprint(got) != "[x/1=1 x/2=2]" {
		t.Fatalf("Scan: %v, %v", got, err)
	}
	if v, err := s.Get("ab", []byte("x/3")); err != nil || len(v) != 0 {
		t.Fatalf("Get empty value: %q, %v", v, err)
	}
	if _, err := s.Get("a", []byte("z")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get missing: %v", err)
	}
	b = s.NewBatch()
	b.DeletePrefix("a", []byte("x/"))
	b.Delete("a", []byte("y"))
	if err := s.Commit(2, b); err != nil {
		t.Fatal(err)
	}
	n := 0
	s.Scan("a", nil, func(k, v []byte) error { n++; return nil })
	if n != 0 {
		t.Fatalf("%d keys left in service a", n)
	}
	stop := errors.New("stop")
	if err := s.Scan("ab", nil, func(k, v []byte) error { return stop }); err != stop {
		t.Fatalf("Scan does not return fn's error: %v", err)
	}
	for _, bad := range []string{"", "a\x00b", string(make([]byte, MaxServiceName+1))} {
		if err := s.NewBatch().Put(bad, nil, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("Put to service %q: %v", bad, err)
		}
	}
	if err := s.NewBatch().Put("a", make([]byte, MaxKey+1), nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Put of a long key: %v", err)
	}
}

func TestHistory(t *testing.T) {
	s := testOpen(t, vfs.NewMem(), "mon")
	defer s.Close()
	var ents []*pb.Entry
	for i := uint64(1); i <= 10; i++ {
		ents = append(ents, mkEntry(i, 1, nil))
	}
	if err := s.Append(nil, ents, nil); err != nil {
		t.Fatal(err)
	}
	if first, last, err := s.Epochs("osdmap"); first != 0 || last != 0 || err != nil {
		t.Fatalf("empty history: %d %d %v", first, last, err)
	}
	b := s.NewBatch()
	if err := b.PutEpoch("osdmap", 0, []byte("i"), nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("epoch 0: %v", err)
	}
	b = s.NewBatch()
	for e := uint64(5); e <= 9; e++ {
		if err := b.PutEpoch("osdmap", e, fmt.Appendf(nil, "inc%d", e), fmt.Appendf(nil, "full%d", e)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(1, b); err != nil {
		t.Fatal(err)
	}
	if first, last, _ := s.Epochs("osdmap"); first != 5 || last != 9 {
		t.Fatalf("history [%d, %d], want [5, 9]", first, last)
	}
	b = s.NewBatch()
	if err := b.PutEpoch("osdmap", 11, nil, []byte("f")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("gap in epochs: %v", err)
	}
	b = s.NewBatch()
	b.PutEpoch("osdmap", 10, nil, []byte("full10"))
	b.Trim("osdmap", 8)
	b.Trim("osdmap", 3) // below the first: nothing
	if err := s.Commit(2, b); err != nil {
		t.Fatal(err)
	}
	if first, last, _ := s.Epochs("osdmap"); first != 8 || last != 10 {
		t.Fatalf("history [%d, %d], want [8, 10]", first, last)
	}
	for e := uint64(5); e <= 10; e++ {
		full, errF := s.Full("osdmap", e)
		inc, errI := s.Inc("osdmap", e)
		switch {
		case e < 8:
			if !errors.Is(errF, ErrNotFound) || !errors.Is(errI, ErrNotFound) {
				t.Errorf("epoch %d kept after trim: %v %v", e, errF, errI)
			}
		case e == 10:
			if string(full) != "full10" || !errors.Is(errI, ErrNotFound) {
				t.Errorf("epoch 10: %q %v %v", full, errF, errI)
			}
		default:
			if string(full) != fmt.Sprint("full", e) || string(inc) != fmt.Sprint("inc", e) {
				t.Errorf("epoch %d: %q %q %v %v", e, full, inc, errF, errI)
			}
		}
	}
	b = s.NewBatch()
	b.Trim("osdmap", 100) // keeps the last epoch
	if err := s.Commit(3, b); err != nil {
		t.Fatal(err)
	}
	if first, last, _ := s.Epochs("osdmap"); first != 10 || last != 10 {
		t.Fatalf("history [%d, %d] after trimming everything, want [10, 10]", first, last)
	}
}

// TestSnapshotRoundTrip builds a snapshot on one store and installs it on
// another through Append, as a lagging follower does.
func TestSnapshotRoundTrip(t *testing.T) {
	src := testOpen(t, vfs.NewMem(), "mon")
	defer src.Close()
	if _, err := src.Snapshot(); err != raft.ErrSnapshotTemporarilyUnavailable {
		t.Fatalf("Snapshot before anything is applied: %v", err)
	}
	if err := src.Append(mkHardState(3, 1, 3), []*pb.Entry{mkEntry(1, 2, nil), mkEntry(2, 3, nil), mkEntry(3, 3, nil)}, nil); err != nil {
		t.Fatal(err)
	}
	b := src.NewBatch()
	b.Put("kv", []byte("k"), []byte("v"))
	b.Put("auth", []byte("client.admin"), bytes.Repeat([]byte{7}, 1000))
	b.PutEpoch("osdmap", 1, nil, []byte("full1"))
	b.SetConfState(&pb.ConfState{Voters: []uint64{1, 2, 3}, Learners: []uint64{4}})
	if err := src.Commit(2, b); err != nil {
		t.Fatal(err)
	}
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if md := snap.GetMetadata(); md.GetIndex() != 2 || md.GetTerm() != 3 || fmt.Sprint(md.GetConfState().GetLearners()) != "[4]" {
		t.Fatalf("snapshot metadata %v", md)
	}
	again, _ := src.Snapshot()
	if &again.Data[0] != &snap.Data[0] {
		t.Error("Snapshot at the same applied index was built again")
	}

	dst := testOpen(t, vfs.NewMem(), "mon")
	defer dst.Close()
	// A follower with a conflicting log and a stale key.
	if err := dst.Append(mkHardState(1, 2, 0), []*pb.Entry{mkEntry(1, 1, nil), mkEntry(2, 1, nil), mkEntry(3, 1, nil)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := dst.Commit(1, nil); err != nil {
		t.Fatal(err)
	}
	bad := &pb.Snapshot{Data: flip(snap.Data, 10), Metadata: snap.Metadata}
	if err := dst.Append(nil, nil, bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt snapshot: %v", err)
	}
	wrong := mkSnapshot(5, 3, []uint64{1}, nil) // payload at 5, metadata below says 2
	wrong.Metadata = snap.Metadata
	if err := dst.Append(nil, nil, wrong); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("snapshot with a payload at another index: %v", err)
	}
	if err := dst.Append(mkHardState(3, 1, 2), []*pb.Entry{mkEntry(3, 3, []byte("after"))}, snap); err != nil {
		t.Fatal(err)
	}
	want := dump(t, src)
	got := dump(t, dst)
	// The logs differ (dst's starts after the snapshot and has entry 3 from
	// the same Ready); the applied state and key space must not.
	if a, b := got[bytes.IndexByte([]byte(got), '\n'):], want[bytes.IndexByte([]byte(want), '\n'):]; a == b {
		t.Fatal("dumps unexpectedly equal including logs")
	}
	if first, _ := dst.FirstIndex(); first != 3 {
		t.Fatalf("first index %d after installing a snapshot at 2", first)
	}
	if applied, _ := dst.AppliedIndex(); applied != 2 {
		t.Fatalf("applied %d", applied)
	}
	if tm, _ := dst.Term(2); tm != 3 {
		t.Fatalf("term of the snapshot index %d", tm)
	}
	_, srcData, _ := src.SnapshotData()
	_, dstData, _ := dst.SnapshotData()
	if !bytes.Equal(srcData, dstData) {
		t.Fatal("key spaces differ after installing the snapshot")
	}
	_, cs, _ := dst.InitialState()
	if cs.Equivalent(snap.GetMetadata().GetConfState()) != nil {
		t.Fatalf("ConfState %v", cs)
	}
	if err := dst.Append(nil, nil, snap); !errors.Is(err, raft.ErrSnapOutOfDate) {
		t.Fatalf("installing it again: %v", err)
	}

	small, err := Open(Options{FS: vfs.NewMem(), Dir: "mon", MaxSnapshotBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	if err := small.Append(nil, nil, snap); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("snapshot above MaxSnapshotBytes: %v", err)
	}
}

func TestBootstrapConfState(t *testing.T) {
	s := testOpen(t, vfs.NewMem(), "mon")
	defer s.Close()
	snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{ConfState: &pb.ConfState{Voters: []uint64{1, 2}}}}
	if err := s.ApplySnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if _, cs, _ := s.InitialState(); fmt.Sprint(cs.GetVoters()) != "[1 2]" {
		t.Fatalf("ConfState %v", cs)
	}
	if err := s.Append(nil, []*pb.Entry{mkEntry(1, 1, nil)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.ApplySnapshot(snap); !errors.Is(err, raft.ErrSnapOutOfDate) {
		t.Fatalf("bootstrap of a non-empty store: %v", err)
	}
}
