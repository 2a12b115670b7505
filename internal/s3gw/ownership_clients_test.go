package s3gw

import (
	"os/exec"
	"strings"
	"testing"
)

// boto3 with ownership controls (ACLs disabled at creation, changed,
// removed), the public access block (public ACLs and policies refused,
// public ACLs ignored) and GetBucketPolicyStatus, with an unsigned
// client (testdata/boto3_ownership.py).
func TestBoto3Ownership(t *testing.T) {
	needTool(t, "python3", "-c", "import boto3")
	url, access, secret := tcpGateway(t)
	cmd := exec.Command("python3", "testdata/boto3_ownership.py", url, "boto-ownership")
	cmd.Env = clientEnv(access, secret)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "boto3 ownership OK") {
		t.Fatalf("boto3: %v\n%s", err, out)
	}
}
