package locker

import (
	"errors"
	"testing"
)

func TestCapsString(t *testing.T) {
	for _, tc := range []struct {
		caps Caps
		want string
	}{
		{0, "-"},
		{Pin, "p"},
		{Pin | AuthShared | LinkShared | XattrShared | FileShared | FileCache | FileRead, "pAsLsXsFscr"},
		{AuthShared | AuthExcl | FileMask, "AsxFsxcrwbal"},
		{FileRead | FileWrite | FileLazy, "Frwl"},
		{WantedFor(OpenRead | OpenWrite | OpenLazy), "pAsLsXsFsxcrwbal"},
		{WantedFor(OpenRead), "pAsLsXsFscr"},
		{Caps(1 << 1), "+0x2"},
	} {
		if got := tc.caps.String(); got != tc.want {
			t.Errorf("%#x: got %q, want %q", uint32(tc.caps), got, tc.want)
		}
	}
}

// Every set of defined bits reads back from its notation.
func TestCapsParseRoundTrip(t *testing.T) {
	defined := Pin | AuthMask | LinkMask | XattrMask | FileMask
	for v := range Caps(1 << 16) {
		if v&^defined != 0 {
			continue
		}
		got, err := ParseCaps(v.String())
		if err != nil || got != v {
			t.Fatalf("%s: got %s, %v", v, got, err)
		}
	}
	for _, bad := range []string{"q", "Ac", "Fz", "s", "pp", "FsAw", "FsAs", "Fss", "FsFc"} {
		if _, err := ParseCaps(bad); !errors.Is(err, ErrBadCaps) {
			t.Errorf("ParseCaps(%q) = %v, want ErrBadCaps", bad, err)
		}
	}
}

// The conflict relation is symmetric: if one client's bit rules out
// another's, the other rules out the first.
func TestConflictsSymmetric(t *testing.T) {
	for i := range 16 {
		for j := range 16 {
			a, b := Caps(1<<i), Caps(1<<j)
			if a.ConflictsWith(b) != b.ConflictsWith(a) {
				t.Errorf("%s vs %s: not symmetric", a, b)
			}
		}
	}
	if Pin.Conflicts() != 0 {
		t.Errorf("the pin conflicts with %s", Pin.Conflicts())
	}
}

// The conflict table, as the paper's rules state it (section 3.2): a
// reader's cache excludes writers; synchronous readers and writers
// share; buffering excludes everyone; lazy I/O shares with synchronous
// I/O.
func TestConflictTable(t *testing.T) {
	for _, tc := range []struct {
		a, b     Caps
		conflict bool
	}{
		{FileCache, FileWrite, true},
		{FileShared, FileWrite, true},
		{FileRead, FileWrite, false},
		{FileWrite, FileWrite, false},
		{FileRead, FileRead | FileCache | FileShared, false},
		{FileBuffer, FileRead, true},
		{FileExcl, FileLazy, true},
		{FileLazy, FileRead | FileWrite | FileLazy, false},
		{FileExtend, FileExtend, true},
		{AuthShared, AuthShared, false},
		{AuthShared, AuthExcl, true},
		{AuthExcl, FileMask, false},
		{XattrExcl, XattrExcl, true},
	} {
		if got := tc.a.ConflictsWith(tc.b); got != tc.conflict {
			t.Errorf("%s vs %s: conflict %v, want %v", tc.a, tc.b, got, tc.conflict)
		}
	}
}

// What each lock state lets any two clients hold never conflicts: a
// state is a sharing arrangement the conflict table accepts.
func TestStatesConsistentWithConflicts(t *testing.T) {
	for k := range numLocks {
		for _, s := range []LockState{StateSync, StateMix, StateExcl, StateLock} {
			loner, other := allowed(k, s, true), allowed(k, s, false)
			if other.ConflictsWith(other) {
				t.Errorf("%s %s: two clients' %s conflict", k, s, other)
			}
			if loner.ConflictsWith(other) {
				t.Errorf("%s %s: the loner's %s conflicts with another's %s", k, s, loner, other)
			}
			if loner&^k.mask() != 0 {
				t.Errorf("%s %s: allows %s outside the lock", k, s, loner)
			}
		}
	}
	if got := allowed(LockFile, StateMix, false); got != FileRead|FileWrite|FileLazy {
		t.Errorf("file mix allows %s, want Frwl", got)
	}
	if got := allowed(LockFile, StateSync, false); got != FileShared|FileCache|FileRead|FileLazy {
		t.Errorf("file sync allows %s, want Fscrl", got)
	}
}

func TestLazyLicense(t *testing.T) {
	mix := FileRead | FileWrite | FileLazy
	if !mix.CanBuffer(true) || !mix.CanCache(true) {
		t.Errorf("an O_LAZY opener with %s may not cache or buffer", mix)
	}
	if mix.CanBuffer(false) || mix.CanCache(false) {
		t.Errorf("a client that did not open O_LAZY caches or buffers with %s", mix)
	}
	if !(FileCache | FileRead).CanCache(false) || !(FileBuffer | FileWrite).CanBuffer(false) {
		t.Error("Fc/Fb do not license caching/buffering")
	}
}

// FuzzParseCaps: any input either fails with ErrBadCaps or parses to a
// set whose notation parses back to the same set.
func FuzzParseCaps(f *testing.F) {
	for _, s := range []string{"pAsLsXsFscr", "-", "Fsxcrwbal", "pp", "FsAs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCaps(s)
		if err != nil {
			if !errors.Is(err, ErrBadCaps) {
				t.Fatalf("ParseCaps(%q): %v", s, err)
			}
			return
		}
		back, err := ParseCaps(c.String())
		if err != nil || back != c {
			t.Fatalf("ParseCaps(%q) = %s, which reads back as %s, %v", s, c, back, err)
		}
	})
}
