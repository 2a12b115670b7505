package blockstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

// walFiles returns the names of the WAL files under dir.
func walFiles(t *testing.T, fs vfs.FS, dir string) map[string]bool {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	logs := map[string]bool{}
	for _, n := range names {
		if isWAL(n) {
			logs[n] = true
		}
	}
	return logs
}

// writeRounds writes a small overwrite (a deferred write) to each of n
// objects per round, and after each round flushes Pebble's memtables,
// which makes Pebble give up the WAL that holds the round's data.
func writeRounds(t *testing.T, s *Store, n, rounds int) map[objid.ID][]byte {
	t.Helper()
	want := map[objid.ID][]byte{}
	for i := range n {
		o := objid.Object(1, "", fmt.Sprint("w", i))
		want[o] = bytes.Repeat([]byte{'.'}, 2*testAU)
		apply(t, s, new(objectstore.Transaction).Write(pg, o, 0, want[o]))
	}
	for r := range rounds {
		for o, d := range want {
			msg := fmt.Sprintf("round %d", r)
			apply(t, s, new(objectstore.Transaction).Write(pg, o, 100, []byte(msg)))
			copy(d[100:], msg)
		}
		if err := s.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

// openUnapplied makes a store on a MemFS with a collection and opens it
// to leave its deferred writes unapplied, as a crash would; opts opens
// it normally.
func openUnapplied(t *testing.T) (vfs.FS, Options, *Store) {
	t.Helper()
	fs := vfs.NewMem()
	opts := testOptions(fs)
	s := mkfsOpen(t, opts)
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	skip := opts
	skip.testSkipDeferredApply = true
	return fs, opts, mustOpen(t, skip)
}

func deferredKeyCount(t *testing.T, db *pebble.DB) int {
	t.Helper()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{format.PrefixDeferred}, UpperBound: []byte{format.PrefixDeferred + 1}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if len(it.Value()) != 0 {
			t.Errorf("'D' key %x carries its data (%d bytes): want it in the WAL", it.Key(), len(it.Value()))
		}
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// Deferred data lives in the WAL only: after Pebble has flushed the
// memtables (and would remove or recycle their WALs), the WAL files
// holding unapplied deferred data stay, Open replays the writes from
// them, and removes them after.
func TestDeferredDataOutlivesItsWAL(t *testing.T) {
	ctx := context.Background()
	fs, opts, s := openUnapplied(t)
	want := writeRounds(t, s, 8, 4)
	if n := deferredKeyCount(t, s.db); n < 8*4 {
		t.Fatalf("%d 'D' keys, want at least %d", n, 8*4)
	}
	held := s.pipe.wals.heldCount()
	if held < 3 {
		t.Fatalf("%d WALs held after 4 flushes of unapplied deferred data, want at least 3", held)
	}
	if st, err := s.KVStats(ctx); err != nil || st.WALFilesHeld != held {
		t.Fatalf("KV stats: %d WALs held (%v), want %d", st.WALFilesHeld, err, held)
	}
	before := walFiles(t, fs, opts.dbPath())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Fsck finds the data in the WALs, and keeps them.
	if rep, err := Fsck(ctx, opts, FsckOptions{Deep: true, Repair: true}); err != nil || !rep.Clean() || rep.PendingDeferred < 8*4 {
		t.Fatalf("fsck: %v, %d pending, %v", err, rep.PendingDeferred, rep.Problems)
	}
	s = mustOpen(t, opts)
	for o, d := range want {
		if got := read(t, s, pg, o); !bytes.Equal(got, d) {
			t.Fatalf("%v after replay: %q, want %q", o, got[90:120], d[90:120])
		}
	}
	if n := deferredKeyCount(t, s.db); n != 0 {
		t.Errorf("%d 'D' keys left after the replay", n)
	}
	checkQuiescent(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after := walFiles(t, fs, opts.dbPath())
	kept := 0
	for n := range before {
		if after[n] {
			kept++
		}
	}
	// Pebble keeps the WAL it last wrote before the reopen; every
	// held one is gone.
	if kept > 1 {
		t.Errorf("%d of the %d WAL files from before the reopen remain: %v", kept, len(before), after)
	}
}

// Without the held WALs the replay has nothing to write: Open fails
// with ErrCorrupt, naming the write, rather than losing it quietly.
func TestDeferredDataMissingFailsOpen(t *testing.T) {
	fs, opts, s := openUnapplied(t)
	writeRounds(t, s, 4, 2)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for n := range walFiles(t, fs, opts.dbPath()) {
		if err := fs.Remove(fs.PathJoin(opts.dbPath(), n)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Open(opts)
	if !errors.Is(err, objectstore.ErrCorrupt) || !strings.Contains(err.Error(), "no WAL file") {
		t.Fatalf("open without the WALs holding deferred data: %v", err)
	}
	rep, err := Fsck(context.Background(), opts, FsckOptions{})
	if err != nil || rep.Counts[ProblemBadDeferred] == 0 {
		t.Fatalf("fsck without the WALs: %v, %v", err, rep.Problems)
	}
}

// In a store that applies its deferred writes, the WALs Pebble gives up
// are held only until the writes' deletions are durable, and a clean
// Close leaves none held.
func TestHeldWALsReleased(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	s := mkfsOpen(t, opts)
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	want := writeRounds(t, s, 2*maxUnsyncedDeferred, 2)
	checkQuiescent(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := s.pipe.wals.heldCount(); n != 0 {
		t.Errorf("%d WALs held after Close", n)
	}
	s = mustOpen(t, opts)
	defer s.Close()
	for o, d := range want {
		if got := read(t, s, pg, o); !bytes.Equal(got, d) {
			t.Fatalf("%v reads back wrong", o)
		}
	}
}

func TestWALKeeper(t *testing.T) {
	fs := vfs.NewMem()
	for _, n := range []string{"1.log", "2.log", "3.log"} {
		f, err := fs.Create(n, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
	}
	k := newWALKeeper(fs, slog.New(slog.DiscardHandler))
	if !k.keep("1.log") {
		t.Fatal("a WAL given up before the replay was not held")
	}
	k.endRecovery()
	if k.heldCount() != 0 || len(walFiles(t, fs, "")) != 2 {
		t.Fatalf("after the replay: %d held, files %v", k.heldCount(), walFiles(t, fs, ""))
	}
	k.hand(10)
	if !k.keep("2.log") {
		t.Fatal("a WAL that may hold seq 10 was not held")
	}
	k.deletedDurably(9)
	k.release()
	if k.heldCount() != 1 {
		t.Fatal("released before seq 10 was deleted durably")
	}
	k.deletedDurably(10)
	if k.keep("3.log") {
		t.Fatal("held a WAL with nothing left to replay")
	}
	k.release()
	if k.heldCount() != 0 || len(walFiles(t, fs, "")) != 1 {
		t.Fatalf("after the deletions: %d held, files %v", k.heldCount(), walFiles(t, fs, ""))
	}
	// A WAL Pebble has moved on from holds only what was handed before.
	k.started("4.log")
	k.hand(20)
	k.started("5.log")
	k.hand(30)
	if !k.keep("4.log") {
		t.Fatal("a WAL that may hold seq 20 was not held")
	}
	k.deletedDurably(20)
	k.release()
	if k.heldCount() != 0 {
		t.Fatal("a WAL ended at seq 20 still held once 20 was deleted")
	}
	k.started("6.log")
	if !k.keep("5.log") {
		t.Fatal("a WAL ended at seq 30 not held while 30 was not deleted")
	}
}

// A WAL carries at most maxLoggedPerWAL of deferred data: past it the
// committer has Pebble start another, though the memtable is far from
// full.
func TestWALBoundedByDeferredData(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	opts.testLoggedPerWAL = 16 * testCB
	s := mkfsOpen(t, opts)
	defer s.Close()
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	o := objid.Object(1, "", "o")
	apply(t, s, new(objectstore.Transaction).Write(pg, o, 0, make([]byte, testAU)))
	created := s.pipe.wals.created.Load()
	for i := range 64 {
		apply(t, s, new(objectstore.Transaction).Write(pg, o, uint64(i%4)*testCB, bytes.Repeat([]byte{byte(i)}, int(testCB))))
	}
	rotations := counter(s, "deferred_wal_rotations")
	if rotations < 3 || rotations > 4 {
		t.Errorf("%d rotations for 64 deferred blocks, 16 per WAL: want 3 or 4", rotations)
	}
	if n := s.pipe.wals.created.Load() - created; n < rotations {
		t.Errorf("%d WALs started after %d rotations", n, rotations)
	}
}

// The deletion of applied 'D' keys frees their WALs only once it is
// durable: a deletion committed without a sync waits for the next
// group's WAL sync.
func TestDeletionsFreeWALsOnceDurable(t *testing.T) {
	fs := vfs.NewMem()
	opts := testOptions(fs)
	s := mkfsOpen(t, opts)
	defer s.Close()
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	writeRounds(t, s, 8, 1)
	checkQuiescent(t, s) // the applier has applied the writes, not deleted them
	durable := func() uint64 {
		s.pipe.wals.mu.Lock()
		defer s.pipe.wals.mu.Unlock()
		return s.pipe.wals.durable
	}
	before := durable()
	if err := s.pipe.syncDeferred(pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	deleted := s.pipe.deferredCommitted.Load()
	if deleted == 0 || durable() != before {
		t.Fatalf("after an unsynced deletion through %d: durable %d, was %d", deleted, durable(), before)
	}
	apply(t, s, new(objectstore.Transaction).Touch(pg, objid.Object(1, "", "next")))
	if got := durable(); got < deleted {
		t.Fatalf("after the next group's sync: durable %d, want %d", got, deleted)
	}
}
