package posixtest

import (
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testNames: a name of 255 bytes is fine, 256 is ENAMETOOLONG, in every
// call that takes one; a path of PATH_MAX bytes or more is ENAMETOOLONG;
// a component that is a file is ENOTDIR; a missing one ENOENT.
func testNames(t *testing.T, e *env) {
	ok := e.path(long(255))
	e.errno("create 255-byte name", os.WriteFile(ok, nil, 0o644), 0)
	e.errno("stat 255-byte name", unix.Lstat(ok, new(unix.Stat_t)), 0)
	e.errno("unlink 255-byte name", unix.Unlink(ok), 0)

	tooLong := e.path(long(256))
	_, err := unix.Open(tooLong, unix.O_CREAT|unix.O_WRONLY, 0o644)
	e.errno("open 256-byte name", err, unix.ENAMETOOLONG)
	e.errno("mkdir 256-byte name", unix.Mkdir(tooLong, 0o755), unix.ENAMETOOLONG)
	e.errno("symlink 256-byte name", unix.Symlink("x", tooLong), unix.ENAMETOOLONG)
	e.errno("stat 256-byte name", unix.Lstat(tooLong, new(unix.Stat_t)), unix.ENAMETOOLONG)
	f := e.file("f", 0o644)
	e.errno("link to 256-byte name", unix.Link(f, tooLong), unix.ENAMETOOLONG)
	e.errno("rename to 256-byte name", unix.Rename(f, tooLong), unix.ENAMETOOLONG)

	// PATH_MAX (4096) counts the terminating NUL: a path of 4096 bytes
	// is too long whatever its components.
	var p []byte
	for len(p) < unix.PathMax {
		p = append(p, "x/"...)
	}
	e.errno("stat of a 4096-byte path", unix.Lstat(string(p[:unix.PathMax]), new(unix.Stat_t)), unix.ENAMETOOLONG)

	e.errno("file as a directory", unix.Lstat(f+"/x", new(unix.Stat_t)), unix.ENOTDIR)
	e.errno("mkdir under a file", unix.Mkdir(f+"/d", 0o755), unix.ENOTDIR)
	e.errno("missing component", unix.Mkdir(e.path("none", "d"), 0o755), unix.ENOENT)
	e.errno("stat missing", unix.Lstat(e.path("none"), new(unix.Stat_t)), unix.ENOENT)
}

func testOpen(t *testing.T, e *env) {
	p := e.path("f")
	fd, err := unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY, 0o640)
	e.must(err)
	unix.Close(fd)
	e.wantPerm(p, 0o640&^uint32(umask()))
	_, err = unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY, 0o640)
	e.errno("O_EXCL on an existing file", err, unix.EEXIST)
	_, err = unix.Open(e.path("none"), unix.O_RDONLY, 0)
	e.errno("open missing", err, unix.ENOENT)
	d := e.mkdir("d", 0o755)
	_, err = unix.Open(d, unix.O_WRONLY, 0)
	e.errno("open a directory for writing", err, unix.EISDIR)
	_, err = unix.Open(d, unix.O_RDWR, 0)
	e.errno("open a directory O_RDWR", err, unix.EISDIR)
	fd, err = unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	e.errno("open a directory O_DIRECTORY", err, 0)
	if err == nil {
		unix.Close(fd)
	}
	_, err = unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	e.errno("O_DIRECTORY on a file", err, unix.ENOTDIR)
	l := e.path("link")
	e.must(unix.Symlink("f", l))
	_, err = unix.Open(l, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
	e.errno("O_NOFOLLOW on a symlink", err, unix.ELOOP)

	// O_TRUNC empties the file and moves its ctime and mtime.
	e.must(os.WriteFile(p, []byte("data"), 0o640))
	before := e.times(p)
	e.tick()
	fd, err = unix.Open(p, unix.O_WRONLY|unix.O_TRUNC, 0)
	e.must(err)
	unix.Close(fd)
	if st := e.lstat(p); st.Size != 0 {
		e.t.Errorf("O_TRUNC: size %d", st.Size)
	}
	e.changed("O_TRUNC", p, before, true, true)

	// Creating a file moves the directory's ctime and mtime.
	before = e.times(e.dir)
	e.tick()
	e.file("g", 0o644)
	e.changed("create", e.dir, before, true, true)

	// A descriptor from open(O_CREAT, 0) writes and truncates, although
	// the mode gives no one write permission (ceph-fuse fails this).
	fd, err = unix.Open(e.path("zero"), unix.O_CREAT|unix.O_RDWR, 0)
	e.must(err)
	e.errno("ftruncate after open(O_CREAT, 0)", unix.Ftruncate(fd, 100), 0)
	_, err = unix.Write(fd, []byte("x"))
	e.errno("write after open(O_CREAT, 0)", err, 0)
	unix.Close(fd)

	// Permissions: the owner's bits, then the group's, then others'.
	own := e.file("own", 0o600)
	e.must(os.Chown(own, uid1, gid1))
	e.as(uid1, gid1, nil, func() {
		fd, err := unix.Open(own, unix.O_RDWR, 0)
		e.errno("owner opens rw 0600", err, 0)
		if err == nil {
			unix.Close(fd)
		}
	})
	e.as(uid2, gid2, nil, func() {
		_, err := unix.Open(own, unix.O_RDONLY, 0)
		e.errno("other opens 0600 for reading", err, unix.EACCES)
	})
	e.must(os.Chmod(own, 0o640))
	e.as(uid2, gid1, nil, func() {
		fd, err := unix.Open(own, unix.O_RDONLY, 0)
		e.errno("group member reads 0640", err, 0)
		if err == nil {
			unix.Close(fd)
		}
		_, err = unix.Open(own, unix.O_WRONLY, 0)
		e.errno("group member writes 0640", err, unix.EACCES)
	})
	// The owner's bits decide for the owner, even when they give less
	// than the group's.
	e.must(os.Chmod(own, 0o066))
	e.as(uid1, gid1, nil, func() {
		_, err := unix.Open(own, unix.O_RDONLY, 0)
		e.errno("owner with mode 0066", err, unix.EACCES)
	})
	// Creating in a directory needs write and search permission on it.
	ro := e.mkdir("ro", 0o755)
	e.as(uid1, gid1, nil, func() {
		_, err := unix.Open(ro+"/x", unix.O_CREAT|unix.O_WRONLY, 0o644)
		e.errno("create in a directory without write permission", err, unix.EACCES)
	})
	noSearch := e.mkdir("nosearch", 0o766)
	e.file("nosearch/f", 0o644)
	e.as(uid1, gid1, nil, func() {
		_, err := unix.Open(noSearch+"/f", unix.O_RDONLY, 0)
		e.errno("open through a directory without search permission", err, unix.EACCES)
	})
	// A new file belongs to the creator's fsuid and, outside a setgid
	// directory, its fsgid.
	e.as(uid1, gid1, nil, func() {
		fd, err := unix.Open(e.path("byuser"), unix.O_CREAT|unix.O_WRONLY, 0o644)
		e.errno("user creates", err, 0)
		if err == nil {
			unix.Close(fd)
		}
	})
	e.wantOwner(e.path("byuser"), uid1, gid1)
}

