package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// listedPackage is the part of `go list -json` output the tests use.
type listedPackage struct {
	ImportPath string
	Dir        string
	Name       string
	Standard   bool
	Module     *struct {
		Path string
		Main bool
	}
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
	TestGoFiles    []string
	XTestGoFiles   []string
	Imports        []string
	Deps           []string
}

// sourceFile is one parsed Go file of the module.
type sourceFile struct {
	path    string // relative to the module root, for messages
	pkgName string
	test    bool
	hasDoc  bool
	imports []string
	content []byte
}

// modulePackage is a package of the main module with all its files, whatever
// their build tags.
type modulePackage struct {
	importPath string
	rel        string // import path relative to the module, e.g. "crush/crushtext"
	name       string
	files      []sourceFile
	deps       []string // transitive imports in the default build
}

// module is everything the tests check.
type module struct {
	path     string
	root     string
	pkgs     []*modulePackage
	imports  map[string][]string // direct imports of every listed package
	badFiles []error             // files that failed to parse
}

func TestArchitecture(t *testing.T) {
	m := load(t)
	t.Run("LayerTableCoversEveryPackage", func(t *testing.T) { checkTableCoverage(t, m) })
	t.Run("Layers", func(t *testing.T) { checkLayers(t, m) })
	t.Run("TablesCurrent", func(t *testing.T) { checkTablesCurrent(t, m) })
	t.Run("DaemonsOnlyThroughAssembly", func(t *testing.T) { checkDaemonImports(t, m) })
	t.Run("CLIRootWiresOnly", func(t *testing.T) { checkCLIRoot(t, m) })
	t.Run("NoTestCodeInProduction", func(t *testing.T) { checkTestOnlyImports(t, m) })
	t.Run("PackageDocComments", func(t *testing.T) { checkDocComments(t, m) })
	t.Run("ForbiddenImports", func(t *testing.T) { checkForbiddenEverywhere(t, m) })
	t.Run("NoPanicSprintf", func(t *testing.T) { checkNoPanicSprintf(t, m) })
	t.Run("ParseErrors", func(t *testing.T) {
		for _, err := range m.badFiles {
			t.Error(err)
		}
	})
}

// load lists the module with one go list call and parses every Go file.
func load(t *testing.T) *module {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-e", "-deps",
		"-json=ImportPath,Dir,Name,Standard,Module,GoFiles,CgoFiles,IgnoredGoFiles,TestGoFiles,XTestGoFiles,Imports,Deps",
		"./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}

	m := &module{root: root, imports: make(map[string][]string)}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		m.imports[p.ImportPath] = p.Imports
		if p.Standard || p.Module == nil || !p.Module.Main {
			continue
		}
		m.path = p.Module.Path
		m.pkgs = append(m.pkgs, m.parsePackage(&p))
	}
	if len(m.pkgs) == 0 {
		t.Fatal("go list found no packages in the main module")
	}
	for _, p := range m.pkgs {
		p.rel = strings.TrimPrefix(strings.TrimPrefix(p.importPath, m.path), "/")
	}
	return m
}

// moduleRoot returns the nearest directory at or above the working
// directory that holds a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("archtest: no go.mod above the working directory")
		}
		dir = parent
	}
}

func (m *module) parsePackage(p *listedPackage) *modulePackage {
	mp := &modulePackage{importPath: p.ImportPath, name: p.Name, deps: p.Deps}
	add := func(names []string, test bool) {
		for _, name := range names {
			f, err := m.parseFile(filepath.Join(p.Dir, name), test)
			if err != nil {
				m.badFiles = append(m.badFiles, err)
				continue
			}
			mp.files = append(mp.files, f)
		}
	}
	add(p.GoFiles, false)
	add(p.CgoFiles, false)
	add(p.TestGoFiles, true)
	add(p.XTestGoFiles, true)
	for _, name := range p.IgnoredGoFiles {
		add([]string{name}, strings.HasSuffix(name, "_test.go"))
	}
	return mp
}

