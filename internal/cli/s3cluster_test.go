package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// s3Gateway is a `cuttle s3 serve` process.
type s3Gateway struct {
	cmd  *exec.Cmd
	addr string
}

func startS3Gateway(t *testing.T, conf string, flags ...string) *s3Gateway {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"--conf", conf, "s3", "serve", "--addr", "127.0.0.1:0"}, flags...)...)
	cmd.Env = append(os.Environ(), daemonEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	var addr string
	if _, serr := fmt.Sscanf(line, "s3 gateway listening on %s", &addr); err != nil || serr != nil {
		t.Fatalf("s3 serve: %q %v %v", line, err, serr)
	}
	return &s3Gateway{cmd: cmd, addr: addr}
}

// s3Do sends one signed request (UNSIGNED-PAYLOAD, so bodies stream).
func s3Do(ctx context.Context, creds aws.Credentials, method, url string, body io.Reader, size int64) (*http.Response, error) {
	return s3DoWith(ctx, http.DefaultClient, creds, method, url, body, size)
}

// s3DoWith is s3Do through client.
func s3DoWith(ctx context.Context, client *http.Client, creds aws.Credentials, method, url string, body io.Reader, size int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	req.ContentLength = size
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := s.SignHTTP(ctx, creds, req, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
		return nil, err
	}
	return client.Do(req)
}