func umask() int {
	m := unix.Umask(0)
	unix.Umask(m)
	return m
}

func testMkdir(t *testing.T, e *env) {
	d := e.path("d")
	e.must(unix.Mkdir(d, 0o751))
	e.wantPerm(d, 0o751&^uint32(umask()))
	e.wantNlink(d, 2)
	e.errno("mkdir existing", unix.Mkdir(d, 0o755), unix.EEXIST)
	e.errno("mkdir over a file", unix.Mkdir(e.file("f", 0o644), 0o755), unix.EEXIST)
	parentBefore := e.nlink(e.dir)
	e.must(unix.Mkdir(e.path("d2"), 0o755))
	e.wantNlink(e.dir, parentBefore+1)
	e.must(unix.Mkdir(e.path("d", "sub"), 0o755))
	e.wantNlink(d, 3)

	before := e.times(e.dir)
	e.tick()
	e.must(unix.Mkdir(e.path("d3"), 0o755))
	e.changed("mkdir", e.dir, before, true, true)

	ro := e.mkdir("ro", 0o755)
	e.as(uid1, gid1, nil, func() {
		e.errno("mkdir without write permission", unix.Mkdir(ro+"/x", 0o755), unix.EACCES)
	})
}

func testRmdir(t *testing.T, e *env) {
	d := e.mkdir("d", 0o755)
	e.file("d/f", 0o644)
	e.errno("rmdir non-empty", unix.Rmdir(d), unix.ENOTEMPTY)
	e.errno("rmdir a file", unix.Rmdir(e.path("d", "f")), unix.ENOTDIR)
	e.errno("rmdir missing", unix.Rmdir(e.path("none")), unix.ENOENT)
	e.errno("rmdir .", unix.Rmdir(d+"/."), unix.EINVAL)
	e.must(os.Remove(e.path("d", "f")))
	n := e.nlink(e.dir)
	before := e.times(e.dir)
	e.tick()
	e.errno("rmdir empty", unix.Rmdir(d), 0)
	e.wantNlink(e.dir, n-1)
	e.changed("rmdir", e.dir, before, true, true)

	// An open directory that is removed reads as empty.
	d = e.mkdir("open", 0o755)
	f, err := os.Open(d)
	e.must(err)
	defer f.Close()
	e.must(unix.Rmdir(d))
	// Linux answers ENOENT; an empty listing is as good.
	names, err := f.Readdirnames(-1)
	if len(names) != 0 || (err != nil && !errors.Is(err, unix.ENOENT)) {
		e.t.Errorf("readdir of a removed open directory: %v %v", names, err)
	}
	e.errno("create in a removed open directory", os.WriteFile(d+"/x", nil, 0o644), unix.ENOENT)
}

