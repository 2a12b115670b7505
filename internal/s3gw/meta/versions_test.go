package meta

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/kv"
)

// Version ids sort newest first, carry their stamp, and are told from
// malformed ones.
func TestVersionIDs(t *testing.T) {
	var ids []string
	for _, s := range []int64{1, 1700000000000000000, 1700000000000000001, 1 << 62} {
		id := NewVersionID(s)
		if !ValidVersionID(id) || VersionIDStamp(id) != s {
			t.Fatalf("id %q of stamp %d: valid %v, stamp %d", id, s, ValidVersionID(id), VersionIDStamp(id))
		}
		ids = append(ids, id)
	}
	if !sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] > ids[j] }) {
		t.Fatalf("ids of later stamps do not sort first: %v", ids)
	}
	if a, b := NewVersionID(5), NewVersionID(5); a == b {
		t.Fatalf("two ids of one stamp are the same: %s", a)
	}
	for _, bad := range []string{"", "Null", "abc", strings.Repeat("g", 24), strings.Repeat("A", 24), strings.Repeat("0", 23), strings.Repeat("0", 25), "../" + strings.Repeat("0", 21)} {
		if ValidVersionID(bad) {
			t.Fatalf("%q is a valid id", bad)
		}
	}
	if !ValidVersionID(NullVersion) {
		t.Fatal("null is not a valid id")
	}
	id := NewVersionID(9)
	for _, c := range []struct{ name, id, key string }{{"a", "", "a"}, {"a", NullVersion, "a"}, {"a/b", id, "a/b\x00" + id}} {
		k := VersionKey(c.name, c.id)
		if k != c.key {
			t.Fatalf("VersionKey(%q, %q) = %q", c.name, c.id, k)
		}
		n, got := splitVersionKey(k)
		want := c.id
		if want == "" {
			want = NullVersion
		}
		if n != c.name || got != want {
			t.Fatalf("split %q: %q %q", k, n, got)
		}
	}
}

// The null version sits among the others by its stamp; an entry from
// before stamps orders by its time.
func TestOrderVersions(t *testing.T) {
	v := func(id string, stamp int64) Entry { return Entry{VersionID: id, Stamp: stamp} }
	ids := []Entry{v("c", 30), v("b", 20), v("a", 10)}
	for _, c := range []struct {
		null *Entry
		want string
	}{
		{nil, "cba"},
		{&Entry{VersionID: NullVersion, Stamp: 40}, "ncba"},
		{&Entry{VersionID: NullVersion, Stamp: 25}, "cnba"},
		{&Entry{VersionID: NullVersion, Stamp: 5}, "cban"},
		{&Entry{VersionID: NullVersion, MTime: time.Unix(0, 15)}, "cbna"},
		{&Entry{VersionID: NullVersion, Stamp: 20}, "cbna"}, // a tie: the id's first
	} {
		got := ""
		for _, e := range orderVersions(c.null, ids) {
			got += e.VersionID[:1]
		}
		if got != c.want {
			t.Fatalf("null %+v: order %s, want %s", c.null, got, c.want)
		}
	}
	if got := NextStamp(100, Entry{Stamp: 50}, true); got != 100 {
		t.Fatalf("next stamp after an older latest: %d", got)
	}
	if got := NextStamp(100, Entry{Stamp: 150}, true); got != 151 {
		t.Fatalf("next stamp after a latest from a clock ahead: %d", got)
	}
	if got := NextStamp(100, Entry{Stamp: 150}, false); got != 100 {
		t.Fatalf("next stamp without a latest: %d", got)
	}
}

// testIndex is the index of a bucket named name on a simulated
// cluster.
func testIndex(t *testing.T, seed uint64, name string) (*Store, Bucket, *Index) {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: seed, MinDelay: 100 * time.Microsecond, MaxDelay: 200 * time.Microsecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "s3", "pg_num", "8", "size", "3")
	c.WaitForEpoch(c.Epoch())
	io, err := c.Client("client.t").OpenIOContext("s3")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := NewStore(io, kv.Config{}, nil)
	if _, err := s.CreateUser(ctx, "u", ""); err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateBucket(ctx, name, "u", "r", Private("u"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := s.Index(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	return s, b, ix
}

func ids(vs []Entry) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.ETag)
	}
	return strings.Join(s, ",")
}

