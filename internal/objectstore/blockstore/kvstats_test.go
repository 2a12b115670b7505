package blockstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

func TestKVStats(t *testing.T) {
	ctx := context.Background()
	s := mkfsOpen(t, testOptions(vfs.NewMem()))
	apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
	before, err := s.KVStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Levels) != 7 {
		t.Fatalf("%d levels, want 7", len(before.Levels))
	}
	for i := range 100 {
		apply(t, s, new(objectstore.Transaction).Write(pg, objid.Object(1, "", fmt.Sprint("obj", i)), 0, make([]byte, 4096)))
	}
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	after, err := s.KVStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 100 deferred 4 KiB writes went through the log.
	if logged := after.WALBytesIn - before.WALBytesIn; logged < 100*4096 {
		t.Errorf("WAL took %d bytes for 100 writes of 4 KiB", logged)
	}
	if after.Flushes <= before.Flushes || after.Levels[0].BytesWritten == 0 {
		t.Errorf("after a flush: %d flushes (%d before), %d bytes written to L0", after.Flushes, before.Flushes, after.Levels[0].BytesWritten)
	}
	var tables int64
	for _, l := range after.Levels {
		tables += l.Tables
	}
	if tables == 0 || after.Report == "" {
		t.Errorf("%d tables, report %q", tables, after.Report)
	}
	if _, err := json.Marshal(after); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KVStats(ctx); !errors.Is(err, objectstore.ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}