func (m *module) parseFile(path string, test bool) (sourceFile, error) {
	rel, err := filepath.Rel(m.root, path)
	if err != nil {
		rel = path
	}
	content, err := os.ReadFile(path)
	if err != nil {
		return sourceFile{}, err
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, content, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return sourceFile{}, fmt.Errorf("%s: %w", rel, err)
	}
	sf := sourceFile{
		path:    filepath.ToSlash(rel),
		pkgName: f.Name.Name,
		test:    test,
		hasDoc:  f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "",
		content: content,
	}
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return sourceFile{}, fmt.Errorf("%s: import %s: %w", rel, imp.Path.Value, err)
		}
		sf.imports = append(sf.imports, path)
	}
	return sf, nil
}

// productionImports returns the imports of p's non-test files (all build
// tags), sorted and without duplicates.
func (p *modulePackage) productionImports() []string {
	var imps []string
	for _, f := range p.files {
		if !f.test && f.pkgName == p.name {
			imps = append(imps, f.imports...)
		}
	}
	slices.Sort(imps)
	return slices.Compact(imps)
}

// matchPattern reports whether path matches pattern, where "p/..." matches
// p and every path below it.
func matchPattern(pattern, path string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == prefix || strings.HasPrefix(path, prefix+"/")
	}
	return path == pattern
}

// layerOf returns the layer of a package path relative to the module, using
// the longest matching pattern of the table.
func layerOf(rel string) (layer int, ok bool) {
	best := -1
	for _, e := range layers {
		if matchPattern(e.pattern, rel) && len(e.pattern) > best {
			best, layer, ok = len(e.pattern), e.layer, true
		}
	}
	return layer, ok
}

func sameLayerAllowed(from, to string) bool {
	for importer, imported := range sameLayerImports {
		if !matchPattern(importer, from) {
			continue
		}
		for _, pattern := range imported {
			if matchPattern(pattern, to) {
				return true
			}
		}
	}
	return false
}

// isStd reports whether an import path belongs to the standard library: its
// first element has no dot.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func (m *module) rel(importPath string) (string, bool) {
	if importPath == m.path {
		return ".", true
	}
	rel, ok := strings.CutPrefix(importPath, m.path+"/")
	return rel, ok
}

const tableHint = "internal/archtest/layers_test.go"

func checkTableCoverage(t *testing.T, m *module) {
	for _, p := range m.pkgs {
		if _, ok := layerOf(p.rel); !ok {
			t.Errorf("package %s is not in the layer table; add it to layers in %s with its LAYOUT.md layer",
				p.rel, tableHint)
		}
	}
}

func checkLayers(t *testing.T, m *module) {
	for _, p := range m.pkgs {
		from, ok := layerOf(p.rel)
		if !ok || from == layerTestOnly {
			continue
		}
		for _, imp := range p.productionImports() {
			if isStd(imp) {
				continue
			}
			rel, internal := m.rel(imp)
			if !internal {
				if from == layerLeaves {
					t.Errorf("%s (L0) imports %s: layer 0 packages import only the standard library", p.rel, imp)
				}
				continue
			}
			to, ok := layerOf(rel)
			if !ok || to == layerTestOnly {
				continue // reported by LayerTableCoversEveryPackage or NoTestCodeInProduction
			}
			if to < from || (to == from && sameLayerAllowed(p.rel, rel)) {
				continue
			}
			t.Errorf("%s (%s) imports %s (%s): a package imports only lower layers (LAYOUT.md); "+
				"if this same-layer import is intended, list it in sameLayerImports in %s",
				p.rel, layerNames[from], rel, layerNames[to], tableHint)
		}
	}
}

