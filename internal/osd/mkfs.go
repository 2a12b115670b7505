package osd

import (
	"context"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/superblock"
)

// Mkfs prepares store for OSD id: the meta collection and the superblock
// (package superblock). It fails if the store already belongs to an OSD.
func Mkfs(ctx context.Context, store objectstore.Store, id int32) error {
	return superblock.Mkfs(ctx, store, id)
}
