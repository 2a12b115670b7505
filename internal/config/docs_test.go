package config

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the option table of docs/CONFIG.md")

// TestConfigDoc checks that docs/CONFIG.md holds the option table the
// schema makes, between its markers; -update rewrites it.
func TestConfigDoc(t *testing.T) {
	const path = "../../docs/CONFIG.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	before, rest, ok1 := strings.Cut(doc, DocBegin+"\n")
	_, after, ok2 := strings.Cut(rest, DocEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q", path, DocBegin, DocEnd)
	}
	want := before + DocBegin + "\n" + MarkdownTable() + DocEnd + after
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's option table is not the schema's; run go test ./internal/config -run TestConfigDoc -update", path)
}