// Versions with ids and a null version of one name, and other names
// around it: Latest, Versions, Version, ListLatest (delete markers hide
// a name), RemoveVersion (over the entry read only), and the bucket's
// versioning state.
func TestIndexVersions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, b, ix := testIndex(t, 3, "vers")
		ctx := context.Background()
		at := func(sec int64) time.Time { return time.Unix(1700000000+sec, 0).UTC() }
		// "k": a null version written before versioning (time 10), then
		// versions v1 (20) and v2 (30); "a" and "k0" plain objects; "m"
		// only a delete marker over a version.
		if err := ix.Put(ctx, "k", Entry{ETag: "null", MTime: at(10)}); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"a", "k0"} {
			if err := ix.Put(ctx, n, Entry{ETag: n, MTime: at(1)}); err != nil {
				t.Fatal(err)
			}
		}
		put := func(name string, en Entry) Entry {
			t.Helper()
			var after int64
			if l, err := ix.Latest(ctx, name); err == nil {
				after = l.VersionStamp()
			} else if !errors.Is(err, ErrNoSuchObject) {
				t.Fatal(err)
			}
			v, err := ix.PutVersion(ctx, name, en, after)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		v1 := put("k", Entry{ETag: "v1", MTime: at(20)})
		v2 := put("k", Entry{ETag: "v2", MTime: at(30)})
		// A version written by a gateway whose clock is behind still
		// comes after the latest.
		v3 := put("k", Entry{ETag: "v3", MTime: at(25)})
		if v3.Stamp <= v2.Stamp {
			t.Fatalf("v3 stamped %d, not after v2's %d", v3.Stamp, v2.Stamp)
		}
		put("m", Entry{ETag: "m1", MTime: at(5)})
		put("m", Entry{ETag: "marker", MTime: at(6), DeleteMarker: true})

		vs, err := ix.Versions(ctx, "k")
		if err != nil || ids(vs) != "v3,v2,v1,null" {
			t.Fatalf("versions of k: %s %v", ids(vs), err)
		}
		if vs[3].VersionID != NullVersion || vs[0].VersionID != v3.VersionID {
			t.Fatalf("version ids: %+v", vs)
		}
		if l, err := ix.Latest(ctx, "k"); err != nil || l.ETag != "v3" {
			t.Fatalf("latest of k: %+v %v", l, err)
		}
		if l, err := ix.Latest(ctx, "m"); err != nil || !l.DeleteMarker {
			t.Fatalf("latest of m: %+v %v", l, err)
		}
		if _, err := ix.Latest(ctx, "nope"); !errors.Is(err, ErrNoSuchObject) {
			t.Fatalf("latest of a name without versions: %v", err)
		}
		if en, err := ix.Version(ctx, "k", v1.VersionID); err != nil || en.ETag != "v1" || en.VersionID != v1.VersionID {
			t.Fatalf("version v1: %+v %v", en, err)
		}
		if en, err := ix.Version(ctx, "k", NullVersion); err != nil || en.ETag != "null" {
			t.Fatalf("null version: %+v %v", en, err)
		}
		if _, err := ix.Version(ctx, "k", NewVersionID(1)); !errors.Is(err, ErrNoSuchVersion) {
			t.Fatalf("a version never written: %v", err)
		}
		list := func(start string, limit int) string {
			t.Helper()
			got, more, err := ix.ListLatest(ctx, start, "", limit)
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, l := range got {
				s = append(s, l.Key+"="+l.Entry.ETag)
			}
			return fmt.Sprintf("%s more=%v", strings.Join(s, " "), more)
		}
		for _, c := range []struct {
			start string
			limit int
			want  string
		}{
			{"", 10, "a=a k=v3 k0=k0 more=false"},
			{"", 2, "a=a k=v3 more=true"},
			{"k\x00", 10, "k0=k0 more=false"}, // after k: its versions are read past
			{"k", 1, "k=v3 more=true"},
		} {
			if got := list(c.start, c.limit); got != c.want {
				t.Fatalf("list from %q, %d: %s, want %s", c.start, c.limit, got, c.want)
			}
		}

		// Removing v3 makes v2 the latest; a removal over a stale read
		// is refused.
		st, err := ix.Current(ctx, VersionKey("k", v3.VersionID))
		if err != nil {
			t.Fatal(err)
		}
		changed := st.Entry
		changed.Tags = []Tag{{"t", "1"}}
		if err := ix.Swap(ctx, VersionKey("k", v3.VersionID), st, changed); err != nil {
			t.Fatal(err)
		}
		if err := ix.RemoveVersion(ctx, "k", v3.VersionID, st); !errors.Is(err, ErrConflict) {
			t.Fatalf("remove over a stale read: %v", err)
		}
		st, _ = ix.Current(ctx, VersionKey("k", v3.VersionID))
		if err := ix.RemoveVersion(ctx, "k", v3.VersionID, st); err != nil {
			t.Fatal(err)
		}
		if err := ix.RemoveVersion(ctx, "k", v3.VersionID, Stored{}); !errors.Is(err, ErrNoSuchVersion) {
			t.Fatalf("remove of an absent version: %v", err)
		}
		if l, err := ix.Latest(ctx, "k"); err != nil || l.ETag != "v2" {
			t.Fatalf("latest after removing v3: %+v %v", l, err)
		}
		// Removing m's marker shows m1 again.
		mv, _ := ix.Versions(ctx, "m")
		st, _ = ix.Current(ctx, VersionKey("m", mv[0].VersionID))
		if err := ix.RemoveVersion(ctx, "m", mv[0].VersionID, st); err != nil {
			t.Fatal(err)
		}
		if got := list("", 10); got != "a=a k=v2 k0=k0 m=m1 more=false" {
			t.Fatalf("list after removing m's marker: %s", got)
		}

		// The bucket's state.
		b2, err := s.SetBucketVersioning(ctx, b, VersioningEnabled)
		if err != nil || b2.Versioning != VersioningEnabled {
			t.Fatalf("enable: %+v %v", b2, err)
		}
		if _, err := s.SetBucketVersioning(ctx, b, ""); err == nil {
			t.Fatal("versioning turned off")
		}
		if got, err := s.GetBucket(ctx, "vers"); err != nil || got.Versioning != VersioningEnabled {
			t.Fatalf("bucket read back: %+v %v", got, err)
		}
	})
}