func testUnlink(t *testing.T, e *env) {
	f := e.file("f", 0o644)
	e.must(unix.Link(f, e.path("g")))
	e.wantNlink(f, 2)
	before := e.times(f)
	dirBefore := e.times(e.dir)
	e.tick()
	e.must(unix.Unlink(e.path("g")))
	e.wantNlink(f, 1)
	e.changed("unlink of a link: the file", f, before, true, false)
	e.changed("unlink: the directory", e.dir, dirBefore, true, true)
	e.errno("unlink missing", unix.Unlink(e.path("g")), unix.ENOENT)
	d := e.mkdir("d", 0o755)
	e.errno("unlink a directory", unix.Unlink(d), unix.EISDIR)

	// A removed file still open reads and writes, and its data is gone
	// with the last close.
	p := e.path("open")
	e.must(os.WriteFile(p, []byte("still here"), 0o644))
	fh, err := os.OpenFile(p, os.O_RDWR, 0)
	e.must(err)
	e.must(os.Remove(p))
	buf := make([]byte, 10)
	if n, err := fh.ReadAt(buf, 0); err != nil || string(buf[:n]) != "still here" {
		e.t.Errorf("read of an unlinked open file: %q %v", buf[:n], err)
	}
	_, err = fh.WriteAt([]byte("X"), 0)
	e.errno("write to an unlinked open file", err, 0)
	var st unix.Stat_t
	e.must(unix.Fstat(int(fh.Fd()), &st))
	if st.Nlink != 0 {
		e.t.Errorf("fstat of an unlinked open file: nlink %d", st.Nlink)
	}
	e.must(fh.Close())

	ro := e.mkdir("ro", 0o755)
	e.file("ro/f", 0o666)
	e.as(uid1, gid1, nil, func() {
		e.errno("unlink without write permission on the directory", unix.Unlink(ro+"/f"), unix.EACCES)
	})
}

func testLink(t *testing.T, e *env) {
	f := e.file("f", 0o644)
	before := e.times(f)
	dirBefore := e.times(e.dir)
	e.tick()
	e.must(unix.Link(f, e.path("g")))
	e.wantNlink(f, 2)
	e.wantNlink(e.path("g"), 2)
	e.changed("link: the file", f, before, true, false)
	e.changed("link: the directory", e.dir, dirBefore, true, true)
	var a, b unix.Stat_t
	e.must(unix.Lstat(f, &a))
	e.must(unix.Lstat(e.path("g"), &b))
	if a.Ino != b.Ino {
		e.t.Errorf("link: inodes %d and %d", a.Ino, b.Ino)
	}
	e.errno("link to an existing name", unix.Link(f, e.path("g")), unix.EEXIST)
	e.errno("link of a missing file", unix.Link(e.path("none"), e.path("h")), unix.ENOENT)
	d := e.mkdir("d", 0o755)
	e.errno("link of a directory", unix.Link(d, e.path("dl")), unix.EPERM)
	// The user's own file: fs.protected_hardlinks refuses links to
	// others' files with EPERM before the directory is checked.
	ro := e.mkdir("ro", 0o755)
	e.must(os.Chown(f, uid1, gid1))
	e.as(uid1, gid1, nil, func() {
		e.errno("link into a directory without write permission", unix.Link(f, ro+"/x"), unix.EACCES)
	})
	// Data written through one name is read through the other.
	e.must(os.WriteFile(f, []byte("shared"), 0o644))
	if got, err := os.ReadFile(e.path("g")); err != nil || string(got) != "shared" {
		e.t.Errorf("read through the link: %q %v", got, err)
	}
}

