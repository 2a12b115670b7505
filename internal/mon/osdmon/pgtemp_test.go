package osdmon

import (
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// A PG's temporary acting set is set in order, overrides CRUSH's, and is
// removed again; bad requests change nothing.
func TestPGTemp(t *testing.T) {
	m := newBootedCluster(t, 4, 1)
	must(t, m.run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "3"))
	pg := osdmap.PG{Pool: 1, Seed: 3}
	must(t, m.run("osd pg-temp", "pgid", "1.3", "osds", "2,0,1"))
	if got := m.svc.m.PGTemp(pg); !slices.Equal(got, []int32{2, 0, 1}) {
		t.Fatalf("pg_temp %v, want [2 0 1]", got)
	}
	mp, err := m.svc.m.PGToUpActing(pg, &osdmap.Scratch{})
	if err != nil || !slices.Equal(mp.Acting, []int32{2, 0, 1}) || mp.ActingPrimary != 2 {
		t.Fatalf("mapping %+v, %v: want acting [2 0 1] led by osd.2", mp, err)
	}
	epoch := m.svc.m.Epoch()
	must(t, m.run("osd pg-temp", "pgid", "1.3", "osds", "2,0,1"))
	if m.svc.m.Epoch() != epoch {
		t.Fatal("setting the same pg_temp made a new map")
	}
	must(t, m.run("osd pg-temp", "pgid", "1.3"))
	if got := m.svc.m.PGTemp(pg); got != nil {
		t.Fatalf("pg_temp %v after removal", got)
	}
	for _, tc := range []struct {
		args []string
		code int32
	}{
		{[]string{"pgid", "1.8", "osds", "0"}, moncmd.ENOENT},
		{[]string{"pgid", "9.0", "osds", "0"}, moncmd.ENOENT},
		{[]string{"pgid", "x", "osds", "0"}, moncmd.EINVAL},
		{[]string{"pgid", "1.1", "osds", "0,0"}, moncmd.EINVAL},
		{[]string{"pgid", "1.1", "osds", "7"}, moncmd.ENOENT},
		{[]string{"osds", "1"}, moncmd.EINVAL},
	} {
		if r := m.run("osd pg-temp", tc.args...); r.Code != tc.code {
			t.Errorf("osd pg-temp %v: %+v, want code %d", tc.args, r, tc.code)
		}
	}
}
