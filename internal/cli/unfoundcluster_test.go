package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/launcher"
	"github.com/cuttlestore/cuttle/internal/mon/osdmon"
	"golang.org/x/sys/unix"
)

// `cuttle pg mark_unfound_lost PGID revert` against launched daemons:
// only one OSD took an object's newest write, and its copy of it rots
// on disk while it is stopped; the other two hold the version before.
// When all three return, peering finds no readable copy of the newest
// version (OBJECT_UNFOUND); revert takes the object back to the older
// copy, which every member then serves, and a deep scrub finds the
// copies consistent.
func TestUnfoundObjectRevertedAcrossProcesses(t *testing.T) {
	s := newSURFClusterOf(t, 1, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s.cli("osd", "pool", "set", "rbd", "min_size", "1", "--yes-i-really-mean-it")
	mapFile := filepath.Join(t.TempDir(), "osdmap")
	s.cli("osd", "getmap", "-o", mapFile)
	var where struct {
		PGID   string `json:"pgid"`
		Acting []int  `json:"acting"`
	}
	if err := json.Unmarshal([]byte(s.cli("--format", "json", "osdmap", "map-object", mapFile, "rbd", "doomed")), &where); err != nil || len(where.Acting) != 3 {
		t.Fatalf("osdmap map-object: %+v, %v", where, err)
	}
	name := func(i int) string { return fmt.Sprint("osd.", where.Acting[i]) }
	primary, keeper, other := name(0), name(1), name(2)
	upCount := func() int {
		var st osdmon.StatView
		if err := json.Unmarshal([]byte(s.cli("--format", "json", "osd", "stat")), &st); err != nil {
			t.Fatal(err)
		}
		return st.NumUp
	}
	stop := func(osd string) { // SIGTERM: it asks to be marked down first
		t.Helper()
		if err := syscall.Kill(localStatus(t, s.dir)[osd].PID, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		s.waitFor(osd+" to stop", time.Minute, func() bool { return localStatus(t, s.dir)[osd].State == launcher.Stopped })
	}
	// Large enough to be written in place on the device, not through
	// the store's metadata log.
	content := func(v int) []byte { return bytes.Repeat(fmt.Appendf(nil, "doomed v%d ", v), 50_000) }

	if err := s.io.WriteFull(ctx, "doomed", content(1)); err != nil {
		t.Fatal(err)
	}
	stop(primary)
	stop(other)
	s.waitFor("two OSDs down", time.Minute, func() bool { return upCount() == 1 })
	if err := s.io.WriteFull(ctx, "doomed", content(2)); err != nil { // the keeper alone
		t.Fatal(err)
	}
	stop(keeper)
	rot(t, filepath.Join(s.dir, keeper), where.PGID, "doomed")

	// cluster up waits for every PG to be active, which this one will
	// not be: the daemons it started keep running.
	if out, stderr, err := cuttleProc(t, "--timeout", "15s", "cluster", "up", "--dir", s.dir); err == nil || !strings.Contains(stderr, "is not healthy after") {
		t.Fatalf("cluster up again: %v, want it to wait in vain for the PG\n%s%s", err, out, stderr)
	}
	s.waitFor("every OSD up", time.Minute, func() bool { return upCount() == 3 })
	s.waitFor("OBJECT_UNFOUND", 2*time.Minute, func() bool { return strings.Contains(s.cli("health", "detail"), "OBJECT_UNFOUND") })
	var out string
	s.waitFor("the primary to take mark_unfound_lost", time.Minute, func() bool {
		var err error
		out, _, err = run(t, "--conf", s.conf, "pg", "mark_unfound_lost", where.PGID, "revert")
		return err == nil
	})
	if want := fmt.Sprintf("pg %s: 1 unfound objects will be reverted", where.PGID); !strings.HasPrefix(out, want) {
		t.Fatalf("mark_unfound_lost revert: %q, want %q...", out, want)
	}
	s.healthOK()
	if got, err := s.io.Read(ctx, "doomed", 0, 0); err != nil || !bytes.Equal(got, content(1)) {
		t.Fatalf("doomed after the revert: %.20q (%d bytes), %v; want v1", got, len(got), err)
	}
	// Every member serves v1: each, stopped in turn, leaves the others.
	for _, osd := range []string{primary, keeper} {
		stop(osd)
		s.waitFor(osd+" down", time.Minute, func() bool { return upCount() == 2 })
		if got, err := s.io.Read(ctx, "doomed", 0, 0); err != nil || !bytes.Equal(got, content(1)) {
			t.Fatalf("doomed without %s: %.20q, %v; want v1", osd, got, err)
		}
		s.restart()
		s.waitFor("every OSD up", time.Minute, func() bool { return upCount() == 3 })
	}
	s.healthOK()
	s.scrubAll([]string{where.PGID}, "deep-scrub")
	if h := s.cli("health", "detail"); !strings.HasPrefix(h, "HEALTH_OK") {
		t.Fatalf("after a deep scrub of pg %s:\n%s", where.PGID, h)
	}
}

// rot overwrites the first 4 KiB of object name's data in PG pgid on the
// stopped OSD whose data directory is dir, as a failing disk would: the
// store's checksums no longer match, and reads of the copy fail.
func rot(t *testing.T, dir, pgid, name string) {
	t.Helper()
	out, stderr, err := run(t, "--format", "json", "objectstore", "dump", "--path", dir, "--collection", pgid+"_head", "--object", name)
	if err != nil {
		t.Fatalf("objectstore dump: %v %s", err, stderr)
	}
	var dump struct {
		Layout struct {
			Extents []struct {
				DeviceOffset int64 `json:"device_offset"`
			} `json:"extents"`
		} `json:"layout"`
	}
	if err := json.Unmarshal([]byte(out), &dump); err != nil || len(dump.Layout.Extents) == 0 {
		t.Fatalf("objectstore dump: %v, no extents in\n%s", err, out)
	}
	f, err := os.OpenFile(filepath.Join(dir, "block"), os.O_WRONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	junk, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE) // page-aligned
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(junk)
	rand.Read(junk)
	if _, err := f.WriteAt(junk, dump.Layout.Extents[0].DeviceOffset); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		t.Fatal(err)
	}
}