func testSymlink(t *testing.T, e *env) {
	l := e.path("l")
	e.must(unix.Symlink("target/of/link", l))
	buf := make([]byte, 100)
	n, err := unix.Readlink(l, buf)
	if err != nil || string(buf[:n]) != "target/of/link" {
		e.t.Errorf("readlink: %q %v", buf[:n], err)
	}
	if st := e.lstat(l); st.Mode&unix.S_IFMT != unix.S_IFLNK || st.Size != int64(len("target/of/link")) {
		e.t.Errorf("lstat of a symlink: mode %#o size %d", st.Mode, st.Size)
	}
	e.errno("symlink over an existing name", unix.Symlink("x", l), unix.EEXIST)
	e.errno("stat through a dangling symlink", unix.Stat(l, new(unix.Stat_t)), unix.ENOENT)
	// Targets up to PATH_MAX-1 bytes are stored whole.
	long4095 := long(4095)
	e.errno("symlink with a 4095-byte target", unix.Symlink(long4095, e.path("long")), 0)
	buf = make([]byte, 5000)
	if n, err := unix.Readlink(e.path("long"), buf); err != nil || n != 4095 {
		e.t.Errorf("readlink of a 4095-byte target: %d %v", n, err)
	}
	e.errno("symlink with a 4096-byte target", unix.Symlink(long(4096), e.path("toolong")), unix.ENAMETOOLONG)
	// Loops are ELOOP.
	e.must(unix.Symlink("loop2", e.path("loop1")))
	e.must(unix.Symlink("loop1", e.path("loop2")))
	e.errno("stat through a loop", unix.Stat(e.path("loop1"), new(unix.Stat_t)), unix.ELOOP)
	e.errno("readlink of a file", func() error { _, err := unix.Readlink(e.file("f", 0o644), buf); return err }(), unix.EINVAL)
	// A symlink to a directory is followed in paths.
	e.mkdir("d", 0o755)
	e.file("d/inside", 0o644)
	e.must(unix.Symlink("d", e.path("dl")))
	e.errno("path through a symlink to a directory", unix.Stat(e.path("dl", "inside"), new(unix.Stat_t)), 0)
}

