package ops

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Watches are persisted with their object, one internal attribute each
// (WatchAttrPrefix, the client entity, a dot, the cookie in hex), so
// that they travel with the object through replication and recovery and
// a new primary finds them (Watchers). The OSD's watch state (package
// watch) acts on them; here they are only written and read.

// WatchAttrPrefix starts the attribute of each watch on an object; user
// attributes (UserAttrPrefix) never do.
const WatchAttrPrefix = "w."

// watchAttr is the attribute of watch id.
func watchAttr(id wire.WatcherID) string {
	return fmt.Sprintf("%s%s.%x", WatchAttrPrefix, id.Client, id.Cookie)
}

// WatcherOf returns whose watch an OpWatch names: the caller's, or, when
// the caller is an OSD (a primary removing a watch that expired), the
// client in op.Name.
func WatcherOf(caller string, op *wire.ObjectOp) wire.WatcherID {
	if op.Name != "" && strings.HasPrefix(caller, "osd.") {
		return wire.WatcherID{Client: op.Name, Cookie: op.Version}
	}
	return wire.WatcherID{Client: caller, Cookie: op.Version}
}

// watch registers, re-registers or ends a watch: ENOENT on an object
// that does not exist; ENOTCONN for a reconnect the object has no record
// of (the watch expired: the client must watch again and re-read).
func (x *executor) watch(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	if err := x.mustExist(); err != nil {
		return wire.ObjectOpResult{}, err
	}
	id := WatcherOf(x.env.Caller, op)
	if id.Client == "" {
		return wire.ObjectOpResult{}, fail(wire.EINVAL, "watch: no client named")
	}
	if op.Length > 1<<31 {
		return wire.ObjectOpResult{}, fail(wire.EINVAL, "watch timeout of %d s", op.Length)
	}
	attr := watchAttr(id)
	switch op.Flags {
	case wire.WatchRegister, wire.WatchReconnect:
		if op.Flags == wire.WatchReconnect {
			set, err := x.hasAttr(attr)
			switch {
			case err == nil && !set:
				return wire.ObjectOpResult{}, fail(wire.ENOTCONN, "watch %v is gone", id)
			case err != nil:
				return wire.ObjectOpResult{}, err
			}
		}
		x.txn().SetAttr(x.env.Collection, x.env.Object, attr, wire.WatchInfo{WatcherID: id, TimeoutSec: uint32(op.Length)}.Encode())
	case wire.WatchUnregister:
		x.txn().RmAttr(x.env.Collection, x.env.Object, attr)
	default:
		return wire.ObjectOpResult{}, fail(wire.EINVAL, "watch: unknown sub-operation %d", op.Flags)
	}
	x.infoDirty = true
	return wire.ObjectOpResult{}, nil
}

// hasAttr reports whether the object has attribute name (as earlier ops
// of the request left it).
func (x *executor) hasAttr(name string) (bool, error) {
	if x.pending() {
		_, set, err := x.pendingAttr(name)
		return set, err
	}
	_, err := x.env.Store.GetAttr(x.ctx, x.env.Collection, x.env.Object, name)
	switch {
	case errors.Is(err, objectstore.ErrNoAttr):
		return false, nil
	case err != nil:
		return false, x.storeErr("watch", err)
	}
	return true, nil
}

// Watchers returns the watches persisted in an object's attributes.
// Records that do not decode are skipped: a watch is
// soft state, and its client reconnects or watches again.
func Watchers(attrs map[string][]byte) []wire.WatchInfo {
	var out []wire.WatchInfo
	for k, v := range attrs {
		if !strings.HasPrefix(k, WatchAttrPrefix) {
			continue
		}
		if w, err := wire.DecodeWatchInfo(v); err == nil {
			out = append(out, w)
		}
	}
	return out
}
