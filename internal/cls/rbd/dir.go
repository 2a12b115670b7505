package rbd

import (
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// The directory's omap keys: NamePrefix + name holds the image's id,
// idPrefix + id its name.
const (
	NamePrefix = "name_"
	idPrefix   = "id_"
)

// dirRequest decodes a directory method's input and reads the entries of
// its names and id.
func dirRequest(c objclass.Context, in []byte) (DirRequest, map[string][]byte, error) {
	r, err := DecodeDirRequest(in)
	if err != nil {
		return r, nil, objclass.Errorf(wire.EINVAL, "%v", err)
	}
	if r.Name == "" || r.ID == "" {
		return r, nil, objclass.Errorf(wire.EINVAL, "a directory entry needs a name and an id")
	}
	if !c.Exists() {
		return r, map[string][]byte{}, nil
	}
	keys := []string{NamePrefix + r.Name, idPrefix + r.ID}
	if r.NewName != "" {
		keys = append(keys, NamePrefix+r.NewName)
	}
	got, err := objclass.OmapGet(c, keys...)
	return r, got, err
}

func dirAdd(c objclass.Context, in []byte) ([]byte, error) {
	r, got, err := dirRequest(c, in)
	if err != nil {
		return nil, err
	}
	if _, ok := got[NamePrefix+r.Name]; ok {
		return nil, objclass.Errorf(wire.EEXIST, "an image named %q exists", r.Name)
	}
	if _, ok := got[idPrefix+r.ID]; ok {
		return nil, objclass.Errorf(wire.EEXIST, "an image with id %q exists", r.ID)
	}
	return nil, objclass.OmapSet(c, wire.KV{Key: idPrefix + r.ID, Value: []byte(r.Name)}, wire.KV{Key: NamePrefix + r.Name, Value: []byte(r.ID)})
}

// checkEntry fails unless the directory maps r.Name to r.ID.
func checkEntry(r DirRequest, got map[string][]byte) error {
	id, ok := got[NamePrefix+r.Name]
	switch {
	case !ok:
		return objclass.Errorf(wire.ENOENT, "no image named %q", r.Name)
	case string(id) != r.ID:
		return objclass.Errorf(wire.ESTALE, "image %q has id %q, not %q", r.Name, id, r.ID)
	}
	return nil
}

func dirRemove(c objclass.Context, in []byte) ([]byte, error) {
	r, got, err := dirRequest(c, in)
	if err != nil {
		return nil, err
	}
	if err := checkEntry(r, got); err != nil {
		return nil, err
	}
	return nil, objclass.OmapRm(c, NamePrefix+r.Name, idPrefix+r.ID)
}

func dirRename(c objclass.Context, in []byte) ([]byte, error) {
	r, got, err := dirRequest(c, in)
	if err != nil {
		return nil, err
	}
	if err := checkEntry(r, got); err != nil {
		return nil, err
	}
	if r.NewName == "" {
		return nil, objclass.Errorf(wire.EINVAL, "the new name is empty")
	}
	if _, ok := got[NamePrefix+r.NewName]; ok {
		return nil, objclass.Errorf(wire.EEXIST, "an image named %q exists", r.NewName)
	}
	if err := objclass.OmapRm(c, NamePrefix+r.Name); err != nil {
		return nil, err
	}
	return nil, objclass.OmapSet(c, wire.KV{Key: idPrefix + r.ID, Value: []byte(r.NewName)}, wire.KV{Key: NamePrefix + r.NewName, Value: []byte(r.ID)})
}
