package osdmon

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// "osd set-loads" publishes loads in the OSDs' entries; the same loads
// again propose nothing; osd dump shows them.
func TestSetLoads(t *testing.T) {
	m := newBootedCluster(t, 3, 1)
	e0 := m.svc.Map().Epoch()
	r := must(t, m.run("osd set-loads", "loads", "0:40/10/70,2:100/0/0"))
	if !strings.Contains(r.Status, "osd.0 disk 40% cpu 10% mem 70%") {
		t.Fatalf("status %q", r.Status)
	}
	if got := m.osd(0).Load; got != (osdmap.Load{Disk: 40, CPU: 10, Memory: 70}) {
		t.Fatalf("osd.0 load %v", got)
	}
	if got := m.osd(1).Load; got != (osdmap.Load{}) {
		t.Fatalf("osd.1 load %v, want none", got)
	}
	if r := must(t, m.run("osd set-loads", "loads", "0:40/10/70,2:100/0/0")); r.Status != "" || m.svc.Map().Epoch() != e0+1 {
		t.Fatalf("the same loads again: %q at epoch %d, want nothing proposed", r.Status, m.svc.Map().Epoch())
	}
	d := must(t, m.run("osd dump"))
	var v DumpView
	if err := json.Unmarshal(d.Data, &v); err != nil {
		t.Fatal(err)
	}
	if l := v.OSDs[2].Load; l == nil || l.Disk != 100 || v.OSDs[1].Load != nil {
		t.Fatalf("osd dump loads: %+v, %+v", v.OSDs[2].Load, v.OSDs[1].Load)
	}
	if !strings.Contains(d.Text, "load disk 100% cpu 0% mem 0%") {
		t.Fatalf("osd dump text lacks the load:\n%s", d.Text)
	}
	for _, bad := range []string{"0:40/10", "x:1/2/3", "0:101/0/0", "0:1/2/3,0:1/2/3", ""} {
		if r := m.run("osd set-loads", "loads", bad); r.Code != moncmd.EINVAL {
			t.Errorf("loads %q: code %d %q, want EINVAL", bad, r.Code, r.Status)
		}
	}
}
