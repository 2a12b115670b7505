package cls_test

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/cls"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
)

// TestStandard: the standard set holds the methods OSDs have always
// offered, each with the kind (read or write) clients' caps are checked
// against.
func TestStandard(t *testing.T) {
	r := cls.Standard()
	for name, write := range map[string]bool{
		"lock.lock": true, "lock.unlock": true, "lock.info": false,
		"version.read": false, "version.set": true, "version.inc": true, "version.check": false,
		"rbd.create": true, "rbd.get": false, "rbd.set_size": true, "rbd.snap_add": true,
		"rbd.snap_remove": true, "rbd.snap_protect": true, "rbd.dir_add": true, "rbd.dir_remove": true, "rbd.dir_rename": true,
		"rbd.child_attach": true, "rbd.child_detach": true, "rbd.children": false, "rbd.remove_parent": true, "rbd.set_overlap": true,
		"kv.write": true, "kv.read": false, "kv.freeze": true, "kv.mark": true, "kv.swap": true, "kv.unmark": true,
	} {
		m, ok := r.Lookup(name)
		if !ok || m.Write != write {
			t.Errorf("%s: registered %v, write %v (want write %v)", name, ok, m.Write, write)
		}
	}
	// Each call returns a registry of its own: registering into one
	// leaves the other as it was.
	other := cls.Standard()
	if err := r.Register("test", "echo", objclass.Method{Run: func(_ objclass.Context, in []byte) ([]byte, error) { return in, nil }}); err != nil {
		t.Fatal(err)
	}
	if _, ok := other.Lookup("test.echo"); ok {
		t.Fatal("test.echo leaked into another standard registry")
	}
}