func testRename(t *testing.T, e *env) {
	f := e.file("f", 0o644)
	before := e.times(f)
	e.tick()
	e.must(unix.Rename(f, e.path("g")))
	e.errno("old name gone", unix.Lstat(f, new(unix.Stat_t)), unix.ENOENT)
	e.changed("rename: the file's ctime", e.path("g"), before, true, false)

	// Over an existing file: the target's inode is replaced.
	e.file("h", 0o600)
	e.must(unix.Rename(e.path("g"), e.path("h")))
	e.wantPerm(e.path("h"), 0o644)

	d := e.mkdir("d", 0o755)
	e.errno("file over a directory", unix.Rename(e.path("h"), d), unix.EISDIR)
	e.errno("directory over a file", unix.Rename(d, e.path("h")), unix.ENOTDIR)
	full := e.mkdir("full", 0o755)
	e.file("full/x", 0o644)
	e.errno("directory over a non-empty directory", unix.Rename(d, full), unix.ENOTEMPTY)
	empty := e.mkdir("empty", 0o755)
	e.errno("directory over an empty directory", unix.Rename(d, empty), 0)
	e.errno("directory into itself", unix.Rename(empty, empty+"/sub"), unix.EINVAL)
	e.mkdir("empty/child", 0o755)
	e.errno("directory into its own subtree", unix.Rename(empty, empty+"/child/sub"), unix.EINVAL)
	e.errno("rename missing", unix.Rename(e.path("none"), e.path("x")), unix.ENOENT)

	// Moving a directory across parents moves a link count.
	a, b := e.mkdir("a", 0o755), e.mkdir("b", 0o755)
	e.mkdir("a/moved", 0o755)
	e.wantNlink(a, 3)
	e.must(unix.Rename(a+"/moved", b+"/moved"))
	e.wantNlink(a, 2)
	e.wantNlink(b, 3)
	// ".." of the moved directory is its new parent.
	var up, nb unix.Stat_t
	e.must(unix.Stat(b+"/moved/..", &up))
	e.must(unix.Stat(b, &nb))
	if up.Ino != nb.Ino {
		e.t.Errorf("rename: .. of the moved directory is inode %d, its new parent %d", up.Ino, nb.Ino)
	}

	// Two names of one file: rename is a no-op that leaves both.
	e.file("one", 0o644)
	e.must(unix.Link(e.path("one"), e.path("two")))
	e.must(unix.Rename(e.path("one"), e.path("two")))
	e.wantNlink(e.path("one"), 2)

	// RENAME_NOREPLACE and RENAME_EXCHANGE.
	x, y := e.file("x", 0o600), e.file("y", 0o640)
	e.errno("RENAME_NOREPLACE over a file", unix.Renameat2(unix.AT_FDCWD, x, unix.AT_FDCWD, y, unix.RENAME_NOREPLACE), unix.EEXIST)
	e.errno("RENAME_EXCHANGE", unix.Renameat2(unix.AT_FDCWD, x, unix.AT_FDCWD, y, unix.RENAME_EXCHANGE), 0)
	e.wantPerm(x, 0o640)
	e.wantPerm(y, 0o600)

	// Renaming needs write permission on both directories.
	ro := e.mkdir("ro", 0o755)
	e.file("ro/f", 0o666)
	rw := e.mkdir("rw", 0o777)
	e.as(uid1, gid1, nil, func() {
		e.errno("rename out of a directory without write permission", unix.Rename(ro+"/f", rw+"/f"), unix.EACCES)
	})
}

func testChmod(t *testing.T, e *env) {
	f := e.file("f", 0o644)
	before := e.times(f)
	e.tick()
	e.must(unix.Chmod(f, 0o4751))
	e.wantPerm(f, 0o4751)
	e.changed("chmod", f, before, true, false)
	e.errno("chmod missing", unix.Chmod(e.path("none"), 0o644), unix.ENOENT)

	own := e.file("own", 0o644)
	e.must(os.Chown(own, uid1, gid1))
	e.as(uid1, gid1, nil, func() {
		e.errno("owner chmods", unix.Chmod(own, 0o600), 0)
	})
	e.as(uid2, gid2, nil, func() {
		e.errno("non-owner chmods", unix.Chmod(own, 0o666), unix.EPERM)
	})
	// A non-owner's setgid bit on a file of a group it is not in is
	// dropped silently.
	e.as(uid1, gid1, nil, func() {
		e.errno("owner sets setgid outside the group", unix.Chmod(own, 0o2755), 0)
	})
	e.must(os.Chown(own, uid1, gid2))
	e.as(uid1, gid1, nil, func() {
		e.errno("owner sets setgid outside the group", unix.Chmod(own, 0o2755), 0)
	})
	e.wantPerm(own, 0o755)
	// fchmod through a descriptor, on a file the descriptor could not
	// otherwise write.
	fd, err := unix.Open(own, unix.O_RDONLY, 0)
	e.must(err)
	e.errno("fchmod", unix.Fchmod(fd, 0o600), 0)
	unix.Close(fd)
	e.wantPerm(own, 0o600)
}

