package storetest

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
)

func TestGeneratorReplays(t *testing.T) {
	a, b, c := NewGenerator(7), NewGenerator(7), NewGenerator(8)
	differ := false
	for i := range 500 {
		ta, tb, tc := FormatTransaction(a.Next()), FormatTransaction(b.Next()), FormatTransaction(c.Next())
		if ta != tb {
			t.Fatalf("step %d: the same seed gave %q and %q", i, ta, tb)
		}
		differ = differ || ta != tc
	}
	if !differ {
		t.Fatal("seeds 7 and 8 gave the same stream")
	}
}

func TestGeneratorCoversEveryOp(t *testing.T) {
	g := NewGenerator(1)
	seen := map[objectstore.OpCode]int{}
	invalid := 0
	for range 2000 {
		tx := g.Next()
		for _, op := range tx.Ops {
			seen[op.Code]++
		}
		if tx.Validate() != nil {
			invalid++
		}
	}
	for c := objectstore.OpTouch; c <= objectstore.OpSplitCollection; c++ {
		if seen[c] == 0 {
			t.Errorf("no %s in 2000 transactions", c)
		}
	}
	if invalid == 0 || invalid > 400 {
		t.Errorf("%d of 2000 transactions fail Validate; want some, not most", invalid)
	}
}
