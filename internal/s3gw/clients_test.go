package s3gw

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/sim"
)

// needTool skips a test whose client is not installed, unless the test
// runs as root, where `make deps` installs it and its absence is a failure.
func needTool(t *testing.T, name string, check ...string) {
	t.Helper()
	cmd := exec.Command(name, check...)
	if len(check) == 0 {
		if _, err := exec.LookPath(name); err == nil {
			return
		}
	} else if err := cmd.Run(); err == nil {
		return
	}
	if os.Getuid() == 0 {
		t.Fatalf("%s %s is missing: run make deps (the Makefile's TEST_TOOLS and TEST_PY_MODULES install it)", name, strings.Join(check, " "))
	}
	t.Skipf("%s %s is missing and the test is not root: install it (make deps as root) to run this test", name, strings.Join(check, " "))
}

// tcpGateway serves a gateway over loopback HTTP on a simulated cluster
// whose daemons talk TCP (outside synctest, as real clients need real
// time), and returns its URL and a user's keys.
func tcpGateway(t *testing.T) (url, access, secret string) {
	t.Helper()
	return tcpGatewayTLS(t, nil)
}

// tcpGatewayTLS is tcpGateway serving HTTPS with tlsConfig (HTTP when
// nil).
func tcpGatewayTLS(t *testing.T, tlsConfig *tls.Config) (url, access, secret string) {
	t.Helper()
	c := sim.New(t, sim.Options{TCP: true})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	if r := c.Run("osd pool create", "pool", DefaultPool, "pg_num", "8", "size", "3"); r.Code != 0 {
		t.Fatalf("pool create: %d %s", r.Code, r.Status)
	}
	c.WaitForEpoch(c.Epoch())
	io, err := c.Client("client.rgw").OpenIOContext(DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := New(Config{IO: io})
	if err != nil {
		t.Fatal(err)
	}
	u, err := gw.Meta().CreateUser(context.Background(), "tester", "")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(gw)
	if tlsConfig != nil {
		srv.TLS = tlsConfig
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.URL, u.Keys[0].Access, u.Keys[0].Secret
}

func clientEnv(access, secret string) []string {
	return append(os.Environ(), "AWS_ACCESS_KEY_ID="+access, "AWS_SECRET_ACCESS_KEY="+secret,
		"AWS_DEFAULT_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true")
}

// The aws command line: s3 mb, cp both ways (a multipart upload above 8
// MiB), sync, ls, rb --force, and a multipart upload through s3api,
// against the gateway. (Each aws run costs a Python start: the test keeps
// to ten; boto3's test covers the rest.)
func TestAWSCLI(t *testing.T) {
	needTool(t, "aws")
	url, access, secret := tcpGateway(t)
	dir := t.TempDir()
	aws := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("aws", append([]string{"--endpoint-url", url}, args...)...)
		cmd.Env = clientEnv(access, secret)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	big := make([]byte, 12<<20)
	rand.Read(big)
	write := func(name string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("big.bin", big)
	for _, f := range []string{"tree/a", "tree/b", "tree/sub/c"} {
		write(f, []byte(f))
	}
	aws("s3", "mb", "s3://cli-bucket")
	aws("s3", "cp", "big.bin", "s3://cli-bucket/big.bin")
	aws("s3", "cp", "s3://cli-bucket/big.bin", "big.back")
	if back, err := os.ReadFile(filepath.Join(dir, "big.back")); err != nil || !bytes.Equal(back, big) {
		t.Fatalf("big.bin read back: %d bytes, %v", len(back), err)
	}
	aws("s3", "sync", "tree", "s3://cli-bucket/tree")
	// s3api: a multipart upload by hand.
	var up struct{ UploadId string }
	if err := json.Unmarshal([]byte(aws("s3api", "create-multipart-upload", "--bucket", "cli-bucket", "--key", "mp")), &up); err != nil {
		t.Fatal(err)
	}
	write("p1", big[:5<<20])
	write("p2", []byte("the end"))
	var parts []map[string]any
	for i, p := range []string{"p1", "p2"} {
		var r struct{ ETag string }
		if err := json.Unmarshal([]byte(aws("s3api", "upload-part", "--bucket", "cli-bucket", "--key", "mp", "--upload-id", up.UploadId,
			"--part-number", string(rune('1'+i)), "--body", p)), &r); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, map[string]any{"PartNumber": i + 1, "ETag": r.ETag})
	}
	mpu, _ := json.Marshal(map[string]any{"Parts": parts})
	aws("s3api", "complete-multipart-upload", "--bucket", "cli-bucket", "--key", "mp", "--upload-id", up.UploadId, "--multipart-upload", string(mpu))
	got := aws("s3", "ls", "--recursive", "s3://cli-bucket")
	for _, want := range []string{"12582912 big.bin", "5242887 mp", " 6 tree/a", " 6 tree/b", " 10 tree/sub/c"} {
		if !strings.Contains(got, want) {
			t.Fatalf("ls --recursive: no %q in\n%s", want, got)
		}
	}
	aws("s3", "rb", "--force", "s3://cli-bucket") // removes the objects, then the bucket
}

// boto3: objects with metadata, ranges, paginated listings, copy, a
// presigned URL, a managed multipart upload, bucket and object ACLs
// (canned, and an AccessControlPolicy round trip) and a bucket policy
// with anonymous requests, object and bucket tagging, CORS with a
// preflight and a GET by plain HTTP, and DeleteObjects
// (testdata/boto3_client.py).
func TestBoto3(t *testing.T) {
	needTool(t, "python3", "-c", "import boto3")
	url, access, secret := tcpGateway(t)
	cmd := exec.Command("python3", "testdata/boto3_client.py", url, "boto-bucket")
	cmd.Env = clientEnv(access, secret)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "boto3 OK") {
		t.Fatalf("boto3: %v\n%s", err, out)
	}
}
