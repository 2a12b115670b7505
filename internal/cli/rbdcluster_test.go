package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// `cuttle rbd` against a cluster that `cuttle cluster up` started (one
// monitor, three OSD processes, cephx), every command a process of its
// own: images made, listed, described, resized, snapshotted, rolled back
// and removed, and the objects of docs/FORMATS.md ("Block images") in
// the pool along the way.
func TestRBDClusterUp(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2")
	out, stderr, err := cuttleProc(t, "cluster", "up", "--fs=false", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osds", "3", "--osd-size", "1G")
	if err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	conf := filepath.Join(dir, "cuttle.conf")
	cut := func(args ...string) string {
		t.Helper()
		out, stderr, err := cuttleIn(t, nil, append([]string{"--conf", conf}, args...)...)
		if err != nil {
			t.Fatalf("cuttle %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	fails := func(want string, args ...string) {
		t.Helper()
		_, stderr, err := cuttleIn(t, nil, append([]string{"--conf", conf}, args...)...)
		if err == nil || !strings.Contains(stderr, want) {
			t.Errorf("cuttle %s: %v, stderr %q; want an error with %q", strings.Join(args, " "), err, stderr, want)
		}
	}

	cut("rbd", "create", "disk", "--size", "64M", "--object-size", "1M")
	var info struct {
		ID      string `json:"id"`
		Size    uint64 `json:"size"`
		Objects uint64 `json:"objects"`
		Order   uint8  `json:"order"`
		Prefix  string `json:"block_name_prefix"`
	}
	if err := json.Unmarshal([]byte(cut("rbd", "info", "rbd/disk", "--format", "json")), &info); err != nil ||
		info.Size != 64<<20 || info.Objects != 64 || info.Order != 20 || info.Prefix != "rbd_data."+info.ID {
		t.Fatalf("info: %+v %v", info, err)
	}
	// The image's metadata objects, and no data object yet.
	if got := sortedLines(cut("rados", "-p", "rbd", "ls")); got != "rbd_directory\nrbd_header."+info.ID+"\nrbd_id.disk\n" {
		t.Fatalf("the pool's objects after create:\n%s", got)
	}
	if got := cut("rbd", "ls"); got != "disk\n" {
		t.Fatalf("ls: %q", got)
	}
	cut("rbd", "snap", "create", "disk@one")
	if got := cut("rbd", "resize", "disk", "--size", "128M"); got != "resized rbd/disk to 128 MiB\n" {
		t.Fatalf("resize: %q", got)
	}
	fails("--allow-shrink", "rbd", "resize", "disk", "--size", "1M")
	var snaps []struct {
		Name string `json:"name"`
		Size uint64 `json:"size"`
	}
	if err := json.Unmarshal([]byte(cut("rbd", "snap", "ls", "disk", "--format", "json")), &snaps); err != nil || len(snaps) != 1 || snaps[0].Name != "one" || snaps[0].Size != 64<<20 {
		t.Fatalf("snap ls: %+v %v", snaps, err)
	}
	cut("rbd", "snap", "rollback", "disk@one")
	if got := cut("rbd", "info", "disk"); !strings.Contains(got, "size 64 MiB in 64 objects") {
		t.Fatalf("info after rollback:\n%s", got)
	}
	fails("remove them first (EBUSY)", "rbd", "rm", "disk")
	fails(`no image "nope" in pool "rbd" (ENOENT)`, "rbd", "info", "nope")
	cut("rbd", "snap", "rm", "disk@one")
	cut("rbd", "rm", "disk")
	if got := cut("rbd", "ls"); got != "" {
		t.Fatalf("ls after rm: %q", got)
	}
	if got := sortedLines(cut("rados", "-p", "rbd", "ls")); got != "rbd_directory\n" {
		t.Fatalf("the pool's objects after rm:\n%s", got)
	}
}
