package s3gw

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// boto3 against a versioned bucket: versions, GET and HEAD by id, a
// delete marker and the restore by deleting it, a restore by copy,
// paginated ListObjectVersions, removal of a version, Suspended and the
// null version, and DeleteObjects of every version
// (testdata/boto3_versions.py); then the aws cli's list-object-versions
// of a version under a delete marker the script left. (One aws run: each
// costs a Python start.)
func TestBoto3Versioning(t *testing.T) {
	needTool(t, "python3", "-c", "import boto3")
	url, access, secret := tcpGateway(t)
	cmd := exec.Command("python3", "testdata/boto3_versions.py", url, "boto-versions")
	cmd.Env = clientEnv(access, secret)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "boto3 versions OK") {
		t.Fatalf("boto3: %v\n%s", err, out)
	}

	needTool(t, "aws")
	aws := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("aws", append([]string{"--endpoint-url", url, "--output", "json"}, args...)...)
		cmd.Env = clientEnv(access, secret)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	var v struct {
		Versions      []struct{ Key, VersionId string }
		DeleteMarkers []struct {
			Key, VersionId string
			IsLatest       bool
		}
	}
	if err := json.Unmarshal([]byte(aws("s3api", "list-object-versions", "--bucket", "boto-versions-kept")), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Versions) != 1 || len(v.DeleteMarkers) != 1 || !v.DeleteMarkers[0].IsLatest {
		t.Fatalf("list-object-versions: %+v", v)
	}
}
