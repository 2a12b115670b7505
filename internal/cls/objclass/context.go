package objclass

import (
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// Context is a running method's view of the object it runs on: the same
// ops a client sends, applied within the calling request (so they see the
// changes of the request's earlier ops and of the method's own writes,
// and share the request's all-or-nothing transaction). The OSD's op
// executor (internal/osd/ops) implements it; a method is given it wrapped
// by Registry.Call.
type Context interface {
	// Caller is the entity that sent the request ("client.4121").
	Caller() string
	// Now is the request's time, in Unix nanoseconds.
	Now() int64
	// Exists reports whether the object exists (now, within the request).
	Exists() bool
	// Version is the object's current version.
	Version() wire.Version
	// Do runs op on the object. Its failure is an error with an errno
	// (Code), which a method may return as it is or handle; other errors
	// are failures of the store, to be returned as they are.
	Do(op wire.ObjectOp) (wire.ObjectOpResult, error)
}

// Error is an op's or a method's failure as an errno: it fails the
// request with Errno as its result. The OSD's ops return it too, so a
// method tells their failures apart with Code.
type Error struct {
	Errno int32
	Msg   string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (errno %d)", e.Msg, e.Errno) }

// Errorf returns an error that fails the request with errno code.
func Errorf(code int32, format string, args ...any) error {
	return &Error{Errno: code, Msg: fmt.Sprintf(format, args...)}
}

// Code returns the errno err carries, and ok false for errors that are
// not op results (store failures).
func Code(err error) (code int32, ok bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Errno, true
	}
	return 0, false
}

// The helpers below run the common ops through c.Do, for methods that
// would rather not build wire.ObjectOps.

// GetXattr returns the object's attribute name, and ok false if it is not
// set (the object must exist: ENOENT otherwise).
func GetXattr(c Context, name string) (value []byte, ok bool, err error) {
	out, err := c.Do(wire.ObjectOp{Code: wire.OpGetXattr, Name: name})
	if code, _ := Code(err); code == wire.ENODATA {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	return out.Data, true, nil
}

// SetXattr sets the object's attribute name, creating the object.
func SetXattr(c Context, name string, value []byte) error {
	_, err := c.Do(wire.ObjectOp{Code: wire.OpSetXattr, Name: name, Data: value})
	return err
}

// RmXattr removes the object's attribute name; it is not an error if it
// is not set.
func RmXattr(c Context, name string) error {
	_, err := c.Do(wire.ObjectOp{Code: wire.OpRmXattr, Name: name})
	if code, _ := Code(err); code == wire.ENODATA {
		return nil
	}
	return err
}

// Read returns length bytes at offset of the object (0: to its end).
func Read(c Context, offset, length uint64) ([]byte, error) {
	out, err := c.Do(wire.ObjectOp{Code: wire.OpRead, Offset: offset, Length: length})
	return out.Data, err
}

// Write writes data at offset of the object, creating it.
func Write(c Context, offset uint64, data []byte) error {
	_, err := c.Do(wire.ObjectOp{Code: wire.OpWrite, Offset: offset, Data: data})
	return err
}

// Stat returns the object's size and modification time (Unix
// nanoseconds).
func Stat(c Context) (size uint64, mtime int64, err error) {
	out, err := c.Do(wire.ObjectOp{Code: wire.OpStat})
	return out.Size, out.Mtime, err
}

// OmapGet returns the values of those of keys the object's omap holds.
func OmapGet(c Context, keys ...string) (map[string][]byte, error) {
	out, err := c.Do(wire.ObjectOp{Code: wire.OpOmapGetByKeys, Keys: keys})
	if err != nil {
		return nil, err
	}
	vals := make(map[string][]byte, len(out.Pairs))
	for _, kv := range out.Pairs {
		vals[kv.Key] = kv.Value
	}
	return vals, nil
}

// OmapList returns up to limit entries of the object's omap after key
// after with prefix prefix (limit 0: the OSD's default), and whether more
// follow.
func OmapList(c Context, after, prefix string, limit uint64) (entries []wire.KV, more bool, err error) {
	out, err := c.Do(wire.ObjectOp{Code: wire.OpOmapGetVals, Name: after, Prefix: prefix, Length: limit})
	return out.Pairs, out.More, err
}

// OmapSet sets entries of the object's omap, creating the object.
func OmapSet(c Context, entries ...wire.KV) error {
	_, err := c.Do(wire.ObjectOp{Code: wire.OpOmapSet, Pairs: entries})
	return err
}

// OmapRm removes keys from the object's omap; missing keys are not an
// error.
func OmapRm(c Context, keys ...string) error {
	_, err := c.Do(wire.ObjectOp{Code: wire.OpOmapRmKeys, Keys: keys})
	return err
}
