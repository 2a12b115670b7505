package objid

import (
	"fmt"
	"strconv"
)

// Snapshot ids with special meaning, as in Ceph.
const (
	// NoSnap (CEPH_NOSNAP) names an object's head: its current version.
	NoSnap uint64 = 0xfffffffffffffffe
	// Head is another name for NoSnap.
	Head = NoSnap
	// SnapDir (CEPH_SNAPDIR) names the object that records an object's
	// snapshots once its head is deleted.
	SnapDir uint64 = 0xffffffffffffffff
)

// ID identifies one version of one object: Ceph's hobject_t.
//
// Hash is the placement hash of the object's namespace and locator
// (HashLocator); New fills it in. It is a field rather than computed on
// demand because Compare needs it on every call, and because range bounds
// (such as the first object of a PG) are IDs with only Pool and Hash set.
type ID struct {
	Pool      int64
	Namespace string
	// Key is the locator: objects with the same key are placed together.
	// Empty means the name is the locator.
	Key  string
	Name string
	// Snap is the snapshot id, or NoSnap for the head, or SnapDir.
	Snap uint64
	Hash uint32

	max bool
}

// New returns the ID of an object, with its Hash computed.
func New(pool int64, namespace, key, name string, snap uint64) ID {
	id := ID{Pool: pool, Namespace: namespace, Key: key, Name: name, Snap: snap}
	id.Hash = HashLocator(namespace, id.Locator())
	return id
}

// Object returns the ID of the head of a named object without a key.
func Object(pool int64, namespace, name string) ID {
	return New(pool, namespace, "", name, NoSnap)
}

// Max returns the ID that sorts after every other (hobject_t::get_max()),
// used as the open end of a range.
func Max() ID { return ID{max: true} }

// IsMax reports whether id is Max().
func (id ID) IsMax() bool { return id.max }

// Locator returns the string placement hashes: the key, or the name when
// there is no key (hobject_t::get_effective_key).
func (id ID) Locator() string {
	if id.Key != "" {
		return id.Key
	}
	return id.Name
}

// BitwiseKey returns the hash with its bits reversed, the second field of
// the sort order.
func (id ID) BitwiseKey() uint32 {
	if id.max {
		return 0xffffffff
	}
	return ReverseBits(id.Hash)
}

// WithSnap returns a copy of id naming snapshot snap.
func (id ID) WithSnap(snap uint64) ID {
	id.Snap = snap
	return id
}

// String formats id in the style of Ceph's hobject_t:
// "pool:bitwisekey:namespace:key:name:snap", with the snap as "head",
// "snapdir" or hex, and "MAX" for Max().
func (id ID) String() string {
	if id.max {
		return "MAX"
	}
	return fmt.Sprintf("%d:%08x:%s:%s:%s:%s", id.Pool, id.BitwiseKey(), id.Namespace, id.Key, id.Name, SnapString(id.Snap))
}

// SnapString formats a snapshot id as Ceph does: "head", "snapdir", or hex.
func SnapString(snap uint64) string {
	switch snap {
	case NoSnap:
		return "head"
	case SnapDir:
		return "snapdir"
	}
	return strconv.FormatUint(snap, 16)
}