func testChown(t *testing.T, e *env) {
	f := e.file("f", 0o644)
	before := e.times(f)
	e.tick()
	e.must(unix.Chown(f, uid1, gid1))
	e.wantOwner(f, uid1, gid1)
	e.changed("chown", f, before, true, false)
	e.must(unix.Chown(f, -1, gid2))
	e.wantOwner(f, uid1, gid2)
	e.errno("chown missing", unix.Chown(e.path("none"), 0, 0), unix.ENOENT)

	// An owner may change the group to one it belongs to, not another,
	// and may not give the file away.
	e.as(uid1, gid1, []uint32{gidShared}, func() {
		e.errno("owner chgrp to its group", unix.Chown(f, -1, gidShared), 0)
		e.errno("owner chgrp to a foreign group", unix.Chown(f, -1, gid2), unix.EPERM)
		e.errno("owner gives the file away", unix.Chown(f, uid2, -1), unix.EPERM)
	})
	e.as(uid2, gid2, nil, func() {
		e.errno("non-owner chown", unix.Chown(f, -1, gid2), unix.EPERM)
	})

	// A change of owner or group clears setuid, and setgid with group
	// execute, on a regular file — for root too (Linux since 2.2.13).
	s := e.file("suid", 0o6755)
	e.must(unix.Chown(s, uid2, gid2))
	e.wantPerm(s, 0o755)
	// Setgid without group execute (mandatory locking's mark) stays.
	m := e.file("sgid", 0o2745)
	e.must(unix.Chown(m, uid2, gid2))
	e.wantPerm(m, 0o2745)
	// Directories keep their bits.
	d := e.mkdir("d", 0o2755)
	e.must(unix.Chown(d, uid2, gid2))
	e.wantPerm(d, 0o2755)

	// lchown changes the symlink, not its target.
	l := e.path("l")
	e.must(unix.Symlink("f", l))
	e.must(unix.Lchown(l, uid2, gid2))
	e.wantOwner(l, uid2, gid2)
	e.wantOwner(f, uid1, gidShared)
}

func testTruncate(t *testing.T, e *env) {
	f := e.file("f", 0o644)
	e.must(os.WriteFile(f, []byte("0123456789"), 0o644))
	before := e.times(f)
	e.tick()
	e.must(unix.Truncate(f, 4))
	e.changed("truncate", f, before, true, true)
	if b, _ := os.ReadFile(f); string(b) != "0123" {
		e.t.Errorf("truncate down: %q", b)
	}
	e.must(unix.Truncate(f, 8))
	if b, _ := os.ReadFile(f); string(b) != "0123\x00\x00\x00\x00" {
		e.t.Errorf("truncate up: %q", b)
	}
	// A truncate to the same size changes nothing on Linux... but
	// POSIX lets it; only the size is checked.
	e.errno("truncate negative", unix.Truncate(f, -1), unix.EINVAL)
	e.errno("truncate a directory", unix.Truncate(e.mkdir("d", 0o755), 0), unix.EISDIR)
	e.errno("truncate missing", unix.Truncate(e.path("none"), 0), unix.ENOENT)
	// Beyond 2^32 and far: sparse.
	e.errno("truncate to 5 GiB", unix.Truncate(f, 5<<30), 0)
	if st := e.lstat(f); st.Size != 5<<30 {
		e.t.Errorf("truncate to 5 GiB: size %d", st.Size)
	}
	e.must(unix.Truncate(f, 0))

	fd, err := unix.Open(f, unix.O_RDONLY, 0)
	e.must(err)
	e.errno("ftruncate of a read-only descriptor", unix.Ftruncate(fd, 0), unix.EINVAL)
	unix.Close(fd)

	ro := e.file("ro", 0o644)
	e.as(uid1, gid1, nil, func() {
		e.errno("truncate without write permission", unix.Truncate(ro, 0), unix.EACCES)
	})
}