// checkTablesCurrent fails a table entry the tree has left behind: a
// layer pattern or a sameLayerImports importer that matches no package,
// and a same-layer import allowed but made by no package it allows (an
// allowance outliving its import would let a new one in unreviewed).
func checkTablesCurrent(t *testing.T, m *module) {
	matchesAny := func(pattern string) bool {
		return slices.ContainsFunc(m.pkgs, func(p *modulePackage) bool { return matchPattern(pattern, p.rel) })
	}
	for _, e := range layers {
		if !matchesAny(e.pattern) {
			t.Errorf("layers lists %s, which matches no package; remove it from %s (LAYOUT.md keeps the plan)",
				e.pattern, tableHint)
		}
	}
	for importer, imported := range sameLayerImports {
		if !matchesAny(importer) {
			t.Errorf("sameLayerImports lists importer %s, which matches no package; remove it from %s",
				importer, tableHint)
			continue
		}
		for _, pattern := range imported {
			used := slices.ContainsFunc(m.pkgs, func(p *modulePackage) bool {
				if !matchPattern(importer, p.rel) {
					return false
				}
				return slices.ContainsFunc(p.productionImports(), func(imp string) bool {
					rel, ok := m.rel(imp)
					return ok && rel != p.rel && matchPattern(pattern, rel)
				})
			})
			if !used {
				t.Errorf("sameLayerImports allows %s -> %s, but no such import is made; remove it from %s",
					importer, pattern, tableHint)
			}
		}
	}
}

// checkCLIRoot fails an import of the module by the CLI's root that is
// not one of its own sub-packages (cliRoot).
func checkCLIRoot(t *testing.T, m *module) {
	for _, p := range m.pkgs {
		if p.rel != cliRoot {
			continue
		}
		for _, imp := range p.productionImports() {
			if rel, ok := m.rel(imp); ok && !matchPattern(cliRoot+"/...", rel) {
				t.Errorf("%s imports %s: the root only wires the command families together; "+
					"put the commands that need %s in a noun package under %s (see cliRoot in %s)",
					cliRoot, rel, rel, cliRoot, tableHint)
			}
		}
	}
}

// checkDaemonImports fails a production package outside the daemon cores
// and internal/daemon that imports a daemon core.
func checkDaemonImports(t *testing.T, m *module) {
	for _, p := range m.pkgs {
		if m.isTestOnly(p.importPath) || forbidden(p.rel, daemonCores) || forbidden(p.rel, daemonAssembly) {
			continue
		}
		for _, imp := range p.productionImports() {
			if rel, ok := m.rel(imp); ok && forbidden(rel, daemonCores) {
				t.Errorf("%s imports %s: outside the daemons' cores only %s assembles them; "+
					"build the daemon's config struct there (see daemonCores in %s)",
					p.rel, rel, strings.Join(daemonAssembly, ", "), tableHint)
			}
		}
	}
}

// forbidden reports whether path matches one of patterns.
func forbidden(path string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(pattern string) bool { return matchPattern(pattern, path) })
}

func (m *module) isTestOnly(importPath string) bool {
	rel, ok := m.rel(importPath)
	if !ok {
		return false
	}
	layer, ok := layerOf(rel)
	return ok && layer == layerTestOnly
}

func checkTestOnlyImports(t *testing.T, m *module) {
	for _, p := range m.pkgs {
		if m.isTestOnly(p.importPath) {
			continue
		}
		for _, imp := range p.productionImports() {
			if forbidden(imp, forbiddenInProduction) || m.isTestOnly(imp) {
				t.Errorf("%s imports %s outside _test.go files; only tests and test-only packages may", p.rel, imp)
			}
		}
		if p.name != "main" {
			continue
		}
		for _, dep := range p.deps {
			if forbidden(dep, forbiddenInProduction) || m.isTestOnly(dep) {
				t.Errorf("binary %s links in %s (%s)", p.rel, dep,
					strings.Join(m.importChain(p.importPath, dep), " -> "))
			}
		}
	}
}

// importChain returns a shortest import path from one package to another,
// to explain a transitive dependency.
func (m *module) importChain(from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var chain []string
			for p := to; p != ""; p = prev[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, next := range m.imports[cur] {
			if _, seen := prev[next]; !seen {
				prev[next] = cur
				queue = append(queue, next)
			}
		}
	}
	return []string{from, "...", to}
}

