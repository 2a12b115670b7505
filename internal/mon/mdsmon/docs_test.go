package mdsmon

import (
	"os"
	"strings"
	"testing"
)

// TestDocsListEveryCommand checks that docs/MONITOR-COMMANDS.md has a
// section for every command.
func TestDocsListEveryCommand(t *testing.T) {
	b, err := os.ReadFile("../../../docs/MONITOR-COMMANDS.md")
	if err != nil {
		t.Fatal(err)
	}
	var heads []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "### ") {
			heads = append(heads, line+",")
		}
	}
	all := strings.Join(heads, "\n")
	for _, p := range Prefixes() {
		if !strings.Contains(all, "`"+p+"`,") {
			t.Errorf("no section for %q", p)
		}
	}
}
