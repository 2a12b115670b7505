package s3gw

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeTree makes a tree of n small files (0 to 4 KiB, in directories of
// 100) plus the large files given, and returns their names.
func writeTree(t *testing.T, dir string, n int, large ...int) []string {
	t.Helper()
	var names []string
	buf := make([]byte, 4096+len(large)*64<<20)
	rand.Read(buf)
	for i := range n {
		name := filepath.Join(fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d", i))
		size := (i * 37) % 4097
		writeFile(t, filepath.Join(dir, name), buf[i%64:i%64+size])
		names = append(names, name)
	}
	for i, size := range large {
		name := fmt.Sprintf("large-%d.bin", i)
		writeFile(t, filepath.Join(dir, name), buf[i*1024:i*1024+size])
		names = append(names, name)
	}
	return names
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rcloneFiles is the size of TestRclone's tree. The 10,000 files
// take three minutes here without the race detector (about three times
// that with it), so the default run keeps to 2,000; run the full size with
// go test ./internal/s3gw -run TestRclone -rclone.files 10000.
var rcloneFiles = flag.Int("rclone.files", 2000, "small files in TestRclone's tree (the issue's figure: 10000)")

// rclone (a tree of small files, and two large enough for multipart
// uploads): sync to a bucket, check it equal, see check find a
// difference, sync the changes (new, changed and deleted files), check
// again, and copy everything back byte for byte.
func TestRclone(t *testing.T) {
	needTool(t, "rclone")
	files := *rcloneFiles
	if testing.Short() {
		files = min(files, 500)
	}
	url, access, secret := tcpGateway(t)
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	writeTree(t, tree, files, 20<<20, 9<<20+12345)
	// Not the AWS_* settings of the environment: rclone's AWS SDK
	// refuses AWS_CA_BUNDLE with its own HTTP transport.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	env = append(env, "RCLONE_CONFIG=/dev/null",
		"RCLONE_CONFIG_CUT_TYPE=s3", "RCLONE_CONFIG_CUT_PROVIDER=Other", "RCLONE_CONFIG_CUT_ENDPOINT="+url,
		"RCLONE_CONFIG_CUT_ACCESS_KEY_ID="+access, "RCLONE_CONFIG_CUT_SECRET_ACCESS_KEY="+secret,
		"RCLONE_CONFIG_CUT_FORCE_PATH_STYLE=true", "RCLONE_CONFIG_CUT_REGION=us-east-1")
	rclone := func(args ...string) (string, error) {
		t.Helper()
		// Multipart above 8 MiB in 5 MiB parts, so the large files
		// take that path.
		cmd := exec.Command("rclone", append([]string{"--transfers", "16", "--checkers", "16", "--retries", "1",
			"--s3-upload-cutoff", "8M", "--s3-chunk-size", "5M"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(args ...string) string {
		t.Helper()
		out, err := rclone(args...)
		if err != nil {
			t.Fatalf("rclone %s: %v\n%s", strings.Join(args, " "), err, lastLines(out, 30))
		}
		return out
	}
	must("mkdir", "cut:rclone-bucket")
	must("sync", tree, "cut:rclone-bucket/tree")
	must("check", tree, "cut:rclone-bucket/tree")
	countIs := func(want int) {
		t.Helper()
		var size struct{ Count int }
		if out := must("size", "--json", "cut:rclone-bucket/tree"); json.Unmarshal([]byte(lastLine(out)), &size) != nil || size.Count != want {
			t.Fatalf("rclone size: %s, want %d objects", out, want)
		}
	}
	countIs(files + 2)

	// Changes: 10 files rewritten, 10 removed, 10 new.
	for i := range 10 {
		writeFile(t, filepath.Join(tree, fmt.Sprintf("d%03d", i), fmt.Sprintf("f%05d", i*100+1)), []byte("changed "+strconv.Itoa(i)))
		if err := os.Remove(filepath.Join(tree, fmt.Sprintf("d%03d", i), fmt.Sprintf("f%05d", i*100+2))); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(tree, "new", fmt.Sprintf("n%d", i)), bytes.Repeat([]byte{byte(i)}, 1000*i))
	}
	if out, err := rclone("check", tree, "cut:rclone-bucket/tree"); err == nil {
		t.Fatalf("rclone check found no difference after local changes:\n%s", lastLines(out, 10))
	}
	must("sync", tree, "cut:rclone-bucket/tree")
	must("check", tree, "cut:rclone-bucket/tree")
	countIs(files + 2)

	back := filepath.Join(dir, "back")
	must("copy", "cut:rclone-bucket/tree", back)
	must("check", tree, back) // local to local: content hashes on both sides
}

// s3cmd: make a bucket, put (a multipart upload above its chunk size)
// and get back, ls and la, info, sync a directory, delete recursively and
// remove the bucket.
func TestS3cmd(t *testing.T) {
	needTool(t, "s3cmd")
	url, access, secret := tcpGateway(t)
	dir := t.TempDir()
	host := strings.TrimPrefix(url, "http://")
	cfg := filepath.Join(dir, "s3cfg")
	writeFile(t, cfg, []byte(fmt.Sprintf("[default]\naccess_key = %s\nsecret_key = %s\nhost_base = %s\nhost_bucket = %s\n"+
		"use_https = False\nsignature_v2 = False\nbucket_location = us-east-1\n", access, secret, host, host)))
	s3cmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("s3cmd", append([]string{"-c", cfg, "--no-progress", "--multipart-chunk-size-mb=5"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("s3cmd %s: %v\n%s", strings.Join(args, " "), err, lastLines(string(out), 30))
		}
		return string(out)
	}
	names := writeTree(t, filepath.Join(dir, "tree"), 50, 11<<20)
	s3cmd("mb", "s3://s3cmd-bucket")
	s3cmd("put", "tree/large-0.bin", "s3://s3cmd-bucket/large")
	s3cmd("get", "s3://s3cmd-bucket/large", "large.back")
	want, _ := os.ReadFile(filepath.Join(dir, "tree", "large-0.bin"))
	if got, err := os.ReadFile(filepath.Join(dir, "large.back")); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("large object read back: %d bytes of %d, %v", len(got), len(want), err)
	}
	if info := s3cmd("info", "s3://s3cmd-bucket/large"); !strings.Contains(info, strconv.Itoa(11<<20)) {
		t.Fatalf("s3cmd info: no size %d in\n%s", 11<<20, info)
	}
	s3cmd("sync", "tree/", "s3://s3cmd-bucket/tree/")
	ls := s3cmd("ls", "--recursive", "s3://s3cmd-bucket/tree/")
	if n := strings.Count(ls, "s3://s3cmd-bucket/tree/"); n != len(names) {
		t.Fatalf("s3cmd ls --recursive: %d objects, want %d\n%s", n, len(names), lastLines(ls, 5))
	}
	if la := s3cmd("la"); !strings.Contains(la, "s3://s3cmd-bucket/large") {
		t.Fatalf("s3cmd la: %s", la)
	}
	// A second sync has nothing to do.
	if out := s3cmd("sync", "--stats", "tree/", "s3://s3cmd-bucket/tree/"); strings.Contains(out, "upload:") {
		t.Fatalf("a second sync uploaded again:\n%s", lastLines(out, 10))
	}
	s3cmd("del", "--recursive", "--force", "s3://s3cmd-bucket/")
	s3cmd("rb", "s3://s3cmd-bucket")
	if ls := s3cmd("ls"); strings.Contains(ls, "s3cmd-bucket") {
		t.Fatalf("bucket still listed after rb: %s", ls)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
