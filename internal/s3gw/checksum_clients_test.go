package s3gw

import (
	"os/exec"
	"strings"
	"testing"
)

// boto3 with the newer S3 features, on one gateway (a cluster and a
// Python start each cost seconds): flexible checksums — its default
// CRC32, SHA-1 and SHA-256 on PutObject and GetObject, a wrong one
// refused, a managed multipart upload's composite checksum, one part
// by partNumber, a FULL_OBJECT CRC32 upload by hand, GetObjectAttributes
// with its parts paged (testdata/boto3_checksums.py) — then ownership
// controls, the public access block and GetBucketPolicyStatus with an
// unsigned client (testdata/boto3_ownership.py) — then a lifecycle
// configuration of every kind of rule put, read back, its refusals and
// x-amz-expiration as boto3's Expiration (testdata/boto3_lifecycle.py).
func TestBoto3NewerFeatures(t *testing.T) {
	needTool(t, "python3", "-c", "import boto3")
	url, access, secret := tcpGateway(t)
	for _, s := range []struct{ script, bucket, ok string }{
		{"testdata/boto3_checksums.py", "boto-checksums", "boto3 checksums OK"},
		{"testdata/boto3_ownership.py", "boto-ownership", "boto3 ownership OK"},
		{"testdata/boto3_lifecycle.py", "boto-lifecycle", "boto3 lifecycle OK"},
	} {
		cmd := exec.Command("python3", s.script, url, s.bucket)
		cmd.Env = clientEnv(access, secret)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), s.ok) {
			t.Fatalf("%s: %v\n%s", s.script, err, out)
		}
	}
}
