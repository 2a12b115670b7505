package superblock

import (
	"context"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
)

func TestSuperblock(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(memstore.Options{})
	defer s.Close()
	if err := Check(ctx, s, 3); err == nil || !strings.Contains(err.Error(), "osd mkfs") {
		t.Fatalf("empty store: %v", err)
	}
	if err := Mkfs(ctx, s, 3); err != nil {
		t.Fatal(err)
	}
	if err := Check(ctx, s, 3); err != nil {
		t.Fatal(err)
	}
	if err := Check(ctx, s, 4); err == nil || !strings.Contains(err.Error(), "belongs to osd.3") {
		t.Fatalf("another id: %v", err)
	}
	if err := Mkfs(ctx, s, 4); err == nil {
		t.Fatal("mkfs of a store that belongs to an OSD")
	}
}
