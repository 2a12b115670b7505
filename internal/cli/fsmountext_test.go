package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

func getxattr(t *testing.T, p, name string) string {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Getxattr(p, name, buf)
	if err != nil {
		t.Fatalf("getxattr %s %s: %v", p, name, err)
	}
	return string(buf[:n])
}

func setxattr(t *testing.T, p, name, v string) {
	t.Helper()
	if err := unix.Setxattr(p, name, []byte(v), 0); err != nil {
		t.Fatalf("setxattr %s %s=%q: %v", p, name, v, err)
	}
}

// readDirect reads p with O_DIRECT: past the kernel's page cache.
func readDirect(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := f.ReadAt(buf, int64(len(out)))
		out = append(out, buf[:n]...)
		if n == 0 || err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, err
		}
	}
}

// hpcExtensions (issue 38): statlite and lazy I/O through the mounts'
// virtual xattrs (docs/FSCLIENT.md, "On the mount").
func hpcExtensions(t *testing.T, conf, a, b string) {
	if err := os.Mkdir(filepath.Join(a, "hpc"), 0o755); err != nil {
		t.Fatal(err)
	}
	on := func(root, name string) string { return filepath.Join(root, "hpc", name) }

	t.Run("statlite", func(t *testing.T) {
		w, err := os.Create(on(a, "growing"))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		data := bytes.Repeat([]byte("x"), 5000)
		if _, err := w.Write(data); err != nil { // buffered in a's client
			t.Fatal(err)
		}
		// b's statlite answers without revoking a's caps: any size up
		// to what a wrote, flagged inexact when the MDS is not sure.
		var lite struct {
			Size      uint64 `json:"size"`
			SizeExact bool   `json:"size_exact"`
			Mtime     string `json:"mtime"`
		}
		raw := getxattr(t, on(b, "growing"), "cuttle.statlite")
		if err := json.Unmarshal([]byte(raw), &lite); err != nil || lite.Size > 5000 || lite.Mtime == "" {
			t.Fatalf("cuttle.statlite = %s (%v)", raw, err)
		}
		if lite.SizeExact && lite.Size != 5000 {
			t.Fatalf("cuttle.statlite says size %d is exact while a has written 5000", lite.Size)
		}
		t.Logf("statlite while a writes: %s", raw)
		// The exact stat collects the size from a.
		st, err := os.Stat(on(b, "growing"))
		if err != nil || st.Size() != 5000 {
			t.Fatalf("stat on b: %v, %v", st, err)
		}
		if got := getxattr(t, on(b, "growing"), "cuttle.statlite.size"); got != "5000" {
			t.Fatalf("cuttle.statlite.size after the exact stat = %q", got)
		}
		if mt := getxattr(t, on(b, "growing"), "cuttle.statlite.mtime"); mt == "" {
			t.Fatal("empty cuttle.statlite.mtime")
		}
		// The CLI, through the library: statlite and readdirplus.
		out, stderr, err := cuttleProc(t, "fs", "stat", "--lite", "--format", "json", "--conf", conf, "/hpc/growing")
		var recs []struct {
			Size   uint64   `json:"size"`
			Approx []string `json:"approx"`
		}
		if err != nil || json.Unmarshal([]byte(out), &recs) != nil || len(recs) != 1 || recs[0].Size != 5000 {
			t.Fatalf("cuttle fs stat --lite: %v\n%s%s", err, out, stderr)
		}
		out, stderr, err = cuttleProc(t, "fs", "lsdir", "-l", "--format", "json", "--conf", conf, "/hpc")
		var ents []struct {
			Name string `json:"name"`
			Size uint64 `json:"size"`
			Mode string `json:"mode"`
		}
		if err != nil || json.Unmarshal([]byte(out), &ents) != nil || len(ents) != 1 || ents[0].Name != "growing" ||
			ents[0].Size != 5000 || ents[0].Mode != "-rw-r--r--" {
			t.Fatalf("cuttle fs lsdir -l: %v\n%s%s", err, out, stderr)
		}
		if err := unix.Setxattr(on(b, "growing"), "cuttle.statlite.size", []byte("1"), 0); err != unix.EPERM {
			t.Fatalf("setting cuttle.statlite.size: %v, want EPERM", err)
		}
	})

	t.Run("lazyio", func(t *testing.T) {
		if err := os.WriteFile(on(a, "shared"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		// cuttle.lazyio applies to the opens that follow.
		for _, root := range []string{a, b} {
			if got := getxattr(t, on(root, "shared"), "cuttle.lazyio"); got != "0" {
				t.Fatalf("cuttle.lazyio before = %q", got)
			}
			setxattr(t, on(root, "shared"), "cuttle.lazyio", "1")
			if got := getxattr(t, on(root, "shared"), "cuttle.lazyio"); got != "1" {
				t.Fatalf("cuttle.lazyio after = %q", got)
			}
		}
		fa, err := os.OpenFile(on(a, "shared"), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer fa.Close()
		fb, err := os.OpenFile(on(b, "shared"), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer fb.Close()
		if err := unix.Setxattr(on(a, "shared"), "cuttle.lazyio", []byte("maybe"), 0); err != unix.EINVAL {
			t.Fatalf("cuttle.lazyio=maybe: %v, want EINVAL", err)
		}
		// Both write at once, each into its own range, buffered.
		if _, err := fa.WriteAt(bytes.Repeat([]byte("A"), 4096), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := fb.WriteAt(bytes.Repeat([]byte("B"), 4096), 4096); err != nil {
			t.Fatal(err)
		}
		for _, root := range []string{a, b} {
			setxattr(t, on(root, "shared"), "cuttle.lazyio.propagate", "1")
		}
		// a synchronizes and reads what b propagated.
		setxattr(t, on(a, "shared"), "cuttle.lazyio.synchronize", "1")
		got, err := readDirect(on(a, "shared"))
		if err != nil {
			t.Fatal(err)
		}
		want := append(bytes.Repeat([]byte("A"), 4096), bytes.Repeat([]byte("B"), 4096)...)
		if !bytes.Equal(got, want) {
			t.Fatalf("a reads %d bytes after propagate and synchronize (%q...), want A*4096 B*4096",
				len(got), got[:min(len(got), 16)])
		}
		if got := getxattr(t, on(a, "shared"), "cuttle.statlite.size"); got != strconv.Itoa(8192) {
			t.Fatalf("cuttle.statlite.size after propagate = %q", got)
		}
	})
}
