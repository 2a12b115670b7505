package osdmon

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// upmapTarget returns, for a PG on hosts of two OSDs each, an OSD on a
// host the PG does not use and one sharing a host with raw[1].
func upmapTarget(t *testing.T, m *testMon, pg osdmap.PG) (raw []int32, free, clash int32) {
	t.Helper()
	raw, _, _, err := m.svc.m.PGToRawOSDs(pg, &osdmap.Scratch{})
	if err != nil {
		t.Fatal(err)
	}
	free = -1
	for o := range int32(6) {
		if !slices.ContainsFunc(raw, func(r int32) bool { return r/2 == o/2 }) {
			free = o
			break
		}
	}
	clash = raw[1] ^ 1 // the other OSD of raw[1]'s host
	if free < 0 {
		t.Fatalf("raw %v uses every host", raw)
	}
	return raw, free, clash
}

// pg-upmap-items sets a PG's pairs when they keep the rule's failure
// domains, osd dump shows them, rm-pg-upmap-items removes them, and
// removing the target OSD removes them too (Ceph's clean_pg_upmaps).
func TestPGUpmapItems(t *testing.T) {
	m := newBootedCluster(t, 6, 2)
	must(t, m.run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "2"))
	pg := osdmap.PG{Pool: 1, Seed: 3}
	raw, free, clash := upmapTarget(t, m, pg)

	must(t, m.run("osd pg-upmap-items", "pgid", "1.3", "mappings", fmt.Sprintf("%d %d", raw[0], free)))
	want := []osdmap.UpmapItem{{From: raw[0], To: free}}
	if got := m.svc.m.PGUpmapItems(pg); !slices.Equal(got, want) {
		t.Fatalf("pg_upmap_items %v, want %v", got, want)
	}
	mp, err := m.svc.m.PGToUpActing(pg, &osdmap.Scratch{})
	if err != nil || !slices.Equal(mp.Up, []int32{free, raw[1]}) {
		t.Fatalf("up %v (%v), want [%d %d]", mp.Up, err, free, raw[1])
	}
	dump := must(t, m.run("osd dump"))
	line := fmt.Sprintf("pg_upmap_items 1.3 [%d,%d]", raw[0], free)
	var v DumpView
	if err := json.Unmarshal(dump.Data, &v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dump.Text, line) || len(v.PGUpmapItems) != 1 || v.PGUpmapItems[0].PG != "1.3" ||
		v.PGUpmapItems[0].Mappings[0] != (UpmapPairView{From: raw[0], To: free}) {
		t.Fatalf("osd dump has no %q:\n%s\n%+v", line, dump.Text, v.PGUpmapItems)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int32
	}{
		{"two copies on one host", []string{"pgid", "1.3", "mappings", fmt.Sprintf("%d %d", raw[0], clash)}, moncmd.EINVAL},
		{"odd ids", []string{"pgid", "1.3", "mappings", "1 2 3"}, moncmd.EINVAL},
		{"to itself", []string{"pgid", "1.3", "mappings", "1 1"}, moncmd.EINVAL},
		{"no such osd", []string{"pgid", "1.3", "mappings", "1 9"}, moncmd.ENOENT},
		{"no such pg", []string{"pgid", "1.8", "mappings", "1 2"}, moncmd.ENOENT},
		{"no mappings", []string{"pgid", "1.3"}, moncmd.EINVAL},
	} {
		if r := m.run("osd pg-upmap-items", tc.args...); r.Code != tc.code {
			t.Errorf("%s: %+v, want code %d", tc.name, r, tc.code)
		}
	}
	if got := m.svc.m.PGUpmapItems(pg); !slices.Equal(got, want) {
		t.Fatalf("refused commands changed the entry: %v", got)
	}

	must(t, m.run("osd rm-pg-upmap-items", "pgid", "1.3"))
	if got := m.svc.m.PGUpmapItems(pg); got != nil {
		t.Fatalf("pg_upmap_items %v after rm", got)
	}
	epoch := m.svc.m.Epoch()
	must(t, m.run("osd rm-pg-upmap-items", "pgid", "1.3"))
	if m.svc.m.Epoch() != epoch {
		t.Fatal("removing an absent entry made a new map")
	}

	// The target destroyed: the entry goes with it.
	must(t, m.run("osd pg-upmap-items", "pgid", "1.3", "mappings", fmt.Sprintf("%d %d", raw[0], free)))
	must(t, m.run("osd down", "ids", fmt.Sprint(free)))
	if got := m.svc.m.PGUpmapItems(pg); !slices.Equal(got, want) {
		t.Fatalf("marking the target down removed the entry: %v", got)
	}
	must(t, m.run("osd rm", "ids", fmt.Sprint(free)))
	if got := m.svc.m.PGUpmapItems(pg); got != nil {
		t.Fatalf("pg_upmap_items %v after osd.%d was removed", got, free)
	}
}

// A balancer plan applies in one epoch, or not at all if the map moved on.
func TestPGUpmapPlan(t *testing.T) {
	m := newBootedCluster(t, 6, 2)
	must(t, m.run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "2"))
	pg := osdmap.PG{Pool: 1, Seed: 5}
	raw, free, _ := upmapTarget(t, m, pg)
	items := fmt.Sprintf("1.5 %d %d", raw[0], free)
	stale := fmt.Sprint(m.svc.m.Epoch() - 1)
	if r := m.run("osd pg-upmap-plan", "epoch", stale, "items", items); r.Code != moncmd.EBUSY {
		t.Fatalf("stale plan: %+v", r)
	}
	epoch := m.svc.m.Epoch()
	must(t, m.run("osd pg-upmap-plan", "epoch", fmt.Sprint(epoch), "items", items))
	if m.svc.m.Epoch() != epoch+1 || m.svc.m.PGUpmapItems(pg) == nil {
		t.Fatalf("plan not applied in one epoch: epoch %d, items %v", m.svc.m.Epoch(), m.svc.m.PGUpmapItems(pg))
	}
	must(t, m.run("osd pg-upmap-plan", "epoch", fmt.Sprint(epoch+1), "rm", "1.5"))
	if m.svc.m.PGUpmapItems(pg) != nil {
		t.Fatal("plan's rm did not remove the entry")
	}
	if r := m.run("osd pg-upmap-plan", "epoch", fmt.Sprint(epoch+2), "items", "1.5 0"); r.Code != moncmd.EINVAL {
		t.Fatalf("odd plan entry: %+v", r)
	}
}
