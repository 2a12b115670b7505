package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// pureCores are the packages whose doc comments promise pure decisions:
// events or state in, decisions out, with a driver in their parent doing
// the I/O. They may not start goroutines, lock, read the clock or reach
// the store, the network or the file system.
var pureCores = []string{
	"internal/osd/peering",
	"internal/osd/scrub",
	"internal/osd/opq",
	"internal/osd/replication",
	"internal/osd/recovery",
	"internal/osd/snaps",
	"internal/osd/reserve",
	"internal/osd/watch",
	"internal/osd/split",
	"internal/osd/merge",
	"internal/balancer",
	"striper/layout",
	"kv/plan",
	"internal/autoscale",
	"internal/mds/locker",
	"fsclient/internal/extmap",
	"fsclient/internal/session",
	"fsclient/internal/captab",
	"internal/mds/mdtypes",
	"internal/mon/mdsmon/failover",
	"internal/nbd/proto",
}

// impureImports are the packages a pure core must not import.
var impureImports = []string{
	"os", "os/...", "net", "net/...", "syscall", "io/fs", "sync", "sync/...", "context",
	"github.com/cuttlestore/cuttle/internal/objectstore/...",
	"github.com/cuttlestore/cuttle/internal/msgr/...",
	"github.com/cuttlestore/cuttle/internal/monc",
	"github.com/cuttlestore/cuttle/internal/clock",
}

// clockReads are the time package's functions that read or wait on the
// clock; a pure core is given the time instead.
var clockReads = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true,
}

func TestPureCores(t *testing.T) {
	m := load(t)
	for _, rel := range pureCores {
		var p *modulePackage
		for _, q := range m.pkgs {
			if q.rel == rel {
				p = q
			}
		}
		if p == nil {
			t.Errorf("pure core %s is not in the module", rel)
			continue
		}
		for _, imp := range p.productionImports() {
			if forbidden(imp, impureImports) {
				t.Errorf("%s is a pure core but imports %s; leave that to its driver", rel, imp)
			}
		}
		for _, f := range p.files {
			if f.test || f.pkgName != p.name {
				continue
			}
			checkPureFile(t, f)
		}
	}
}

// checkPureFile reports go statements and reads of the clock in f.
func checkPureFile(t *testing.T, f sourceFile) {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, f.path, f.content, 0)
	if err != nil {
		t.Errorf("%s: %v", f.path, err)
		return
	}
	timeName := ""
	for _, imp := range file.Imports {
		if imp.Path.Value == `"time"` {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			t.Errorf("%s: a go statement in a pure core; the driver runs goroutines", fset.Position(n.Pos()))
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && clockReads[n.Sel.Name] {
				t.Errorf("%s: time.%s in a pure core; take the time as an argument", fset.Position(n.Pos()), n.Sel.Name)
			}
		}
		return true
	})
}
