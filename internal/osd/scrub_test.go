package osd

import (
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

func TestCompareScrubMaps(t *testing.T) {
	a, b := objid.Object(1, "", "a"), objid.Object(1, "", "b")
	v1, v2 := wire.Version{Epoch: 3, Counter: 1}, wire.Version{Epoch: 3, Counter: 2}
	good := func(id objid.ID, v wire.Version, data uint32) wire.ScrubObject {
		return wire.ScrubObject{ID: id, Size: 10, Version: v, DataDigest: data}
	}
	for _, tc := range []struct {
		name      string
		maps      map[int32][]wire.ScrubObject
		auth, bad []int32
		why       string
	}{
		{"all agree", map[int32][]wire.ScrubObject{0: {good(a, v1, 7)}, 1: {good(a, v1, 7)}, 2: {good(a, v1, 7)}}, nil, nil, ""},
		{"the majority wins", map[int32][]wire.ScrubObject{0: {good(a, v1, 9)}, 1: {good(a, v1, 7)}, 2: {good(a, v1, 7)}},
			[]int32{1, 2}, []int32{0}, "osd [0]"},
		{"a tie goes to the newer version", map[int32][]wire.ScrubObject{0: {good(a, v1, 7)}, 1: {good(a, v2, 8)}},
			[]int32{1}, []int32{0}, "authoritative version 3'2"},
		{"then to the primary", map[int32][]wire.ScrubObject{0: {good(a, v1, 7)}, 1: {good(a, v1, 8)}},
			[]int32{0}, []int32{1}, "osd [1]"},
		{"an unreadable copy has no vote", map[int32][]wire.ScrubObject{0: {{ID: a, ReadError: "data: checksum"}}, 1: {good(a, v1, 7)}, 2: {good(a, v1, 8)}},
			[]int32{1}, []int32{0, 2}, "osd.0 cannot read it"},
		{"a missing copy", map[int32][]wire.ScrubObject{0: {good(a, v1, 7)}, 1: {good(a, v1, 7)}, 2: nil},
			[]int32{0, 1}, []int32{2}, "missing"},
		{"no readable copy", map[int32][]wire.ScrubObject{0: {{ID: a, ReadError: "x"}}, 1: {{ID: a, ReadError: "y"}}},
			nil, []int32{0, 1}, "no readable copy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.maps[0] = append(tc.maps[0], good(b, v1, 1)) // b is the same on every member
			for x := range tc.maps {
				if x != 0 {
					tc.maps[x] = append(tc.maps[x], good(b, v1, 1))
				}
			}
			got := compareScrubMaps(tc.maps, 0)
			if _, ok := got[b]; ok {
				t.Errorf("b is consistent, reported %+v", got[b])
			}
			inc, found := got[a]
			if tc.bad == nil {
				if found {
					t.Fatalf("reported %+v", inc)
				}
				return
			}
			if !found || !slices.Equal(inc.auth, tc.auth) || !slices.Equal(inc.bad, tc.bad) || !strings.Contains(inc.why, tc.why) {
				t.Fatalf("got auth %v bad %v (%s); want auth %v bad %v (%s)", inc.auth, inc.bad, inc.why, tc.auth, tc.bad, tc.why)
			}
		})
	}
}