func testUtimensat(t *testing.T, e *env) {
	f := e.file("f", 0o644)
	set := func(a, m unix.Timespec) error {
		return unix.UtimesNanoAt(unix.AT_FDCWD, f, []unix.Timespec{a, m}, 0)
	}
	check := func(what string, a, m int64) {
		e.t.Helper()
		st := e.lstat(f)
		if st.Atim.Sec != a || st.Mtim.Sec != m {
			e.t.Errorf("%s: atime %d mtime %d, want %d %d", what, st.Atim.Sec, st.Mtim.Sec, a, m)
		}
	}
	e.must(set(unix.Timespec{Sec: 1000, Nsec: 5}, unix.Timespec{Sec: 2000, Nsec: 7}))
	check("set", 1000, 2000)
	if st := e.lstat(f); st.Mtim.Nsec != 7 {
		e.t.Errorf("nanoseconds: %d", st.Mtim.Nsec)
	}
	// Far past 2038 and 2106 (beyond 32 bits, signed and unsigned), and
	// before 1970.
	for _, sec := range []int64{1 << 31, 1<<32 + 5, 10000000000, -1000} {
		e.errno("utimensat", set(unix.Timespec{Sec: sec}, unix.Timespec{Sec: sec}), 0)
		check("set far", sec, sec)
	}
	// UTIME_OMIT leaves one alone; UTIME_NOW sets now.
	e.must(set(unix.Timespec{Sec: 3000}, unix.Timespec{Sec: 4000}))
	e.must(set(unix.Timespec{Nsec: unix.UTIME_OMIT}, unix.Timespec{Sec: 5000}))
	check("UTIME_OMIT", 3000, 5000)
	start := time.Now().Add(-time.Minute).Unix()
	e.must(set(unix.Timespec{Nsec: unix.UTIME_NOW}, unix.Timespec{Nsec: unix.UTIME_OMIT}))
	if st := e.lstat(f); st.Atim.Sec < start || st.Mtim.Sec != 5000 {
		e.t.Errorf("UTIME_NOW: atime %d mtime %d", st.Atim.Sec, st.Mtim.Sec)
	}
	before := e.times(f)
	e.tick()
	e.must(set(unix.Timespec{Sec: 1}, unix.Timespec{Sec: 1}))
	if now := e.times(f); !now.c.After(before.c) {
		e.t.Error("utimensat did not move ctime")
	}

	// Explicit times need ownership; now needs ownership or write
	// permission.
	w := e.file("w", 0o666)
	e.as(uid1, gid1, nil, func() {
		e.errno("non-owner sets explicit times", unix.UtimesNanoAt(unix.AT_FDCWD, w,
			[]unix.Timespec{{Sec: 1}, {Sec: 1}}, 0), unix.EPERM)
		e.errno("non-owner with write permission sets now", unix.UtimesNanoAt(unix.AT_FDCWD, w,
			[]unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}, 0), 0)
	})
	r := e.file("r", 0o644)
	e.as(uid1, gid1, nil, func() {
		e.errno("non-owner without write permission sets now", unix.UtimesNanoAt(unix.AT_FDCWD, r,
			[]unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}, 0), unix.EACCES)
	})
}

func testMkfifo(t *testing.T, e *env) {
	p := e.path("fifo")
	e.must(unix.Mkfifo(p, 0o640))
	if st := e.lstat(p); st.Mode&unix.S_IFMT != unix.S_IFIFO {
		e.t.Errorf("mkfifo: mode %#o", st.Mode)
	}
	e.wantPerm(p, 0o640&^uint32(umask()))
	e.errno("mkfifo existing", unix.Mkfifo(p, 0o640), unix.EEXIST)
	// Opening a FIFO for writing without a reader, non-blocking: ENXIO.
	_, err := unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK, 0)
	e.errno("FIFO write-open without a reader", err, unix.ENXIO)
	// Opening needs the FIFO's permissions like a file's.
	e.must(unix.Chmod(p, 0o600))
	e.as(uid1, gid1, nil, func() {
		_, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK, 0)
		e.errno("FIFO open without permission", err, unix.EACCES)
	})
	// Data passes through the FIFO.
	rfd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	e.must(err)
	defer unix.Close(rfd)
	wfd, err := unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK, 0)
	e.must(err)
	defer unix.Close(wfd)
	_, err = unix.Write(wfd, []byte("through"))
	e.must(err)
	buf := make([]byte, 16)
	if n, err := unix.Read(rfd, buf); err != nil || string(buf[:n]) != "through" {
		e.t.Errorf("FIFO read: %q %v", buf[:n], err)
	}
}

func testMknod(t *testing.T, e *env) {
	p := e.path("node")
	e.must(unix.Mknod(p, unix.S_IFREG|0o644, 0))
	if st := e.lstat(p); st.Mode&unix.S_IFMT != unix.S_IFREG {
		e.t.Errorf("mknod S_IFREG: mode %#o", st.Mode)
	}
	e.errno("mknod existing", unix.Mknod(p, unix.S_IFREG|0o644, 0), unix.EEXIST)
	e.must(unix.Mknod(e.path("fifo"), unix.S_IFIFO|0o644, 0))
	if os.Geteuid() == 0 {
		dev := int(unix.Mkdev(1, 3))
		err := unix.Mknod(e.path("chr"), unix.S_IFCHR|0o644, dev)
		if err == nil {
			if st := e.lstat(e.path("chr")); st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != uint64(dev) {
				e.t.Errorf("mknod S_IFCHR: mode %#o rdev %#x", st.Mode, st.Rdev)
			}
		} else if err != unix.EPERM { // a nodev mount refuses devices
			e.t.Errorf("mknod S_IFCHR as root: %v", err)
		}
	}
	e.as(uid1, gid1, nil, func() {
		e.errno("mknod of a device unprivileged", unix.Mknod(e.path("chr2"), unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))), unix.EPERM)
	})
}