// A name with more versions than one index leaf holds: its versions
// span leaves, and Latest, Versions and listings still see them all, in
// order.
func TestVersionsAcrossLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, _, ix := testIndex(t, 5, "vers")
		ctx := context.Background()
		const n = 900 // more than 2k = 800: at least two leaves
		var want []string
		var after int64
		for i := range n {
			v, err := ix.PutVersion(ctx, "obj", Entry{ETag: fmt.Sprint(i), MTime: time.Unix(1, 0)}, after)
			if err != nil {
				t.Fatal(err)
			}
			after = v.Stamp
			want = append([]string{fmt.Sprint(i)}, want...)
		}
		if err := ix.Put(ctx, "obj2", Entry{ETag: "x"}); err != nil {
			t.Fatal(err)
		}
		if len(ix.kv.Leaves()) < 2 {
			t.Fatalf("%d leaves", len(ix.kv.Leaves()))
		}
		vs, err := ix.Versions(ctx, "obj")
		if err != nil || ids(vs) != strings.Join(want, ",") {
			t.Fatalf("versions across leaves: %d of them, %v", len(vs), err)
		}
		if l, err := ix.Latest(ctx, "obj"); err != nil || l.ETag != fmt.Sprint(n-1) {
			t.Fatalf("latest: %+v %v", l, err)
		}
		got, more, err := ix.ListLatest(ctx, "", "", 10)
		if err != nil || more || len(got) != 2 || got[0].Entry.ETag != fmt.Sprint(n-1) || got[1].Key != "obj2" {
			t.Fatalf("list: %+v %v %v", got, more, err)
		}
		var names []string
		if err := ix.Scan(ctx, "", "", func(name string, vs []Entry) bool {
			names = append(names, fmt.Sprintf("%s:%d", name, len(vs)))
			return false
		}); err != nil || !reflect.DeepEqual(names, []string{fmt.Sprintf("obj:%d", n), "obj2:1"}) {
			t.Fatalf("scan: %v %v", names, err)
		}
	})
}
