// Package rbd is the block image object class (Ceph's cls_rbd): the
// methods that keep an image's header object and the pool's image
// directory consistent, run on the primary OSD so that each update is
// one atomic read-modify-write of one object, whoever else updates it at
// the same time. The library that uses them is the module's rbd package;
// docs/RBD.md and docs/FORMATS.md ("Block images") describe the objects.
//
// The header object rbd_header.<id> keeps the image in its omap, under
// librbd's format 2 keys: "size", "order", "object_prefix", "features",
// "snap_seq", "stripe_unit", "stripe_count", "data_pool_id",
// "create_timestamp" (fixed-width little-endian values) and one
// "snapshot_<id as %016x>" per snapshot (a versioned Snapshot). The
// directory object rbd_directory maps "name_<name>" to the image's id
// and "id_<id>" to its name. Methods (inputs and outputs are this
// package's versioned encodings):
//
//	rbd.create         Header (no snapshots)   -> nothing; EEXIST if the header exists
//	rbd.get            nothing                 -> Header, with its snapshots
//	rbd.set_size       Size                    -> nothing
//	rbd.snap_add       SnapRequest{ID, Name}   -> nothing; EEXIST name, ESTALE id ≤ snap_seq
//	rbd.snap_remove    SnapRequest{ID}         -> nothing; ENOENT, EBUSY while protected
//	rbd.snap_protect   SnapRequest{ID, Protected} -> nothing; ENOENT
//	rbd.dir_add        DirRequest{Name, ID}    -> nothing; EEXIST if the name or id is taken
//	rbd.dir_remove     DirRequest{Name, ID}    -> nothing; ENOENT, ESTALE if the name is another id's
//	rbd.dir_rename     DirRequest{Name, NewName, ID} -> nothing; ENOENT, EEXIST, ESTALE
//	rbd.object_map_update  ObjectMapUpdate (on rbd_object_map.<id>[.<snap>]) -> nothing; ENOENT, EINVAL, EIO
//	rbd.object_map_resize  Size (objects)      -> nothing; ENOENT, EINVAL
//	rbd.child_attach   ChildRequest            -> nothing; ENOENT, EINVAL unprotected, EEXIST
//	rbd.child_detach   ChildRequest            -> nothing; ENOENT
//	rbd.children       ChildRequest{SnapID}    -> Children (EncodeChildren)
//	rbd.remove_parent  nothing                 -> nothing; ENOENT if not a clone
//	rbd.set_overlap    Size                    -> nothing; ENOENT if not a clone
//
// Clones (parent.go): a clone's header holds "parent" (a ParentSpec), a
// parent's holds "children_<snap id>" per snapshot with clones; snap_protect
// (unprotecting) and snap_remove are EBUSY while the snapshot has children,
// and set_size cuts the overlap of a clone it shrinks.
//
// Listing the directory needs no method: clients read its omap by the
// prefix "name_".
//
// Why a class and not client-side compound ops: adding a snapshot must
// check that its name is free and its id newer than snap_seq, and
// removing one that it is not protected; a directory entry must be added
// only when neither its name nor its id is taken. Omap comparisons
// (CmpOmap) cannot assert that a key is absent, and guarding on the
// header's version would make concurrent clients retry; a method does the
// check and the update in the one transaction of its request.
//
// The package knows objclass's contract and nothing of the OSD or of the
// library; its methods keep no state between calls. Start at Register,
// then header.go and dir.go.
package rbd
