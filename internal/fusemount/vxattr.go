package fusemount

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cuttlestore/cuttle/fsclient"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Virtual extended attributes: names under "cuttle." are not stored on
// the MDS but answered by the mount, as CephFS answers "ceph.*" names.
// They offer the POSIX HPC I/O extensions on a mount, where a program has
// no library call to make (docs/FSCLIENT.md, "On the mount"):
//
//	cuttle.statlite        get: JSON of size, mtime, ctime, each said exact or not
//	cuttle.statlite.size   get: the size, decimal, possibly stale
//	cuttle.statlite.mtime  get: the mtime as seconds.nanoseconds, possibly stale
//	cuttle.lazyio          get "0"/"1"; set "1" makes every later open of the
//	                       file through this mount an O_LAZY one, "0" stops it
//	cuttle.lazyio.propagate    set (any value): lazyio_propagate on every open
//	                           of the file through this mount
//	cuttle.lazyio.synchronize  set (any value): lazyio_synchronize likewise
//
// Listxattr does not list them (as with ceph.*): copying tools would
// otherwise try to copy them.
const vxattrPrefix = "cuttle."

// vxattr is a parsed virtual xattr name.
type vxattr int

const (
	vxNone    vxattr = iota // not a virtual name: stored on the MDS
	vxUnknown               // under "cuttle." but no name the mount knows
	vxStatlite
	vxStatliteSize
	vxStatliteMtime
	vxLazyIO
	vxPropagate
	vxSynchronize
)

var vxattrNames = map[string]vxattr{
	"cuttle.statlite":           vxStatlite,
	"cuttle.statlite.size":      vxStatliteSize,
	"cuttle.statlite.mtime":     vxStatliteMtime,
	"cuttle.lazyio":             vxLazyIO,
	"cuttle.lazyio.propagate":   vxPropagate,
	"cuttle.lazyio.synchronize": vxSynchronize,
}

// parseVxattr says which virtual xattr name is, vxNone for a name stored
// on the MDS.
func parseVxattr(name string) vxattr {
	if !strings.HasPrefix(name, vxattrPrefix) {
		return vxNone
	}
	if v, ok := vxattrNames[name]; ok {
		return v
	}
	return vxUnknown
}

// readable: a getxattr of v answers; the others are actions.
func (v vxattr) readable() bool {
	switch v {
	case vxStatlite, vxStatliteSize, vxStatliteMtime, vxLazyIO:
		return true
	}
	return false
}

// parseBool reads a cuttle.lazyio value: "1"/"0", "on"/"off",
// "true"/"false", a trailing newline allowed (echo's).
func parseBool(v []byte) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(string(v))) {
	case "1", "on", "true":
		return true, nil
	case "0", "off", "false":
		return false, nil
	}
	return false, fmt.Errorf("cuttle.lazyio: value %q is not 1 or 0: %w", v, syscall.EINVAL)
}

// statliteJSON is the value of cuttle.statlite.
type statliteJSON struct {
	Ino        uint64 `json:"ino"`
	Size       uint64 `json:"size"`
	Mtime      string `json:"mtime"` // RFC 3339, nanoseconds
	Ctime      string `json:"ctime"`
	SizeExact  bool   `json:"size_exact"`
	MtimeExact bool   `json:"mtime_exact"`
	CtimeExact bool   `json:"ctime_exact"`
}

// fmtTime is cuttle.statlite.mtime's form: seconds.nanoseconds.
func fmtTime(t time.Time) string {
	return fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond())
}

func marshalStatlite(s statliteJSON) []byte {
	b, _ := json.Marshal(s) // plain fields: cannot fail
	return b
}

// openFlags are the client's open flags for a kernel open of ino:
// O_LAZY if cuttle.lazyio is set on it (and never from the kernel).
func (fs *ClientFS) openFlags(ino uint64, kernel uint32) int {
	flags := int(kernel) &^ fsclient.O_LAZY
	fs.mu.Lock()
	if fs.lazy[ino] {
		flags |= fsclient.O_LAZY
	}
	fs.mu.Unlock()
	return flags
}

// opens returns this mount's open files of ino.
func (fs *ClientFS) opens(ino uint64) []*fsclient.File {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []*fsclient.File
	for _, f := range fs.files {
		if f.Ino() == ino {
			out = append(out, f)
		}
	}
	return out
}

func (fs *ClientFS) getVxattr(ctx context.Context, ino uint64, v vxattr) ([]byte, error) {
	if !v.readable() {
		return nil, syscall.ENODATA
	}
	if v == vxLazyIO {
		fs.mu.Lock()
		on := fs.lazy[ino]
		fs.mu.Unlock()
		if on {
			return []byte("1"), nil
		}
		return []byte("0"), nil
	}
	// Nothing must be exact: the MDS answers from what it holds,
	// without revoking writers' caps.
	st, err := fs.in.Statlite(ctx, ino, 0)
	if err != nil {
		return nil, err
	}
	switch v {
	case vxStatliteSize:
		return []byte(strconv.FormatUint(st.Size, 10)), nil
	case vxStatliteMtime:
		return []byte(fmtTime(st.Mtime)), nil
	}
	return marshalStatlite(statliteJSON{Ino: st.Ino, Size: st.Size,
		Mtime: st.Mtime.UTC().Format(time.RFC3339Nano), Ctime: st.Ctime.UTC().Format(time.RFC3339Nano),
		SizeExact: st.Approx&wire.AttrSize == 0, MtimeExact: st.Approx&wire.AttrMtime == 0,
		CtimeExact: st.Approx&wire.AttrCtime == 0}), nil
}

func (fs *ClientFS) setVxattr(ctx context.Context, ino uint64, v vxattr, value []byte) error {
	switch v {
	case vxLazyIO:
		on, err := parseBool(value)
		if err != nil {
			return err
		}
		fs.mu.Lock()
		if on {
			fs.lazy[ino] = true
		} else {
			delete(fs.lazy, ino)
		}
		fs.mu.Unlock()
		// Opens made before keep what they were opened with: switching
		// them here would change their caps while the kernel holds the
		// inode for this setxattr, and the revocation that may take
		// waits on the kernel (see docs/FSCLIENT.md, "On the mount").
		return nil
	case vxPropagate, vxSynchronize:
		for _, f := range fs.opens(ino) {
			var err error
			if v == vxPropagate {
				err = f.Propagate(ctx)
			} else {
				err = f.Synchronize(ctx)
			}
			if err != nil {
				return err
			}
		}
		if v == vxSynchronize {
			// The kernel's cached size and pages go too, so reads
			// through new opens see what others propagated. An inode
			// notification takes no inode lock (only a name's takes its
			// directory's), so it may be sent from within this
			// request on the same inode.
			fs.mu.Lock()
			inval := fs.invalData
			fs.mu.Unlock()
			if inval != nil {
				inval(ino, 0)
			}
		}
		return nil
	case vxUnknown:
		return syscall.EOPNOTSUPP
	}
	return fmt.Errorf("a read-only virtual attribute: %w", syscall.EPERM)
}
