package monstore

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/pebblelog"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// corruptBase builds a store with a HardState, a compacted log, an applied
// index and service values, closes it and returns its file system.
func corruptBase(t *testing.T) *vfs.MemFS {
	fs := vfs.NewMem()
	s := testOpen(t, fs, "mon")
	for i := uint64(1); i <= 6; i++ {
		if err := s.Append(mkHardState(2, 1, i), []*pb.Entry{mkEntry(i, 2, fmt.Appendf(nil, "e%d", i))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	b := s.NewBatch()
	b.Put("kv", []byte("a"), []byte("1"))
	b.PutEpoch("osdmap", 1, []byte("inc"), []byte("full"))
	if err := s.Commit(4, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(2); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return fs
}

// rawSet writes a raw key and value into the store's database, as damage
// or a buggy writer would.
func rawSet(t *testing.T, fs vfs.FS, key, value []byte, del bool) {
	t.Helper()
	db, err := pebble.Open("mon", &pebble.Options{FS: fs, Logger: pebblelog.Logger{Log: slog.New(slog.DiscardHandler), Prefix: "monstore"}})
	if err != nil {
		t.Fatal(err)
	}
	if del {
		err = db.Delete(key, pebble.Sync)
	} else {
		err = db.Set(key, value, pebble.Sync)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func flip(v []byte, i int) []byte {
	v = append([]byte(nil), v...)
	v[i%len(v)] ^= 0x40
	return v
}

// TestCorruptOpen damages one record at a time; Open must fail with
// ErrCorrupt and a message naming the problem, never panic.
func TestCorruptOpen(t *testing.T) {
	hs := encodeHardState(mkHardState(2, 1, 6))
	e5 := encodeEntry(mkEntry(5, 2, []byte("e5")))
	sealed := func(key []byte, body []byte) []byte { return seal(key, body) }
	for _, tc := range []struct {
		name  string
		key   []byte
		value []byte
		del   bool
	}{
		{"format checksum", keyFormat, flip(encodeFormat(), 3), false},
		{"format version", keyFormat, sealed(keyFormat, []byte{1, 1, 4, 0, 0, 0, 9, 0, 0, 0}), false},
		{"hard state checksum", keyHardState, flip(hs, 7), false},
		{"hard state short", keyHardState, []byte{1, 2}, false},
		{"hard state envelope", keyHardState, sealed(keyHardState, []byte{1, 1, 200, 0, 0, 0, 1}), false},
		{"log state", keyLogState, sealed(keyLogState, []byte{1, 1, 1, 0, 0, 0, 0x80}), false},
		{"applied checksum", keyApplied, flip(encodeApplied(appliedState{index: 4}), 2), false},
		{"applied beyond log", keyApplied, encodeApplied(appliedState{index: 9}), false},
		{"entry checksum", entryKey(5), flip(e5, 9), false},
		{"entry under wrong key", entryKey(5), encodeEntry(mkEntry(4, 2, []byte("e4"))), false},
		{"entry index mismatch", entryKey(5), sealed(entryKey(5), encodeEntryBody(t, mkEntry(4, 2, nil))), false},
		{"entry missing", entryKey(4), nil, true},
		{"entry term regress", entryKey(6), encodeEntry(mkEntry(6, 1, nil)), false},
		{"entry below log start", entryKey(1), encodeEntry(mkEntry(1, 2, nil)), false},
		{"malformed entry key", []byte{prefixEntry, 1}, []byte("x"), false},
		{"format missing", keyFormat, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := corruptBase(t)
			rawSet(t, fs, tc.key, tc.value, tc.del)
			s, err := Open(Options{FS: fs, Dir: "mon"})
			if err == nil {
				s.Close()
				t.Fatal("open succeeded")
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open: %v, want ErrCorrupt", err)
			}
			t.Log(err)
		})
	}
}

// encodeEntryBody returns an entry's encoding without the seal.
func encodeEntryBody(t *testing.T, e *pb.Entry) []byte {
	v := encodeEntry(e)
	return v[:len(v)-4]
}

// TestCorruptServiceValue damages a service value: Get, Scan, Epochs and
// SnapshotData report ErrCorrupt, Snapshot asks raft to retry later.
func TestCorruptServiceValue(t *testing.T) {
	fs := corruptBase(t)
	k := serviceKey("kv", []byte("a"))
	rawSet(t, fs, k, flip(seal(k, []byte("1")), 0), false)
	k2 := serviceKey("osdmap", []byte(keyLastCommitted))
	rawSet(t, fs, k2, seal(k2, []byte{1, 1, 1, 0, 0, 0}), false) // truncated envelope
	s := testOpen(t, fs, "mon")
	defer s.Close()
	if _, err := s.Get("kv", []byte("a")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Get: %v", err)
	}
	if err := s.Scan("kv", nil, func(k, v []byte) error { return nil }); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Scan: %v", err)
	}
	if _, _, err := s.Epochs("osdmap"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Epochs: %v", err)
	}
	if _, _, err := s.SnapshotData(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("SnapshotData: %v", err)
	}
	if _, err := s.Snapshot(); err != raft.ErrSnapshotTemporarilyUnavailable {
		t.Errorf("Snapshot: %v", err)
	}
	b := s.NewBatch()
	if err := b.PutEpoch("osdmap", 2, []byte("x"), nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("PutEpoch: %v", err)
	}
	if err := s.Commit(5, b); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Commit of a failed batch: %v", err)
	}
	if applied, _ := s.AppliedIndex(); applied != 4 {
		t.Errorf("applied %d after a refused commit", applied)
	}
}
