// Package superblock owns the OSD's superblock: the object of the
// store's meta collection that names the OSD the store belongs to, so
// that a store is never served under another OSD's id (a mix-up of data
// directories would otherwise serve one OSD's objects as another's).
package superblock

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

var superblockObject = objid.New(-1, "", "", "osd_superblock", objid.NoSnap)

const superblockIDAttr = "osd_id"

// Mkfs prepares store for OSD id: the meta collection and the superblock.
// It fails if the store already belongs to an OSD.
func Mkfs(ctx context.Context, store objectstore.Store, id int32) error {
	if exists, err := store.CollectionExists(ctx, objectstore.MetaCollection); err != nil {
		return fmt.Errorf("osd mkfs: %w", err)
	} else if exists {
		if _, err := store.GetAttr(ctx, objectstore.MetaCollection, superblockObject, superblockIDAttr); err == nil {
			return fmt.Errorf("osd mkfs: the store already belongs to an OSD")
		}
	} else {
		var t objectstore.Transaction
		t.CreateCollection(objectstore.MetaCollection)
		if err := objectstore.Apply(ctx, store, &t); err != nil {
			return fmt.Errorf("osd mkfs: %w", err)
		}
	}
	var t objectstore.Transaction
	t.SetAttr(objectstore.MetaCollection, superblockObject, superblockIDAttr, binary.LittleEndian.AppendUint32(nil, uint32(id)))
	if err := objectstore.Apply(ctx, store, &t); err != nil {
		return fmt.Errorf("osd mkfs: %w", err)
	}
	return nil
}

// Check fails unless store was made for OSD id by Mkfs.
func Check(ctx context.Context, store objectstore.Store, id int32) error {
	b, err := store.GetAttr(ctx, objectstore.MetaCollection, superblockObject, superblockIDAttr)
	switch {
	case errors.Is(err, objectstore.ErrCollectionNotFound), errors.Is(err, objectstore.ErrNotFound), errors.Is(err, objectstore.ErrNoAttr):
		return fmt.Errorf("osd.%d: the store has no OSD superblock (run osd mkfs first)", id)
	case err != nil:
		return fmt.Errorf("osd.%d: superblock: %w", id, err)
	case len(b) != 4:
		return fmt.Errorf("osd.%d: superblock: %w: id of %d bytes", id, objectstore.ErrCorrupt, len(b))
	}
	if got := int32(binary.LittleEndian.Uint32(b)); got != id {
		return fmt.Errorf("osd.%d: the store belongs to osd.%d", id, got)
	}
	return nil
}
