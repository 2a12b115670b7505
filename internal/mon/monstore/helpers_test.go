package monstore

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	pb "go.etcd.io/raft/v3/raftpb"
)

func testOpen(t testing.TB, fs vfs.FS, dir string) *Store {
	t.Helper()
	s, err := Open(Options{FS: fs, Dir: dir})
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return s
}

func mkEntry(index, term uint64, data []byte) *pb.Entry {
	return &pb.Entry{Index: new(index), Term: new(term), Type: pb.EntryNormal.Enum(), Data: data}
}

func mkHardState(term, vote, commit uint64) *pb.HardState {
	return &pb.HardState{Term: new(term), Vote: new(vote), Commit: new(commit)}
}

// mkSnapshot returns a snapshot at index/term whose payload holds recs.
func mkSnapshot(index, term uint64, voters []uint64, recs []snapshotRecord) *pb.Snapshot {
	slices.SortFunc(recs, func(a, b snapshotRecord) int { return compareRecords(&a, &b) })
	return &pb.Snapshot{
		Data: encodeSnapshotData(index, recs),
		Metadata: &pb.SnapshotMetadata{
			Index: new(index), Term: new(term),
			ConfState: &pb.ConfState{Voters: voters, AutoLeave: new(false)},
		},
	}
}

// dump renders everything the store holds, through its API where there is
// one, so that two stores can be compared as text.
func dump(t testing.TB, s *Store) string {
	t.Helper()
	var b strings.Builder
	hs, cs, err := s.InitialState()
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	applied, _ := s.AppliedIndex()
	term, err := s.Term(first - 1)
	if err != nil {
		t.Fatalf("dump: term %d: %v", first-1, err)
	}
	fmt.Fprintf(&b, "hs %d/%d/%d conf %v/%v log [%d,%d] start term %d applied %d\n",
		hs.GetTerm(), hs.GetVote(), hs.GetCommit(), cs.GetVoters(), cs.GetLearners(), first, last, term, applied)
	if last >= first {
		ents, err := s.Entries(first, last+1, ^uint64(0))
		if err != nil {
			t.Fatalf("dump: entries: %v", err)
		}
		for _, e := range ents {
			fmt.Fprintf(&b, "  %d/%d %v %q\n", e.GetIndex(), e.GetTerm(), e.GetType(), e.GetData())
		}
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixService}, UpperBound: []byte{prefixEnd}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		svc, key, err := splitServiceKey(it.Key())
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.Get(svc, key)
		if err != nil {
			t.Fatalf("dump: get %s %q: %v", svc, key, err)
		}
		fmt.Fprintf(&b, "  %s %q = %q\n", svc, key, v)
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// diffLines returns the first differing line of two dumps.
func diffLines(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, x, y)
		}
	}
	return "equal"
}
