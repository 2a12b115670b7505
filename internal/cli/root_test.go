package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// run executes the command tree with args and returns stdout, stderr and the
// error from Execute.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root := NewRootCommand(&stdout, &stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return stdout.String(), stderr.String(), err
}

func TestVersionPlain(t *testing.T) {
	stdout, stderr, err := run(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "cuttle ") || !strings.HasSuffix(stdout, runtime.Version()+"\n") {
		t.Errorf("stdout = %q", stdout)
	}
	if stderr != "" {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestVersionJSON(t *testing.T) {
	stdout, _, err := run(t, "--format", "json", "version")
	if err != nil {
		t.Fatal(err)
	}
	var got versionInfo
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output %q is not JSON: %v", stdout, err)
	}
	if got.GoVersion != runtime.Version() || got.Version == "" {
		t.Errorf("got %+v", got)
	}
	// The flag is persistent: it also works after the subcommand.
	stdout2, _, err := run(t, "version", "--format=json")
	if err != nil || stdout2 != stdout {
		t.Errorf("--format after subcommand: %q, %v", stdout2, err)
	}
}

func TestBadFormatIsAnError(t *testing.T) {
	stdout, _, err := run(t, "--format", "xml", "version")
	if err == nil {
		t.Fatal("no error for --format xml")
	}
	for _, want := range []string{`"xml"`, "--format", "plain, json"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if stdout != "" {
		t.Errorf("stdout = %q", stdout)
	}
}

func TestTreesAreIndependent(t *testing.T) {
	var a, b bytes.Buffer
	ra := NewRootCommand(&a, &a)
	rb := NewRootCommand(&b, &b)
	ra.SetArgs([]string{"--format", "json", "version"})
	rb.SetArgs([]string{"version"})
	if err := ra.Execute(); err != nil {
		t.Fatal(err)
	}
	if err := rb.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(b.String(), "{") {
		t.Errorf("second tree printed JSON: %q", b.String())
	}
}
