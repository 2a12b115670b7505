package s3gw

import (
	"os/exec"
	"strings"
	"testing"
)

// boto3 with flexible checksums: its default CRC32, SHA-1 and SHA-256
// on PutObject and GetObject, a wrong one refused, a managed multipart
// upload's composite checksum and a FULL_OBJECT CRC32 upload by hand,
// and GetObjectAttributes with its parts paged
// (testdata/boto3_checksums.py).
func TestBoto3Checksums(t *testing.T) {
	needTool(t, "python3", "-c", "import boto3")
	url, access, secret := tcpGateway(t)
	cmd := exec.Command("python3", "testdata/boto3_checksums.py", url, "boto-checksums")
	cmd.Env = clientEnv(access, secret)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "boto3 checksums OK") {
		t.Fatalf("boto3: %v\n%s", err, out)
	}
}
