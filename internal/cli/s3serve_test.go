package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
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
)

// cuttle s3 serve's options as a process: --cert and --key serve HTTPS
// only (a self-signed certificate made by openssl; the aws command line
// trusting it with --ca-bundle puts a lifecycle configuration and reads
// it back, and puts objects; plain HTTP is refused); --access-log writes
// a JSON line per request, and after logrotate's move and a SIGHUP a new
// file; --lifecycle-day 2s makes a rule of one day expire an object with
// nobody asking, by the serving gateway's own worker. One without the
// other of --cert and --key is refused before anything starts.
func TestS3ServeTLSAccessLogLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process cluster test")
	}
	for _, tool := range []string{"openssl", "aws"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getuid() == 0 {
				t.Fatalf("%s is missing: run make deps", tool)
			}
			t.Skipf("%s is missing and the test is not root: install it (make deps as root)", tool)
		}
	}
	work := t.TempDir()
	cert, key := filepath.Join(work, "cert.pem"), filepath.Join(work, "key.pem")
	if out, err := exec.Command("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
		"-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost").CombinedOutput(); err != nil {
		t.Fatalf("openssl: %v\n%s", err, out)
	}
	if _, stderr, err := cuttleProc(t, "s3", "serve", "--cert", cert); err == nil || !strings.Contains(stderr, "give both --cert and --key") {
		t.Fatalf("--cert alone: %v %s", err, stderr)
	}

	dir, base := localClusterDir(t, "mon.a", "osd.0", "osd.1", "osd.2")
	if out, stderr, err := cuttleProc(t, "cluster", "up", "--s3=false", "--nbd=false", "--fs=false", "--dir", dir, "--base-port", base, "--osds", "3", "--osd-size", "1G"); err != nil {
		t.Fatalf("cluster up: %v\n%s%s", err, out, stderr)
	}
	conf := filepath.Join(dir, "cuttle.conf")
	out, stderr, err := cuttleIn(t, nil, "--conf", conf, "s3", "user", "create", "tls", "--format", "json")
	var u struct {
		Keys []struct {
			AccessKey string `json:"access_key"`
			SecretKey string `json:"secret_key"`
		} `json:"keys"`
	}
	if err != nil || json.Unmarshal([]byte(out), &u) != nil || len(u.Keys) != 1 {
		t.Fatalf("user create: %v %s%s", err, out, stderr)
	}
	creds := aws.Credentials{AccessKeyID: u.Keys[0].AccessKey, SecretAccessKey: u.Keys[0].SecretKey}
	logPath := filepath.Join(work, "access.log")
	gw := startS3Gateway(t, conf, "--cert", cert, "--key", key, "--access-log", logPath, "--lifecycle-day", "2s")
	url := "https://" + gw.addr

	awsCLI := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("aws", append([]string{"--endpoint-url", url, "--ca-bundle", cert}, args...)...)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+creds.AccessKeyID, "AWS_SECRET_ACCESS_KEY="+creds.SecretAccessKey,
			"AWS_DEFAULT_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true")
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if err := os.WriteFile(filepath.Join(work, "f"), []byte("over TLS"), 0o644); err != nil {
		t.Fatal(err)
	}
	awsCLI("s3", "mb", "s3://tlsb")
	awsCLI("s3api", "put-bucket-lifecycle-configuration", "--bucket", "tlsb", "--lifecycle-configuration",
		`{"Rules":[{"ID":"quick","Filter":{"Prefix":"tmp/"},"Status":"Enabled","Expiration":{"Days":1}}]}`)
	var lc struct {
		Rules []struct {
			ID         string
			Expiration struct{ Days int }
		}
	}
	if got := awsCLI("s3api", "get-bucket-lifecycle-configuration", "--bucket", "tlsb"); json.Unmarshal([]byte(got), &lc) != nil ||
		len(lc.Rules) != 1 || lc.Rules[0].ID != "quick" || lc.Rules[0].Expiration.Days != 1 {
		t.Fatalf("get-bucket-lifecycle-configuration: %s", got)
	}
	awsCLI("s3", "cp", "f", "s3://tlsb/tmp/f")
	awsCLI("s3", "cp", "f", "s3://tlsb/keep/f")

	// Plain HTTP to the HTTPS port is refused.
	if resp, err := http.Get("http://" + gw.addr + "/"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain HTTP: %d", resp.StatusCode)
		}
	}
	caPEM, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	ctx := context.Background()
	status := func(method, path string) (int, string) {
		t.Helper()
		resp, err := s3DoWith(ctx, client, creds, method, url+path, bytes.NewReader(nil), 0)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("x-amz-request-id")
	}
	// until polls cond (the gateway is another process: there is
	// nothing to wait on but its answers) for at most a minute.
	until := func(what string, cond func() bool) {
		t.Helper()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		deadline := time.After(time.Minute)
		for !cond() {
			select {
			case <-tick.C:
			case <-deadline:
				t.Fatalf("waited a minute for %s", what)
			}
		}
	}
	until("the lifecycle worker to expire tmp/f", func() bool { c, _ := status("HEAD", "/tlsb/tmp/f"); return c == 404 })
	if c, _ := status("HEAD", "/tlsb/keep/f"); c != 200 {
		t.Fatalf("keep/f: %d", c)
	}

	// The access log: a line per request, as JSON.
	type line struct {
		RequestID string `json:"request_id"`
		User      string `json:"user"`
		Operation string `json:"operation"`
		Status    int    `json:"status"`
		Key       string `json:"key"`
	}
	lines := func(path string) []line {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []line
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l == "" {
				continue
			}
			var x line
			if err := json.Unmarshal([]byte(l), &x); err != nil {
				t.Fatalf("access log line %q: %v", l, err)
			}
			out = append(out, x)
		}
		return out
	}
	seen := map[string]bool{}
	for _, l := range lines(logPath) {
		seen[l.Operation] = true
		if l.User != "tls" || l.RequestID == "" || l.Status == 0 {
			t.Fatalf("access log line %+v", l)
		}
	}
	for _, op := range []string{"REST.PUT.BUCKET", "REST.PUT.LIFECYCLE", "REST.GET.LIFECYCLE", "REST.PUT.OBJECT", "REST.HEAD.OBJECT"} {
		if !seen[op] {
			t.Fatalf("no %s in the access log: %v", op, seen)
		}
	}
	// logrotate: move the file away, SIGHUP, and the next request is
	// in a new file.
	if err := os.Rename(logPath, logPath+".1"); err != nil {
		t.Fatal(err)
	}
	if err := gw.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	until("the access log to be reopened", func() bool { _, err := os.Stat(logPath); return err == nil })
	_, id := status("HEAD", "/tlsb/keep/f")
	until("the request in the new log", func() bool {
		for _, l := range lines(logPath) {
			if l.RequestID == id {
				return true
			}
		}
		return false
	})
	for _, l := range lines(logPath + ".1") {
		if l.RequestID == id {
			t.Fatal("a request after SIGHUP went to the moved log")
		}
	}
	if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = gw.cmd.Wait()
}
