package archtest

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestDocCommentsNameTheirPackage checks the form of package doc comments
// (TestArchitecture checks that every package has one): each starts with
// "Package name" ("Command name" for a main package), as go doc and
// pkg.go.dev expect, so that the first sentence says what the package is.
func TestDocCommentsNameTheirPackage(t *testing.T) {
	m := load(t)
	for _, p := range m.pkgs {
		for _, f := range p.files {
			if f.test || f.pkgName != p.name || !f.hasDoc {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f.path, f.content, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Errorf("%s: %v", f.path, err)
				continue
			}
			if want := docPrefix(p.name); !strings.HasPrefix(parsed.Doc.Text(), want) {
				t.Errorf("%s: the package doc comment starts %q; start it with %q and say what the package owns (STYLE.md 7)",
					f.path, firstLine(parsed.Doc.Text()), want)
			}
		}
	}
}

// docPrefix is how the doc comment of a package named name starts.
func docPrefix(name string) string {
	if name == "main" {
		return "Command "
	}
	return "Package " + name + " "
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
