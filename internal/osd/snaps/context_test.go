package snaps

import (
	"errors"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/osdmap"
)

func TestContextValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		c    Context
		ok   bool
	}{
		{"empty", Context{}, true},
		{"seq alone", Context{Seq: 5}, true},
		{"newest first", Context{Seq: 9, Snaps: []uint64{9, 4, 1}}, true},
		{"unsorted", Context{Seq: 9, Snaps: []uint64{4, 9}}, false},
		{"duplicate", Context{Seq: 9, Snaps: []uint64{4, 4}}, false},
		{"seq below a snap", Context{Seq: 3, Snaps: []uint64{4}}, false},
		{"snap 0", Context{Seq: 3, Snaps: []uint64{2, 0}}, false},
		{"seq is head", Context{Seq: osdmap.MaxSnapID}, false},
		{"too many", Context{Seq: MaxContextSnaps + 2, Snaps: descending(MaxContextSnaps + 1)}, false},
	} {
		err := c.c.Validate()
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrInvalidContext)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func descending(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(n - i)
	}
	return out
}

func TestForWrite(t *testing.T) {
	poolSnaps := osdmap.Pool{Flags: osdmap.PoolSnaps, SnapSeq: 7,
		Snaps: []osdmap.PoolSnap{{ID: 2, Name: "a"}, {ID: 5, Name: "b"}}, RemovedSnaps: osdmap.SnapIntervals{{Start: 3, Len: 2}}}
	selfManaged := osdmap.Pool{Flags: osdmap.PoolSelfManagedSnap, SnapSeq: 9, RemovedSnaps: osdmap.SnapIntervals{{Start: 3, Len: 2}}}
	for _, c := range []struct {
		name    string
		pool    *osdmap.Pool
		client  Context
		want    Context
		invalid bool
	}{
		{"pool snaps: the pool's context replaces an older one", &poolSnaps, Context{Seq: 2, Snaps: []uint64{2}}, Context{Seq: 7, Snaps: []uint64{5, 2}}, false},
		{"pool snaps: and an empty one", &poolSnaps, Context{}, Context{Seq: 7, Snaps: []uint64{5, 2}}, false},
		{"pool snaps: a malformed one is refused", &poolSnaps, Context{Seq: 1, Snaps: []uint64{2}}, Context{}, true},
		{"self-managed: the client's", &selfManaged, Context{Seq: 9, Snaps: []uint64{9, 5}}, Context{Seq: 9, Snaps: []uint64{9, 5}}, false},
		{"self-managed: removed snaps dropped", &selfManaged, Context{Seq: 9, Snaps: []uint64{9, 4, 3, 1}}, Context{Seq: 9, Snaps: []uint64{9, 1}}, false},
		{"self-managed: unsorted refused", &selfManaged, Context{Seq: 9, Snaps: []uint64{1, 9}}, Context{}, true},
		{"no snaps yet", &osdmap.Pool{}, Context{}, Context{}, false},
	} {
		got, err := ForWrite(c.pool, c.client)
		if c.invalid {
			if !errors.Is(err, ErrInvalidContext) {
				t.Errorf("%s: %v, want ErrInvalidContext", c.name, err)
			}
			continue
		}
		if err != nil || got.Seq != c.want.Seq || !slices.Equal(got.Snaps, c.want.Snaps) {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, err, c.want)
		}
	}
}
