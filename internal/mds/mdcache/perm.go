package mdcache

import (
	"slices"
	"syscall"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
)

// Permission checks as POSIX (and Linux) define them: pure functions of
// the caller's credentials and the inodes, table-tested in perm_test.go.

// cred is a request's caller.
type cred struct {
	uid, gid uint32
	groups   []uint32
}

func (c cred) root() bool { return c.uid == 0 }

// inGroup reports whether g is the caller's group or one of its
// supplementary groups.
func (c cred) inGroup(g uint32) bool { return c.gid == g || slices.Contains(c.groups, g) }

// Access bits, as access(2)'s R_OK, W_OK, X_OK.
const (
	permR = 4
	permW = 2
	permX = 1
)

// mayAccess reports whether the caller may access in for want (permR,
// permW, permX bits), POSIX 4.5 (file access permissions): the owner's
// class if it owns the file, else the group's if it is in the file's
// group, else the others'. Root may read and write anything and execute
// (search) a directory or a file with any execute bit.
func mayAccess(c cred, in *mdtypes.Inode, want uint32) bool {
	if c.root() {
		if want&permX == 0 || in.IsDir() {
			return true
		}
		return in.Mode&0o111 != 0
	}
	var bits uint32
	switch {
	case c.uid == in.UID:
		bits = in.Mode >> 6 & 7
	case c.inGroup(in.GID):
		bits = in.Mode >> 3 & 7
	default:
		bits = in.Mode & 7
	}
	return bits&want == want
}

// access returns EACCES unless mayAccess.
func access(c cred, in *mdtypes.Inode, want uint32) error {
	if !mayAccess(c, in, want) {
		return syscall.EACCES
	}
	return nil
}

// mayDelete checks that the caller may remove or rename away victim
// from dir: write and search permission on dir and, if dir is sticky,
// that it owns dir or victim (or is root): Linux's may_delete.
func mayDelete(c cred, dir, victim *mdtypes.Inode) error {
	if err := access(c, dir, permW|permX); err != nil {
		return err
	}
	if dir.Mode&syscall.S_ISVTX != 0 && !c.root() && c.uid != dir.UID && c.uid != victim.UID {
		return syscall.EPERM
	}
	return nil
}

// newMode is a new inode's mode and group in parent: its group is the
// caller's, or the directory's if the directory is setgid (then a new
// directory is setgid too); a non-root caller outside the group it ends
// up in does not keep the setgid bit of a file it creates (Linux's
// inode_init_owner).
func newOwner(c cred, parent *mdtypes.Inode, mode uint32) (uid, gid, outMode uint32) {
	uid, gid, outMode = c.uid, c.gid, mode
	if parent.Mode&syscall.S_ISGID != 0 {
		gid = parent.GID
		if mode&mdtypes.ModeType == mdtypes.ModeDir {
			outMode |= syscall.S_ISGID
		} else if mode&syscall.S_ISGID != 0 && !c.root() && !c.inGroup(gid) {
			outMode &^= syscall.S_ISGID
		}
	}
	return uid, gid, outMode
}

// chmodCheck checks a chmod by the caller and returns the mode to set:
// only the owner or root may change it; a non-root caller outside the
// file's group loses the setgid bit of a non-directory (POSIX chmod).
func chmodCheck(c cred, in *mdtypes.Inode, mode uint32) (uint32, error) {
	if !c.root() && c.uid != in.UID {
		return 0, syscall.EPERM
	}
	mode &= mdtypes.ModePerm
	if !c.root() && !in.IsDir() && mode&syscall.S_ISGID != 0 && !c.inGroup(in.GID) {
		mode &^= syscall.S_ISGID
	}
	return mode, nil
}

// chownCheck checks a chown to uid, gid (each only if set) by the
// caller: root may do anything; the owner may change the group to one
// of its own groups and "change" the owner to itself (POSIX chown with
// _POSIX_CHOWN_RESTRICTED).
func chownCheck(c cred, in *mdtypes.Inode, setUID bool, uid uint32, setGID bool, gid uint32) error {
	if c.root() {
		return nil
	}
	if setUID && uid != in.UID {
		return syscall.EPERM
	}
	if setGID && gid != in.GID && (c.uid != in.UID || !c.inGroup(gid)) {
		return syscall.EPERM
	}
	if (setUID || setGID) && c.uid != in.UID {
		return syscall.EPERM
	}
	return nil
}

// killSuid returns mode without the setuid bit and, when group-execute
// is set, the setgid bit: what a chown (by anyone, of a non-directory),
// a write or a truncate by a non-owner clears (Linux's should_remove_suid:
// root's chown clears them too).
func killSuid(mode uint32) uint32 {
	if mode&mdtypes.ModeType == mdtypes.ModeDir {
		return mode
	}
	mode &^= syscall.S_ISUID
	if mode&0o010 != 0 {
		mode &^= syscall.S_ISGID
	}
	return mode
}

// timesCheck checks a utimes: setting times to now needs ownership or
// write permission; setting them to given values needs ownership (or
// root): POSIX utimensat.
func timesCheck(c cred, in *mdtypes.Inode, explicit bool) error {
	if c.root() || c.uid == in.UID {
		return nil
	}
	if explicit {
		return syscall.EPERM
	}
	return access(c, in, permW)
}
