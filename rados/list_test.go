package rados_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/rados"
)

// Listing walks every PG of the pool, resumes from a stored cursor, and
// filters by namespace unless asked for all.
func TestListAcrossPGs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, clusterConfig{pgNum: 8})
		_, io := c.connect(t)
		ctx := t.Context()
		var want, wantNS []string
		for i := range 30 {
			name := fmt.Sprintf("obj-%02d", i)
			if err := io.WriteFull(ctx, name, nil); err != nil {
				t.Fatal(err)
			}
			want = append(want, name)
		}
		io.SetNamespace("ns1")
		for i := range 5 {
			name := fmt.Sprintf("ns-%d", i)
			if err := io.WriteFull(ctx, name, nil); err != nil {
				t.Fatal(err)
			}
			wantNS = append(wantNS, name)
		}
		io.SetNamespace("")

		var got []string
		var cur rados.Cursor
		pgs := map[uint32]bool{}
		for calls := 0; !cur.Done(); calls++ {
			if calls > 50 {
				t.Fatal("listing does not end")
			}
			batch, next, err := io.ListObjects(ctx, cur, 7)
			if err != nil {
				t.Fatal(err)
			}
			if len(batch) > 7 {
				t.Fatalf("batch of %d", len(batch))
			}
			for _, e := range batch {
				got = append(got, e.Name)
			}
			// Store and restore the cursor, as a client resuming would.
			b, err := next.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			cur = rados.Cursor{}
			if err := cur.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range c.received() {
			if r.op.Ops[0].Code.String() == "list-objects" {
				pgs[r.op.PG.Seed] = true
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("listed %v", got)
		}
		if len(pgs) != 8 {
			t.Fatalf("listed PGs %v", pgs)
		}

		io.SetNamespace("ns1")
		got = nil
		for e, err := range io.Objects(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if e.Namespace != "ns1" {
				t.Fatalf("entry %+v", e)
			}
			got = append(got, e.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, wantNS) {
			t.Fatalf("listed ns1: %v", got)
		}
		io.SetNamespace(rados.AllNamespaces)
		n := 0
		for _, err := range io.Objects(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 35 {
			t.Fatalf("all namespaces: %d objects", n)
		}
		if err := io.WriteFull(ctx, "x", nil); err == nil {
			t.Fatal("write in AllNamespaces succeeded")
		}
	})
}

func FuzzCursor(f *testing.F) {
	var zero rados.Cursor
	b, _ := zero.MarshalBinary()
	f.Add(b)
	f.Add([]byte{1, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var c rados.Cursor
		if err := c.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var d rados.Cursor
		if err := d.UnmarshalBinary(again); err != nil || d != c {
			t.Fatalf("round trip: %v, %v != %v", err, d, c)
		}
	})
}
