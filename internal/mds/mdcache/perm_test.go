package mdcache

import (
	"syscall"
	"testing"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
)

func ino(mode, uid, gid uint32) *mdtypes.Inode {
	return &mdtypes.Inode{Mode: mode, UID: uid, GID: gid}
}

// POSIX.1-2017 section 4.5, file access permissions: one class of bits
// applies, the owner's before the group's before the others'; root
// reads and writes anything and executes what has an execute bit.
func TestMayAccess(t *testing.T) {
	user := cred{uid: 1000, gid: 100, groups: []uint32{50}}
	for _, tc := range []struct {
		name string
		c    cred
		in   *mdtypes.Inode
		want uint32
		ok   bool
	}{
		{"owner read", user, ino(mdtypes.ModeRegular|0o400, 1000, 1), permR, true},
		{"owner class only: group bits don't help", user, ino(mdtypes.ModeRegular|0o070, 1000, 100), permR, false},
		{"group", user, ino(mdtypes.ModeRegular|0o040, 1, 100), permR, true},
		{"supplementary group", user, ino(mdtypes.ModeRegular|0o020, 1, 50), permW, true},
		{"group class only: other bits don't help", user, ino(mdtypes.ModeRegular|0o007, 1, 100), permR, false},
		{"others", user, ino(mdtypes.ModeRegular|0o004, 1, 1), permR, true},
		{"others no write", user, ino(mdtypes.ModeRegular|0o004, 1, 1), permR | permW, false},
		{"root reads mode 0", cred{}, ino(mdtypes.ModeRegular, 1, 1), permR | permW, true},
		{"root cannot exec without x", cred{}, ino(mdtypes.ModeRegular|0o644, 1, 1), permX, false},
		{"root execs with any x", cred{}, ino(mdtypes.ModeRegular|0o001, 1, 1), permX, true},
		{"root searches any dir", cred{}, ino(mdtypes.ModeDir, 1, 1), permX, true},
	} {
		if got := mayAccess(tc.c, tc.in, tc.want); got != tc.ok {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.ok)
		}
	}
}

// Sticky directories (Linux may_delete; POSIX rename/unlink EPERM).
func TestMayDelete(t *testing.T) {
	user, other := cred{uid: 1000, gid: 1000}, cred{uid: 1001, gid: 1001}
	tmp := ino(mdtypes.ModeDir|0o1777, 0, 0)
	file := ino(mdtypes.ModeRegular|0o644, 1000, 1000)
	for _, tc := range []struct {
		name string
		c    cred
		dir  *mdtypes.Inode
		want error
	}{
		{"owner of the file", user, tmp, nil},
		{"another user", other, tmp, syscall.EPERM},
		{"root", cred{}, tmp, nil},
		{"owner of the directory", other, ino(mdtypes.ModeDir|0o1777, 1001, 0), nil},
		{"not sticky", other, ino(mdtypes.ModeDir|0o777, 0, 0), nil},
		{"no write permission", other, ino(mdtypes.ModeDir|0o755, 0, 0), syscall.EACCES},
	} {
		if got := mayDelete(tc.c, tc.dir, file); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// chmod, chown, setgid inheritance and the clearing of setuid/setgid.
func TestOwnershipRules(t *testing.T) {
	user := cred{uid: 1000, gid: 1000, groups: []uint32{50}}
	f := ino(mdtypes.ModeRegular|0o644, 1000, 1000)
	if m, err := chmodCheck(user, f, 0o2755); err != nil || m != 0o2755 {
		t.Errorf("chmod g+s in own group: %o %v", m, err)
	}
	if m, err := chmodCheck(user, ino(mdtypes.ModeRegular|0o644, 1000, 7), 0o2755); err != nil || m != 0o755 {
		t.Errorf("chmod g+s outside the group must drop it: %o %v", m, err)
	}
	if _, err := chmodCheck(cred{uid: 1001}, f, 0o777); err != syscall.EPERM {
		t.Errorf("chmod by another user: %v", err)
	}
	for _, tc := range []struct {
		name string
		c    cred
		setU bool
		uid  uint32
		setG bool
		gid  uint32
		want error
	}{
		{"owner to a group of its own", user, false, 0, true, 50, nil},
		{"owner to a foreign group", user, false, 0, true, 7, syscall.EPERM},
		{"owner gives the file away", user, true, 1001, false, 0, syscall.EPERM},
		{"owner to itself", user, true, 1000, false, 0, nil},
		{"another user", cred{uid: 1001, gid: 50}, false, 0, true, 50, syscall.EPERM},
		{"root", cred{}, true, 5, true, 5, nil},
	} {
		if got := chownCheck(tc.c, f, tc.setU, tc.uid, tc.setG, tc.gid); got != tc.want {
			t.Errorf("chown %s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if m := killSuid(mdtypes.ModeRegular | 0o6755); m != mdtypes.ModeRegular|0o755 {
		t.Errorf("killSuid with group exec: %o", m)
	}
	if m := killSuid(mdtypes.ModeRegular | 0o6745); m != mdtypes.ModeRegular|0o2745 {
		t.Errorf("killSuid without group exec keeps setgid (mandatory locking): %o", m)
	}
	sgidDir := ino(mdtypes.ModeDir|0o2775, 0, 50)
	if uid, gid, mode := newOwner(user, sgidDir, mdtypes.ModeDir|0o755); uid != 1000 || gid != 50 || mode&syscall.S_ISGID == 0 {
		t.Errorf("mkdir in a setgid directory: %d %d %o", uid, gid, mode)
	}
	if _, gid, mode := newOwner(cred{uid: 1001, gid: 1001}, sgidDir, mdtypes.ModeRegular|0o2755); gid != 50 || mode&syscall.S_ISGID != 0 {
		t.Errorf("a file with setgid in a setgid directory of a foreign group: %d %o", gid, mode)
	}
}

// rename's checks before permissions (POSIX rename, Linux renameat2).
func TestRenameCheck(t *testing.T) {
	file, dir := ino(mdtypes.ModeRegular, 0, 0), ino(mdtypes.ModeDir, 0, 0)
	for _, tc := range []struct {
		name     string
		flags    uint32
		src, dst *mdtypes.Inode
		empty    bool
		want     error
	}{
		{"to a new name", 0, file, nil, true, nil},
		{"file over file", 0, file, file, true, nil},
		{"dir over empty dir", 0, dir, dir, true, nil},
		{"dir over full dir", 0, dir, dir, false, syscall.ENOTEMPTY},
		{"dir over file", 0, dir, file, true, syscall.ENOTDIR},
		{"file over dir", 0, file, dir, true, syscall.EISDIR},
		{"noreplace over existing", renameNoReplace, file, file, true, syscall.EEXIST},
		{"noreplace to new", renameNoReplace, file, nil, true, nil},
		{"exchange with nothing", renameExchange, file, nil, true, syscall.ENOENT},
		{"exchange file and dir", renameExchange, file, dir, false, nil},
		{"both flags", renameExchange | renameNoReplace, file, file, true, syscall.EINVAL},
		{"unknown flag", 4, file, nil, true, syscall.EINVAL},
	} {
		if got := renameCheck(tc.flags, tc.src, tc.dst, tc.empty); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
