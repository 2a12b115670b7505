package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// osd mkfs and osd run refuse what they cannot use, before reaching any
// monitor.
func TestOSDCommandsRefuse(t *testing.T) {
	busy := t.TempDir()
	if err := os.WriteFile(filepath.Join(busy, "notes"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"osd", "mkfs"}, "--data is required"},
		{[]string{"osd", "mkfs", "--data", busy}, "is not empty"},
		{[]string{"osd", "mkfs", "--data", t.TempDir(), "--size", "64K"}, "too small"},
		{[]string{"osd", "mkfs", "--data", t.TempDir(), "--size", "lots"}, "--size"},
		{[]string{"osd", "run"}, "--data is required"},
		{[]string{"osd", "run", "--data", busy}, "not an OSD's data directory"},
		{[]string{"osd", "run", "--data", busy, "--log-level", "loud"}, "--log-level"},
	} {
		_, _, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("cuttle %s: %v, want %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}