func testFallocate(t *testing.T, e *env) {
	f := e.file("f", 0o644)
	fd, err := unix.Open(f, unix.O_RDWR, 0)
	e.must(err)
	defer unix.Close(fd)
	e.errno("posix_fallocate grows", unix.Fallocate(fd, 0, 0, 1<<20), 0)
	if st := e.lstat(f); st.Size != 1<<20 {
		e.t.Errorf("fallocate: size %d", st.Size)
	}
	e.errno("fallocate with a negative length", unix.Fallocate(fd, 0, 0, -1), unix.EINVAL)
	rfd, err := unix.Open(f, unix.O_RDONLY, 0)
	e.must(err)
	defer unix.Close(rfd)
	e.errno("fallocate on a read-only descriptor", unix.Fallocate(rfd, 0, 0, 10), unix.EBADF)
	b := make([]byte, 16)
	if _, err := unix.Pread(fd, b, 1000); err != nil || string(b) != string(make([]byte, 16)) {
		e.t.Errorf("fallocated range reads %q %v", b, err)
	}
}

// testSticky: in a sticky directory only a file's owner, the
// directory's owner or root may remove or rename it.
func testSticky(t *testing.T, e *env) {
	d := e.mkdir("sticky", 0o1777)
	e.must(os.Chown(d, uid2, gid2))
	var mine, theirs string
	e.as(uid1, gid1, nil, func() {
		mine = d + "/mine"
		e.errno("create in a sticky directory", os.WriteFile(mine, nil, 0o666), 0)
	})
	theirs = d + "/theirs"
	e.must(os.WriteFile(theirs, nil, 0o666))
	e.must(os.Chown(theirs, 65534, 65534))
	e.as(uid1, gid1, nil, func() {
		e.errno("unlink another's file in a sticky directory", unix.Unlink(theirs), unix.EPERM)
		e.errno("rename another's file in a sticky directory", unix.Rename(theirs, d+"/moved"), unix.EPERM)
		e.errno("rename over another's file in a sticky directory", unix.Rename(mine, theirs), unix.EPERM)
		e.errno("rename own file in a sticky directory", unix.Rename(mine, d+"/mine2"), 0)
		e.errno("unlink own file in a sticky directory", unix.Unlink(d+"/mine2"), 0)
	})
	e.as(uid2, gid2, nil, func() {
		e.errno("the directory's owner unlinks another's file", unix.Unlink(theirs), 0)
	})
	// The sticky bit on a directory survives chmod by its owner.
	e.wantPerm(d, 0o1777)
}

// testSetgid: a setgid directory gives new entries its group, and new
// directories its setgid bit.
func testSetgid(t *testing.T, e *env) {
	d := e.mkdir("sg", 0o2777)
	e.must(os.Chown(d, 0, gidShared))
	e.must(unix.Chmod(d, 0o2777))
	e.as(uid1, gid1, nil, func() {
		e.errno("create in a setgid directory", os.WriteFile(d+"/f", nil, 0o644), 0)
		e.errno("mkdir in a setgid directory", unix.Mkdir(d+"/sub", 0o755), 0)
	})
	e.wantOwner(d+"/f", uid1, gidShared)
	e.wantOwner(d+"/sub", uid1, gidShared)
	if m := e.mode(d + "/sub"); m&unix.S_ISGID == 0 {
		e.t.Errorf("a directory made in a setgid directory lacks setgid: %#o", m)
	}
	// A file created with setgid by a user outside the group loses it.
	e.as(uid1, gid1, nil, func() {
		fd, err := unix.Open(d+"/g", unix.O_CREAT|unix.O_WRONLY, 0o2755)
		e.errno("create with setgid", err, 0)
		if err == nil {
			unix.Close(fd)
		}
	})
	if m := e.mode(d + "/g"); m&unix.S_ISGID != 0 {
		e.t.Errorf("a file created setgid by a non-member keeps the bit: %#o", m)
	}
}
