// Package posixtest is a POSIX conformance suite for a mounted file
// system, written from POSIX and Linux semantics for the areas pjdfstest
// covers: chmod, chown, link, mkdir, mkfifo, mknod, open, rename, rmdir,
// symlink, truncate and ftruncate, unlink, utimensat and posix_fallocate —
// errno cases, permission checks (as root and as unprivileged users),
// sticky directories, setgid inheritance, link counts, name and path
// length limits, and timestamps.
//
// Run takes a directory on the file system under test. The package's own
// test runs it on the host's file system, which is what shows each
// expectation is Linux's; Cuttle's mount tests run it on the FUSE mount.
//
// Unprivileged checks switch the calling thread's file-system identity
// (setfsuid, setfsgid, setgroups are per thread on Linux), so they need
// the test to run as root; as another user they are skipped.
package posixtest

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The identities the suite acts as: two users with their own groups, and
// a group both belong to.
const (
	uid1, gid1 = 65531, 65531
	uid2, gid2 = 65532, 65532
	gidShared  = 65533
)

// Run runs every area in a fresh directory under root.
func Run(t *testing.T, root string) {
	areas := []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"names", testNames},
		{"open", testOpen},
		{"mkdir", testMkdir},
		{"rmdir", testRmdir},
		{"unlink", testUnlink},
		{"link", testLink},
		{"symlink", testSymlink},
		{"rename", testRename},
		{"chmod", testChmod},
		{"chown", testChown},
		{"truncate", testTruncate},
		{"utimensat", testUtimensat},
		{"mkfifo", testMkfifo},
		{"mknod", testMknod},
		{"fallocate", testFallocate},
		{"sticky", testSticky},
		{"setgid", testSetgid},
	}
	for _, a := range areas {
		t.Run(a.name, func(t *testing.T) {
			dir := filepath.Join(root, "posixtest-"+a.name)
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			// Other users must be able to work in it.
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			a.fn(t, &env{t: t, dir: dir})
		})
	}
}

// env is one area's directory and the helpers its checks share.
type env struct {
	t   *testing.T
	dir string
}

func (e *env) path(name ...string) string {
	return filepath.Join(append([]string{e.dir}, name...)...)
}

// file creates a regular file with mode (Unix bits: 0o4000 is setuid,
// not os.FileMode's) and returns its path.
func (e *env) file(name string, mode uint32) string {
	e.t.Helper()
	p := e.path(name)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		e.t.Fatal(err)
	}
	e.must(unix.Chmod(p, mode))
	return p
}

func (e *env) mkdir(name string, mode uint32) string {
	e.t.Helper()
	p := e.path(name)
	e.must(os.Mkdir(p, 0o700))
	e.must(unix.Chmod(p, mode))
	return p
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// errno checks that err is the errno want (0: no error).
func (e *env) errno(what string, err error, want unix.Errno) {
	e.t.Helper()
	if want == 0 {
		if err != nil {
			e.t.Errorf("%s: %v, want success", what, err)
		}
		return
	}
	var got unix.Errno
	if !errors.As(err, &got) {
		e.t.Errorf("%s: %v, want %v (%s)", what, err, want, unix.ErrnoName(want))
		return
	}
	if got != want {
		e.t.Errorf("%s: %s (%v), want %s (%v)", what, unix.ErrnoName(got), got, unix.ErrnoName(want), want)
	}
}

func (e *env) lstat(p string) *unix.Stat_t {
	e.t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		e.t.Fatalf("lstat %s: %v", p, err)
	}
	return &st
}

func (e *env) nlink(p string) uint64 { e.t.Helper(); return uint64(e.lstat(p).Nlink) }
func (e *env) mode(p string) uint32  { e.t.Helper(); return e.lstat(p).Mode }

func (e *env) wantNlink(p string, want uint64) {
	e.t.Helper()
	if got := e.nlink(p); got != want {
		e.t.Errorf("%s: nlink %d, want %d", p, got, want)
	}
}

func (e *env) wantPerm(p string, want uint32) {
	e.t.Helper()
	if got := e.mode(p) & 0o7777; got != want {
		e.t.Errorf("%s: mode %#o, want %#o", p, got, want)
	}
}

func (e *env) wantOwner(p string, uid, gid uint32) {
	e.t.Helper()
	st := e.lstat(p)
	if st.Uid != uid || st.Gid != gid {
		e.t.Errorf("%s: owner %d:%d, want %d:%d", p, st.Uid, st.Gid, uid, gid)
	}
}

func ctime(st *unix.Stat_t) time.Time { return time.Unix(st.Ctim.Sec, st.Ctim.Nsec) }
func mtime(st *unix.Stat_t) time.Time { return time.Unix(st.Mtim.Sec, st.Mtim.Nsec) }

// tick returns once the file system's clock has moved on: a timestamp it
// sets from now on is later than every one it set before. It watches a
// scratch file's ctime change rather than sleeping a guessed time.
func (e *env) tick() {
	e.t.Helper()
	p := e.path(".tick")
	if _, err := os.Lstat(p); err != nil {
		e.must(os.WriteFile(p, nil, 0o644))
	}
	before := ctime(e.lstat(p))
	deadline := time.Now().Add(10 * time.Second)
	for mode := os.FileMode(0o600); ; mode ^= 0o044 {
		e.must(os.Chmod(p, mode))
		if ctime(e.lstat(p)).After(before) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatal("the file system's ctime did not advance in 10 s")
		}
		runtime.Gosched()
	}
}

// times records a path's ctime and mtime, to check after an operation
// which of them it changed.
type times struct{ c, m time.Time }

func (e *env) times(p string) times {
	e.t.Helper()
	st := e.lstat(p)
	return times{ctime(st), mtime(st)}
}

// changed checks which timestamps of p moved since before.
func (e *env) changed(what, p string, before times, wantC, wantM bool) {
	e.t.Helper()
	now := e.times(p)
	if got := now.c.After(before.c); got != wantC {
		e.t.Errorf("%s: ctime of %s changed=%v, want %v", what, filepath.Base(p), got, wantC)
	}
	if got := now.m.After(before.m); got != wantM {
		e.t.Errorf("%s: mtime of %s changed=%v, want %v", what, filepath.Base(p), got, wantM)
	}
}

// as runs fn with the file-system identity uid, gid and groups on a
// thread of its own, then restores root's. It skips the test when not
// running as root.
func (e *env) as(uid, gid uint32, groups []uint32, fn func()) {
	e.t.Helper()
	if os.Geteuid() != 0 {
		e.t.Skip("unprivileged checks need root (they switch the thread's fsuid)")
	}
	done := make(chan struct{})
	var failed any
	go func() {
		defer close(done)
		runtime.LockOSThread()
		gs := make([]int, len(groups))
		for i, g := range groups {
			gs[i] = int(g)
		}
		if err := unix.Setgroups(gs); err != nil {
			failed = err
			return
		}
		unix.Setfsgid(int(gid))
		unix.Setfsuid(int(uid))
		defer func() {
			unix.Setfsuid(0)
			unix.Setfsgid(0)
			if err := unix.Setgroups(nil); err == nil {
				// Only a thread back to root's identity goes back to
				// the pool; otherwise it ends with the goroutine.
				runtime.UnlockOSThread()
			}
			failed = recover()
		}()
		fn()
	}()
	<-done
	if failed != nil {
		e.t.Fatalf("as %d:%d: %v", uid, gid, failed)
	}
}

func long(n int) string { return strings.Repeat("x", n) }
