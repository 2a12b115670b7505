package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestTellRejectsNonOSD(t *testing.T) {
	for _, target := range []string{"mon.a", "osd.x", "osd.-1", "3"} {
		var stdout, stderr bytes.Buffer
		root := NewRootCommand(&stdout, &stderr)
		root.SetArgs([]string{"tell", target, "status"})
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), "want osd.N") {
			t.Errorf("tell %s: %v", target, err)
		}
	}
}
