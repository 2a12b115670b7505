package osdmon

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

func TestCreate(t *testing.T) {
	m := newTestMon(t)
	runSteps(t, m, []step{
		{prefix: "osd stat", code: moncmd.ENOENT, status: "no OSD map yet"},
		{prefix: "osd create", code: moncmd.ENOENT, status: "no OSD map yet"},
		{prefix: "osdmap create", code: moncmd.EINVAL, status: `missing "fsid"`},
		{prefix: "osdmap create", args: []string{"fsid", "nope"}, code: moncmd.EINVAL, status: "not a uuid"},
		{prefix: "osdmap create", args: []string{"fsid", testFSID}, status: "created osdmap epoch 1"},
		{prefix: "osdmap create", args: []string{"fsid", testFSID}, status: "exists (epoch 1)"},
		{prefix: "osdmap create", args: []string{"fsid", "c0ffee00-0000-4000-8000-000000000002"}, code: moncmd.EEXIST},
		{prefix: "osd stat", text: "0 osds: 0 up, 0 in; epoch: e1\n"},
		{prefix: "osd crush rule ls", text: "replicated_rule\n", data: `["replicated_rule"]`},
		{prefix: "osd tree", text: "ID  CLASS  WEIGHT   TYPE NAME     STATUS  REWEIGHT  PRI-AFF\n-1         0.00000  root default\n"},
	})
	if first, last, _ := m.st.Epochs(ServiceName); first != 1 || last != 1 {
		t.Errorf("history %d..%d", first, last)
	}
	if m.svc.Map().FSID().String() != testFSID {
		t.Errorf("fsid %s", m.svc.Map().FSID())
	}
}

// TestCreateRace checks that a second create proposal is refused once a
// map exists.
func TestCreateRace(t *testing.T) {
	m := newTestMon(t)
	p1, _ := m.svc.Prepare(moncmd.New("osdmap create", "fsid", testFSID), m.now)
	p2, _ := m.svc.Prepare(moncmd.New("osdmap create", "fsid", testFSID), m.now)
	must(t, m.commit(m.svc, p1))
	if r := m.commit(m.svc, p2); r.Code != moncmd.EAGAIN {
		t.Fatalf("second create: %d %s", r.Code, r.Status)
	}
}
