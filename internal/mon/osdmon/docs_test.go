package osdmon

import (
	"os"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/mon/configmon"
)

// TestDocsListEveryCommand checks that docs/MONITOR-COMMANDS.md has a
// section for every command and a row for every option.
func TestDocsListEveryCommand(t *testing.T) {
	b, err := os.ReadFile("../../../docs/MONITOR-COMMANDS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var headings []string
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "### ") {
			headings = append(headings, line+",")
		}
	}
	heads := strings.Join(headings, "\n")
	for _, p := range append(Prefixes(), configmon.Prefixes()...) {
		if !strings.Contains(heads, "`"+p+"`,") {
			t.Errorf("no section for %q", p)
		}
	}
	for _, o := range configmon.Schema() {
		if !strings.Contains(doc, "| `"+o.Name+"` |") {
			t.Errorf("option %s not in the options table", o.Name)
		}
	}
}
