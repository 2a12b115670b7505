package kv_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
	"github.com/cuttlestore/cuttle/kv"
)

// Stat counts leaves and entries; Check finds nothing wrong with a
// healthy store, and names the leaf whose count, bounds or entries are
// wrong.
func TestStatAndCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		ctx := context.Background()
		io := ioctx(t, c, "client.kv")
		s, err := kv.Create(ctx, io, "store", kv.Options{K: 3}, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			if err := s.Put(ctx, fmt.Sprintf("k%02d", i), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		st, err := s.Stat(ctx)
		if err != nil || st.Entries != 50 || st.Leaves < 8 || len(st.Counts) != st.Leaves || st.Depth != 2 || st.K != 3 || st.Pending != 0 {
			t.Fatalf("stat %+v %v", st, err)
		}
		problems, n, err := s.Check(ctx)
		if err != nil || len(problems) != 0 || n != 50 {
			t.Fatalf("check of a healthy store: %v %d %v", problems, n, err)
		}
		// A leaf that miscounts, and one holding a key outside its range.
		leaves := s.Leaves()
		attr, _ := io.GetXattr(ctx, leaves[1].Leaf, clskv.LeafAttr)
		l, _ := clskv.DecodeLeaf(attr)
		l.Count++
		if err := io.SetXattr(ctx, leaves[1].Leaf, clskv.LeafAttr, l.Encode()); err != nil {
			t.Fatal(err)
		}
		if err := io.SetOmap(ctx, leaves[2].Leaf, map[string][]byte{"a": []byte("x")}); err != nil {
			t.Fatal(err)
		}
		problems, _, err = s.Check(ctx)
		if err != nil || len(problems) != 3 {
			t.Fatalf("check: %v %v", problems, err)
		}
		if problems[0].Object != leaves[1].Leaf || !strings.Contains(problems[0].What, "counts") ||
			problems[1].Object != leaves[2].Leaf || problems[2].Object != leaves[2].Leaf {
			t.Fatalf("check: %+v", problems)
		}
	})
}
