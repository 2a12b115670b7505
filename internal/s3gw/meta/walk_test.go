package meta

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
)

// Walk passes every key in order, the good with their entries and
// version ids, the bad (an entry that does not decode, version ids that
// are malformed or spell "null" after the separator) with an error,
// and goes on past them; stopping early stops it.
func TestWalk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		_, _, ix := testIndex(t, 3, "walk")
		good := Entry{Size: 3, ETag: "e", Extents: []Extent{{ID: 7, Size: 3}}}
		vid := NewVersionID(5)
		for k, v := range map[string][]byte{
			"a":            good.Encode(),
			"a\x00" + vid:  good.Encode(),
			"b":            {1, 2, 3},
			"c\x00null":    good.Encode(),
			"c\x00NOTANID": good.Encode(),
			"d":            Entry{Deleted: true}.Encode(),
		} {
			if err := ix.kv.Put(ctx, k, v); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		err := ix.Walk(ctx, "", func(name, id string, st Stored, err error) bool {
			switch {
			case err != nil:
				got = append(got, name+"@"+id+":bad")
			case !st.Live:
				got = append(got, name+"@"+id+":tombstone")
			default:
				if st.Entry.VersionID != id || len(st.Entry.Extents) != 1 {
					t.Errorf("%s@%s: %+v", name, id, st.Entry)
				}
				got = append(got, name+"@"+id)
			}
			return false
		})
		want := "a@null a@" + vid + " b@null:bad c@NOTANID:bad c@null:bad d@null:tombstone"
		if err != nil || strings.Join(got, " ") != want {
			t.Fatalf("walk: %v\n got %s\nwant %s", err, strings.Join(got, " "), want)
		}
		n := 0
		if err := ix.Walk(ctx, "b", func(string, string, Stored, error) bool { n++; return n == 2 }); err != nil || n != 2 {
			t.Fatalf("a walk from b stopped at 2: %d %v", n, err)
		}
	})
}
