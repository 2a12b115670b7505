package daemon

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mon"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
)

const testFSID = "00000000-0000-4000-8000-000000000001"

// MkfsMon writes what ReadMonDir and NewMon read back, and refuses to
// make a monitor twice or one missing from the map.
func TestMkfsMon(t *testing.T) {
	dir := t.TempDir()
	kr := filepath.Join(dir, "admin.keyring")
	cfg := MonMkfsConfig{ID: "b", Data: filepath.Join(dir, "b"), MonHost: "a=127.0.0.1:1,b=127.0.0.1:2,c=127.0.0.1:3", FSID: testFSID,
		Auth: "cephx", AdminKeyring: kr}
	mm, err := MkfsMon(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, mode, err := ReadMonDir(cfg.Data)
	if err != nil || mode != "cephx" || got.String() != mm.String() || got.FSID != testFSID {
		t.Errorf("ReadMonDir = %v, %q, %v; made %v", got, mode, err, mm)
	}
	keys, err := auth.LoadKeyring(kr)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := keys[MonKeyName]; !ok {
		t.Error("the admin keyring has no monitor key")
	}
	if _, err := MkfsMon(cfg); err == nil || !strings.Contains(err.Error(), "already holds a monitor") {
		t.Errorf("a second mkfs: %v", err)
	}
	other := cfg
	other.ID, other.Data = "d", filepath.Join(dir, "d")
	if _, err := MkfsMon(other); err == nil || !strings.Contains(err.Error(), "not in the monitor map") {
		t.Errorf("a monitor not in the map: %v", err)
	}
	other.ID, other.Auth = "a", "kerberos"
	if _, err := MkfsMon(other); err == nil || !strings.Contains(err.Error(), "kerberos") {
		t.Errorf("an unknown auth mode: %v", err)
	}

	m, err := NewMon(MonConfig{Name: "b", Data: cfg.Data})
	if err != nil {
		t.Fatal(err)
	}
	// Run closes the store NewMon opened; without running, close it
	// here so the directory can be opened again.
	if err := m.closeStore(); err != nil {
		t.Fatal(err)
	}
}

// A monitor that cannot work is refused before it runs.
func TestNewMonRefused(t *testing.T) {
	mm, err := mon.ParseMonMap(testFSID, "a=127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	st, err := monstore.Open(monstore.Options{FS: vfs.NewMem(), Dir: "/mon"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range []struct {
		cfg  MonConfig
		want string
	}{
		{MonConfig{MonMap: mm, Store: st}, "Name is required"},
		{MonConfig{Name: "a", MonMap: mm}, "Data or MonConfig.Store is required"},
		{MonConfig{Name: "a", Data: t.TempDir()}, "not a monitor's data directory"},
		{MonConfig{Name: "a", Data: t.TempDir(), Store: st}, "exclude each other"},
		{MonConfig{Name: "a", MonMap: mm, Store: st, Auth: "kerberos"}, `auth "kerberos"`},
		{MonConfig{Name: "a", MonMap: mm, Store: st, Auth: "cephx", Keyring: auth.Keyring{}}, "keyring has no mon.* key"},
	} {
		if _, err := NewMon(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := NewMon(MonConfig{Name: "a", MonMap: mm, Store: st}); err != nil {
		t.Errorf("a monitor with auth none: %v", err)
	}
}