// A gateway killed with SIGKILL in the middle of a PUT and of a multipart
// upload leaves no half-visible object; after the upload is aborted and
// the garbage collected, no data object is left (issue 40's crash test).
func TestS3GatewayKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2")
	if out, stderr, err := cuttleProc(t, "cluster", "up", "--s3=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osds", "3", "--osd-size", "1G"); err != nil {
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
	var u struct {
		Keys []struct {
			AccessKey string `json:"access_key"`
			SecretKey string `json:"secret_key"`
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(cut("s3", "user", "create", "crash", "--format", "json")), &u); err != nil || len(u.Keys) != 1 {
		t.Fatalf("user create: %v", err)
	}
	creds := aws.Credentials{AccessKeyID: u.Keys[0].AccessKey, SecretAccessKey: u.Keys[0].SecretKey}
	ctx := context.Background()
	do := func(gw *s3Gateway, method, path string, body []byte) (int, string) {
		t.Helper()
		resp, err := s3Do(ctx, creds, method, "http://"+gw.addr+path, bytes.NewReader(body), int64(len(body)))
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	gw := startS3Gateway(t, conf)
	if code, body := do(gw, "PUT", "/crashb", nil); code != 200 {
		t.Fatalf("create bucket: %d %s", code, body)
	}
	// A multipart upload with one part stored.
	code, body := do(gw, "POST", "/crashb/mp?uploads", nil)
	var up struct{ UploadId string }
	if i, j := strings.Index(body, "<UploadId>"), strings.Index(body, "</UploadId>"); code == 200 && i >= 0 && j > i {
		up.UploadId = body[i+len("<UploadId>") : j]
	} else {
		t.Fatalf("create upload: %d %s", code, body)
	}
	part := bytes.Repeat([]byte("p"), 5<<20)
	if code, body := do(gw, "PUT", "/crashb/mp?partNumber=1&uploadId="+up.UploadId, part); code != 200 {
		t.Fatalf("part 1: %d %s", code, body)
	}

	dataObjects := func() int {
		n := 0
		for _, o := range strings.Split(cut("rados", "-p", ".cuttle.s3", "ls"), "\n") {
			if strings.HasPrefix(o, "s3.d.") {
				n++
			}
		}
		return n
	}
	before := dataObjects() // part 1's two RADOS objects

	// A 40 MiB PUT and a second part, both cut by SIGKILL half way.
	kill := func(path string, size int64) {
		t.Helper()
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			resp, err := s3Do(ctx, creds, "PUT", "http://"+gw.addr+path, pr, size)
			if err == nil {
				resp.Body.Close()
				err = fmt.Errorf("the request finished: %s", resp.Status)
			}
			done <- err
		}()
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for sent := int64(0); sent < size/2; sent += int64(len(chunk)) {
			if _, err := pw.Write(chunk); err != nil {
				t.Fatalf("body: %v", err)
			}
		}
		// Half the body is in the gateway's hands (written or in its
		// buffers): kill it.
		if err := gw.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = gw.cmd.Wait()
		pw.CloseWithError(io.ErrClosedPipe)
		if err := <-done; err == nil || strings.Contains(err.Error(), "finished") {
			t.Fatalf("PUT %s survived the kill: %v", path, err)
		}
		gw = startS3Gateway(t, conf)
	}
	kill("/crashb/big", 40<<20)
	kill("/crashb/mp?partNumber=2&uploadId="+up.UploadId, 12<<20)

	// Nothing half visible.
	if code, _ := do(gw, "HEAD", "/crashb/big", nil); code != 404 {
		t.Fatalf("the killed PUT's object: %d", code)
	}
	if code, body := do(gw, "GET", "/crashb?list-type=2", nil); code != 200 || strings.Contains(body, "<Contents>") {
		t.Fatalf("listing after the kills: %d %s", code, body)
	}
	if code, body := do(gw, "GET", "/crashb/mp?uploadId="+up.UploadId, nil); code != 200 || strings.Count(body, "<Part>") != 1 {
		t.Fatalf("the upload's parts after the kill: %d %s", code, body)
	}
	if n := dataObjects(); n <= before {
		t.Fatalf("%d data objects after the kills, %d before: the kills left nothing to collect?", n, before)
	}
	// The index and the data agree: what the kills left is named by
	// the garbage list (so not leaked, even without the grace), the
	// part by its upload.
	type checkReport struct {
		Entries         int  `json:"entries"`
		PoolDataObjects int  `json:"pool_data_objects"`
		GarbageRecords  int  `json:"garbage_records"`
		LeaksChecked    bool `json:"leaks_checked"`
		Leaked          struct {
			Count, Fixed int
			Examples     []struct{ Data string }
		} `json:"leaked_data"`
		Missing struct{ Count int } `json:"missing_data"`
	}
	bucketCheck := func(args ...string) (checkReport, error) {
		t.Helper()
		out, stderr, err := cuttleIn(t, nil, append([]string{"--conf", conf, "--format", "json", "s3", "bucket", "check"}, args...)...)
		var r checkReport
		if jerr := json.Unmarshal([]byte(out), &r); jerr != nil {
			t.Fatalf("bucket check %v: %v %v\n%s%s", args, jerr, err, out, stderr)
		}
		return r, err
	}
	if r, err := bucketCheck("crashb", "--min-idle", "0s"); err != nil || r.Missing.Count != 0 || r.Leaked.Count != 0 || r.PoolDataObjects != dataObjects() || r.GarbageRecords < 2 {
		t.Fatalf("bucket check after the kills: %+v %v", r, err)
	}
	if code, _ := do(gw, "DELETE", "/crashb/mp?uploadId="+up.UploadId, nil); code != 204 {
		t.Fatalf("abort: %d", code)
	}
	gw.cmd.Process.Signal(syscall.SIGTERM)
	_ = gw.cmd.Wait()
	var gc struct{ Removed int }
	if err := json.Unmarshal([]byte(cut("s3", "gc", "--min-age", "0s", "--format", "json")), &gc); err != nil || gc.Removed < 2 {
		t.Fatalf("gc: %+v %v", gc, err)
	}
	if n := dataObjects(); n != 0 {
		t.Fatalf("%d data objects left after the abort and the collection", n)
	}
	if r, err := bucketCheck("crashb"); err != nil || r.Entries != 0 || r.PoolDataObjects != 0 || r.GarbageRecords != 0 || !r.LeaksChecked {
		t.Fatalf("bucket check after the collection: %+v %v", r, err)
	}

	// A data object nothing names, made by hand: found (exit non-zero),
	// recorded by --fix, removed by the collector.
	cutIn := func(stdin []byte, args ...string) {
		t.Helper()
		if out, stderr, err := cuttleIn(t, stdin, append([]string{"--conf", conf}, args...)...); err != nil {
			t.Fatalf("cuttle %v: %v\n%s%s", args, err, out, stderr)
		}
	}
	cutIn([]byte("leaked by hand"), "rados", "-p", ".cuttle.s3", "put", "s3.d.00000000deadbeef.00000000", "-")
	if r, err := bucketCheck("crashb", "--min-idle", "0s"); err == nil || r.Leaked.Count != 1 || r.Leaked.Examples[0].Data != "00000000deadbeef" {
		t.Fatalf("bucket check of a leak: %+v %v", r, err)
	}
	if r, err := bucketCheck("--all", "--fix", "--min-idle", "0s"); err != nil || r.Leaked.Fixed != 1 {
		t.Fatalf("bucket check --fix: %+v %v", r, err)
	}
	if err := json.Unmarshal([]byte(cut("s3", "gc", "--min-age", "0s", "--format", "json")), &gc); err != nil || gc.Removed != 1 {
		t.Fatalf("gc of the leak: %+v %v", gc, err)
	}
	if n := dataObjects(); n != 0 {
		t.Fatalf("%d data objects left after the leak's collection", n)
	}
	if r, err := bucketCheck("crashb", "--min-idle", "0s"); err != nil || r.Leaked.Count != 0 || r.PoolDataObjects != 0 {
		t.Fatalf("bucket check at the end: %+v %v", r, err)
	}
}

// cluster up gives a new cluster an S3 gateway and prints keys that
// work: a signed request with them creates a bucket and stores and
// reads an object through s3.a; a second up prints the same keys (the
// user is kept); status lists the gateway and down stops it.
func TestClusterUpS3Gateway(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	dir, base := localClusterDir(t, "mon.a", "osd.0", "s3.a")
	out, stderr, err := cuttleProc(t, "--format", "json", "cluster", "up", "--fs=false", "--nbd=false", "--dir", dir, "--base-port", base, "--osds", "1", "--osd-size", "256M")
	if err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	var rep struct {
		S3 *struct {
			Endpoint  string `json:"endpoint"`
			User      string `json:"user"`
			AccessKey string `json:"access_key"`
			SecretKey string `json:"secret_key"`
			Region    string `json:"region"`
		} `json:"s3"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.S3 == nil {
		t.Fatalf("cluster up's report has no s3: %v\n%s", err, out)
	}
	gw := localStatus(t, dir)["s3.a"]
	if gw.State != "running" || rep.S3.Endpoint != "http://"+gw.Addr || rep.S3.User != "admin" {
		t.Fatalf("s3.a %+v, report %+v", gw, rep.S3)
	}

	ctx := context.Background()
	creds := aws.Credentials{AccessKeyID: rep.S3.AccessKey, SecretAccessKey: rep.S3.SecretKey}
	do := func(method, path string, body []byte) (int, string) {
		t.Helper()
		resp, err := s3Do(ctx, creds, method, rep.S3.Endpoint+path, bytes.NewReader(body), int64(len(body)))
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do("PUT", "/upb", nil); code != 200 {
		t.Fatalf("create bucket: %d %s", code, body)
	}
	if code, body := do("PUT", "/upb/hello", []byte("hello, s3.a")); code != 200 {
		t.Fatalf("put: %d %s", code, body)
	}
	if code, body := do("GET", "/upb/hello", nil); code != 200 || body != "hello, s3.a" {
		t.Fatalf("get: %d %q", code, body)
	}
	// A wrong secret is refused: the keys printed are what signs.
	creds.SecretAccessKey = "x" + creds.SecretAccessKey[1:]
	if code, _ := do("GET", "/upb/hello", nil); code != 403 {
		t.Fatalf("get with a wrong secret: %d", code)
	}

	// Up again: nothing to start, the same keys printed as exports.
	out, stderr, err = cuttleProc(t, "cluster", "up", "--dir", dir)
	if err != nil {
		t.Fatalf("second cluster up: %v\n%s%s", err, out, stderr)
	}
	for _, want := range []string{
		"export AWS_ACCESS_KEY_ID=" + rep.S3.AccessKey + " AWS_SECRET_ACCESS_KEY=" + rep.S3.SecretKey + " ",
		"aws --endpoint-url " + rep.S3.Endpoint + " s3 mb s3://bucket",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("second up's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(stderr, "started ") {
		t.Errorf("second up started something:\n%s", stderr)
	}

	out, stderr, err = cuttleProc(t, "cluster", "down", "--dir", dir)
	if err != nil || !strings.Contains(out, "stopped s3.a") {
		t.Fatalf("cluster down: %v\n%s%s", err, out, stderr)
	}
	if s := localStatus(t, dir)["s3.a"]; s.State != "stopped" || processLives(gw.PID) {
		t.Errorf("s3.a after down: %+v", s)
	}
}
