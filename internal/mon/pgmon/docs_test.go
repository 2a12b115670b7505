package pgmon

import (
	"os"
	"strings"
	"testing"
)

// TestDocsListEveryCommand checks that docs/MONITOR-COMMANDS.md has a
// section for every command and a row for every health check.
func TestDocsListEveryCommand(t *testing.T) {
	b, err := os.ReadFile("../../../docs/MONITOR-COMMANDS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, p := range Prefixes() {
		if !strings.Contains(doc, "\n### `"+p+"`\n") {
			t.Errorf("no section for %q", p)
		}
	}
	for _, code := range []string{"PG_AVAILABILITY", "PG_DEGRADED", "PG_DAMAGED", "OBJECT_MISPLACED", "OBJECT_UNFOUND"} {
		if !strings.Contains(doc, "| `"+code+"` |") {
			t.Errorf("health check %s not in the table", code)
		}
	}
}