func checkDocComments(t *testing.T, m *module) {
	for _, p := range m.pkgs {
		hasFiles, hasDoc := false, false
		for _, f := range p.files {
			if !f.test && f.pkgName == p.name {
				hasFiles = true
				hasDoc = hasDoc || f.hasDoc
			}
		}
		switch {
		case !hasFiles:
			t.Errorf("package %s has only test files; add a doc.go with its package doc comment", p.rel)
		case !hasDoc:
			t.Errorf("package %s has no package doc comment; say what it owns, what it must not know, "+
				"its concurrency contract and where to start reading (STYLE.md 7)", p.rel)
		}
	}
}

func checkForbiddenEverywhere(t *testing.T, m *module) {
	for _, p := range m.pkgs {
		for _, f := range p.files {
			for _, imp := range f.imports {
				if forbidden(imp, forbiddenEverywhere) {
					t.Errorf("%s imports %s; log with an injected *slog.Logger and configure through internal/config",
						f.path, imp)
				}
			}
		}
	}
}

func checkNoPanicSprintf(t *testing.T, m *module) {
	// Built in two parts so that this file does not match itself.
	needle := []byte("panic(" + "fmt.Sprintf")
	for _, p := range m.pkgs {
		for _, f := range p.files {
			if i := bytes.Index(f.content, needle); i >= 0 {
				line := 1 + bytes.Count(f.content[:i], []byte("\n"))
				t.Errorf("%s:%d: panic with a message built by fmt.Sprintf; return an error, or panic with a constant message "+
					"or an error value", f.path, line)
			}
		}
	}
}

func TestMatchPattern(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"crush", "crush", true},
		{"crush", "crush/crushtext", false},
		{"internal/osd/...", "internal/osd", true},
		{"internal/osd/...", "internal/osd/pglog", true},
		{"internal/osd/...", "internal/osdx", false},
		{"testing/...", "testing", true},
		{"testing/...", "testing/synctest", true},
	}
	for _, tt := range tests {
		if got := matchPattern(tt.pattern, tt.path); got != tt.want {
			t.Errorf("matchPattern(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

func TestLayerTable(t *testing.T) {
	tests := []struct {
		path  string
		layer int
	}{
		{"encoding", layerLeaves},
		{"internal/rawio", layerLeaves},
		{"internal/cli/radoscmd", layerFrontEnds},
		{"internal/cli", layerFrontEnds},
		{"internal/sim", layerTestOnly},
		{"internal/objectstore/memstore", layerModels},
		{"internal/objectstore/storetest", layerTestOnly},
		{"internal/osd/peering", layerCores},
		{"internal/osd/scrub", layerCores},
		{"internal/osd/opq", layerCores},
		{"internal/osd/replication", layerCores},
		{"internal/osd/recovery", layerCores},
		{"internal/osd/snaps", layerCores},
		{"internal/osd/reserve", layerCores},
		{"internal/cls/lock", layerTransport},
		{"internal/cls/kv", layerTransport},
		{"kv", layerLibraries},
		{"kv/plan", layerLibraries},
		{"internal/cls/clstest", layerTestOnly},
		{"cmd/cuttle", layerEntry},
	}
	for _, tt := range tests {
		if got, ok := layerOf(tt.path); !ok || got != tt.layer {
			t.Errorf("layerOf(%q) = %d, %v; want %d", tt.path, got, ok, tt.layer)
		}
	}
	if _, ok := layerOf("nosuchpackage"); ok {
		t.Error("an unlisted package has a layer")
	}
	for importer, imported := range sameLayerImports {
		from, ok := layerOf(strings.TrimSuffix(importer, "/..."))
		if !ok {
			t.Errorf("sameLayerImports: importer %s is not in the layer table", importer)
		}
		for _, pattern := range imported {
			if to, ok := layerOf(strings.TrimSuffix(pattern, "/...")); !ok || to != from {
				t.Errorf("sameLayerImports: %s -> %s is not a same-layer pair", importer, pattern)
			}
		}
	}
	if !sameLayerAllowed("osdmap", "crush") || sameLayerAllowed("crush", "osdmap") {
		t.Error("osdmap may import crush, not the reverse")
	}
	if sameLayerAllowed("internal/osd", "internal/mon") || sameLayerAllowed("rados", "internal/osd") {
		t.Error("mon, osd and rados must not import each other")
	}
}
