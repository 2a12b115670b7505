package osdmon

import (
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

func TestPoolSnaps(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"pool snaps", []step{
			{prefix: "osd pool create", args: []string{"pool", "rbd", "pg_num", "8"}},
			{prefix: "osd pool lssnap", args: []string{"pool", "rbd"}, text: "0 snaps\n", data: `[]`},
			{prefix: "osd pool mksnap", args: []string{"pool", "rbd", "snap", "one"}, status: "created pool rbd snap one",
				data: `{"pool":"rbd","pool_id":1,"snapid":1,"name":"one","epoch":3}`},
			{prefix: "osd pool mksnap", args: []string{"pool", "rbd", "snap", "two"}, data: `{"pool":"rbd","pool_id":1,"snapid":2,"name":"two","epoch":4}`},
			{prefix: "osd pool mksnap", args: []string{"pool", "rbd", "snap", "one"}, code: moncmd.EEXIST, status: "pool 'rbd' snap 'one' already exists (id 1)"},
			{prefix: "osd pool lssnap", args: []string{"pool", "rbd"}, text: "1\tone\t2026.01.02 03:04:05\n2\ttwo\t2026.01.02 03:04:05\n2 snaps\n",
				data: `[{"id":1,"name":"one","created":"2026-01-02T03:04:05Z"},{"id":2,"name":"two","created":"2026-01-02T03:04:05Z"}]`},
			{prefix: "osd pool rmsnap", args: []string{"pool", "rbd", "snap", "one"}, status: "removed pool rbd snap one",
				data: `{"pool":"rbd","pool_id":1,"snapid":1,"name":"one","epoch":5}`},
			{prefix: "osd pool rmsnap", args: []string{"pool", "rbd", "snap", "one"}, code: moncmd.ENOENT, status: "pool 'rbd' has no snap 'one' (cuttle osd pool lssnap rbd lists them)"},
			// The removal burnt id 3: the next snapshot is 4.
			{prefix: "osd pool mksnap", args: []string{"pool", "rbd", "snap", "one"}, data: `{"pool":"rbd","pool_id":1,"snapid":4,"name":"one","epoch":6}`},
			{prefix: "osd pool ls", args: []string{"detail", "true"},
				text: "pool 1 'rbd' replicated size 3 min_size 2 crush_rule 0 object_hash rjenkins pg_num 8 pgp_num 8 last_change 6 flags hashpspool,pool_snaps snap_seq 4\n" +
					"\tsnap 2 'two' 2026-01-02T03:04:05.000000Z\n\tsnap 4 'one' 2026-01-02T03:04:05.000000Z\n\tremoved_snaps [1~1,3~1]\n"},
		}},
		{"self-managed snaps", []step{
			{prefix: "osd pool create", args: []string{"pool", "img", "pg_num", "8"}},
			{prefix: "osd pool selfmanaged_snap_create", args: []string{"pool", "img"}, status: "allocated pool img snap id 1",
				data: `{"pool":"img","pool_id":1,"snapid":1,"epoch":3}`},
			{prefix: "osd pool selfmanaged_snap_create", args: []string{"pool", "img"}, data: `{"pool":"img","pool_id":1,"snapid":2,"epoch":4}`},
			{prefix: "osd pool selfmanaged_snap_remove", args: []string{"pool", "img", "snapid", "1"}, status: "removed pool img snap id 1"},
			{prefix: "osd pool selfmanaged_snap_remove", args: []string{"pool", "img", "snapid", "1"}, status: "already removed",
				data: `{"pool":"img","pool_id":1,"snapid":1,"epoch":5}`},
			{prefix: "osd pool selfmanaged_snap_remove", args: []string{"pool", "img", "snapid", "9"}, code: moncmd.ENOENT, status: "never allocated snap id 9 (its snap_seq is 3)"},
			{prefix: "osd pool selfmanaged_snap_remove", args: []string{"pool", "img", "snapid", "0"}, code: moncmd.ENOENT},
			{prefix: "osd pool selfmanaged_snap_remove", args: []string{"pool", "img", "snapid", "x"}, code: moncmd.EINVAL},
			{prefix: "osd pool selfmanaged_snap_remove", args: []string{"pool", "img", "snapid", "2"}},
			{prefix: "osd pool ls", args: []string{"detail", "true"},
				text: "pool 1 'img' replicated size 3 min_size 2 crush_rule 0 object_hash rjenkins pg_num 8 pgp_num 8 last_change 6 flags hashpspool,selfmanaged_snaps snap_seq 4\n" +
					"\tremoved_snaps [1~4]\n"},
			{prefix: "osd pool lssnap", args: []string{"pool", "img"}, text: "0 snaps\n"},
		}},
		{"modes do not mix", []step{
			{prefix: "osd pool create", args: []string{"pool", "a", "pg_num", "8"}},
			{prefix: "osd pool create", args: []string{"pool", "b", "pg_num", "8"}},
			{prefix: "osd pool mksnap", args: []string{"pool", "a", "snap", "s"}},
			{prefix: "osd pool selfmanaged_snap_create", args: []string{"pool", "a"}, code: moncmd.EINVAL, status: "pool 'a' is in pool snaps mode"},
			{prefix: "osd pool selfmanaged_snap_remove", args: []string{"pool", "a", "snapid", "1"}, code: moncmd.EINVAL, status: "remove its snaps by name"},
			// The mode stays after the last pool snap goes, as in Ceph.
			{prefix: "osd pool rmsnap", args: []string{"pool", "a", "snap", "s"}},
			{prefix: "osd pool selfmanaged_snap_create", args: []string{"pool", "a"}, code: moncmd.EINVAL},
			{prefix: "osd pool selfmanaged_snap_create", args: []string{"pool", "b"}},
			{prefix: "osd pool mksnap", args: []string{"pool", "b", "snap", "s"}, code: moncmd.EINVAL, status: "pool 'b' is in self-managed snaps mode"},
		}},
		{"bad input", []step{
			{prefix: "osd pool create", args: []string{"pool", "a", "pg_num", "8"}},
			{prefix: "osd pool mksnap", args: []string{"pool", "nope", "snap", "s"}, code: moncmd.ENOENT, status: "unrecognized pool 'nope'"},
			{prefix: "osd pool rmsnap", args: []string{"pool", "nope", "snap", "s"}, code: moncmd.ENOENT},
			{prefix: "osd pool lssnap", args: []string{"pool", "nope"}, code: moncmd.ENOENT},
			{prefix: "osd pool selfmanaged_snap_create", args: []string{"pool", "nope"}, code: moncmd.ENOENT},
			{prefix: "osd pool mksnap", args: []string{"pool", "a"}, code: moncmd.EINVAL, status: `missing "snap"`},
			{prefix: "osd pool mksnap", args: []string{"pool", "a", "snap", string(make([]byte, osdmap.MaxNameLen+1))}, code: moncmd.EINVAL},
			{prefix: "osd pool rmsnap", args: []string{"pool", "a", "snap", "never"}, code: moncmd.ENOENT},
			// A self-managed id on a pool that never allocated one.
			{prefix: "osd pool selfmanaged_snap_remove", args: []string{"pool", "a", "snapid", "1"}, code: moncmd.ENOENT},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newCluster(t)
			runSteps(t, m, tc.steps)
		})
	}
}

// The map the monitors commit carries the snapshot fields; the OSDs and
// clients read the pool's snap context from it.
func TestPoolSnapContextInMap(t *testing.T) {
	m := newCluster(t)
	runSteps(t, m, []step{
		{prefix: "osd pool create", args: []string{"pool", "rbd", "pg_num", "8"}},
		{prefix: "osd pool mksnap", args: []string{"pool", "rbd", "snap", "a"}},
		{prefix: "osd pool mksnap", args: []string{"pool", "rbd", "snap", "b"}},
		{prefix: "osd pool mksnap", args: []string{"pool", "rbd", "snap", "c"}},
		{prefix: "osd pool rmsnap", args: []string{"pool", "rbd", "snap", "b"}},
	})
	p := m.svc.Map().PoolByName("rbd")
	seq, snaps := p.SnapContext()
	if seq != 4 || !slices.Equal(snaps, []uint64{3, 1}) {
		t.Fatalf("snap context %d %v, want 4 [3 1]", seq, snaps)
	}
	if !p.RemovedSnaps.Contains(2) || p.RemovedSnaps.Contains(3) {
		t.Fatalf("removed snaps %s, want 2 in and 3 out", p.RemovedSnaps)
	}
}
