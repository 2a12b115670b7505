package mdtypes

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/striper/layout"
)

func sampleFile() *Inode {
	l := layout.Default(3)
	return &Inode{
		Ino: 0x10000000123, Version: 7, Mode: ModeRegular | 0o4755, UID: 1000, GID: 100, Nlink: 2,
		Size: 1 << 40, Rdev: 0,
		Atime:  Time{Sec: -1, Nsec: 999_999_999},   // before 1970
		Mtime:  Time{Sec: 1<<32 + 5, Nsec: 1},      // past 2106
		Ctime:  Time{Sec: 253402300799, Nsec: 123}, // 9999-12-31
		Btime:  Time{Sec: 1<<31 + 1, Nsec: 500},    // past 2038
		Layout: &l, Xattrs: map[string][]byte{"user.a": []byte("1"), "user.empty": {}},
	}
}

// Inodes round-trip with every field, including times far past 2038 and
// 2106 and before 1970 (pjdfstest's utimensat cases).
func TestInodeRoundTrip(t *testing.T) {
	dir := &Inode{Ino: RootIno, Mode: ModeDir | 0o1777, Nlink: 2,
		Quota: Quota{MaxBytes: 1 << 30, MaxFiles: 1000}, RStat: RStat{Bytes: 5, Files: 6, Subdirs: 7}}
	f2, _ := MakeFrag(1, 0)
	f3, _ := MakeFrag(1, 1<<23)
	dir.Frags = []Frag{f2, f3}
	link := &Inode{Ino: 5 << 40, Mode: ModeSymlink | 0o777, Symlink: strings.Repeat("x", MaxSymlinkLen), Size: MaxSymlinkLen}
	dev := &Inode{Ino: 6 << 40, Mode: ModeChar | 0o600, Rdev: 0x0105}
	for _, in := range []*Inode{sampleFile(), dir, link, dev} {
		if err := in.Validate(); err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalInode(MarshalInode(in))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, in) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, in)
		}
	}
	mt := sampleFile().Mtime.Go()
	if mt.Year() != 2106 || TimeOf(mt) != sampleFile().Mtime {
		t.Fatalf("mtime %v", mt)
	}
	if y := (Time{Sec: 1 << 40}).Go().Year(); y < 30000 {
		t.Fatalf("year %d", y)
	}
	if !(Time{Sec: -1}).Before(Time{Sec: 0}) || (Time{Sec: 1, Nsec: 2}).Before(Time{Sec: 1, Nsec: 1}) {
		t.Fatal("Before")
	}
	_ = time.Unix
}

// Values that Validate refuses are refused by the decoder as corrupt.
func TestInodeDecodeRefusesInvalid(t *testing.T) {
	bad := []func(*Inode){
		func(in *Inode) { in.Mode = 0o755 },                           // no type
		func(in *Inode) { in.Mode |= 0o1000000 },                      // unknown bits
		func(in *Inode) { in.Layout = nil },                           // regular file without layout
		func(in *Inode) { in.Symlink = "x" },                          // target on a file
		func(in *Inode) { in.Mtime.Nsec = 1e9 },                       // nanoseconds
		func(in *Inode) { in.Frags = []Frag{RootFrag} },               // fragments on a file
		func(in *Inode) { in.Layout = &layout.Layout{StripeUnit: 1} }, // invalid layout
	}
	for i, mut := range bad {
		in := sampleFile()
		mut(in)
		if in.Validate() == nil {
			t.Fatalf("case %d: Validate accepted %+v", i, in)
		}
		if _, err := UnmarshalInode(MarshalInode(in)); !errors.Is(err, encoding.ErrCorrupt) {
			t.Fatalf("case %d: decode: %v", i, err)
		}
	}
}

// Primary dentries embed their inode; remote dentries (hard links) name
// an inode and its type. Keys are "<name>_head".
func TestDentries(t *testing.T) {
	p := &Dentry{Name: "file", Version: 3, Inode: sampleFile()}
	r := &Dentry{Name: "link", Version: 4, RemoteIno: p.Inode.Ino, RemoteType: DType(p.Inode.Mode)}
	for _, d := range []*Dentry{p, r} {
		got, err := UnmarshalDentry(d.Name, d.MarshalValue())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, d) {
			t.Fatalf("got %+v want %+v", got, d)
		}
	}
	if !r.IsRemote() || p.IsRemote() || r.Ino() != p.Ino() || r.RemoteType != 8 {
		t.Fatal("kinds")
	}
	if k := DentryKey("a_head"); k != "a_head_head" {
		t.Fatal(k)
	}
	if n, err := NameOfKey("a_head_head"); err != nil || n != "a_head" {
		t.Fatal(n, err)
	}
	for _, k := range []string{"a", "_head", "a/b_head", "._head", strings.Repeat("n", 256) + "_head"} {
		if _, err := NameOfKey(k); !errors.Is(err, ErrBadKey) {
			t.Fatalf("%q: %v", k, err)
		}
	}
	if err := ValidateName(strings.Repeat("n", 255)); err != nil {
		t.Fatal(err)
	}
	bad := &Dentry{Name: "x", RemoteIno: 5, RemoteType: 3}
	if _, err := UnmarshalDentry("x", bad.MarshalValue()); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatalf("remote type 3: %v", err)
	}
}

func TestFragHeaderAndBacktraceRoundTrip(t *testing.T) {
	h := FragHeader{Version: 9, Files: 3, Subdirs: 2, RStat: RStat{Bytes: 1, Files: 2, Subdirs: 3}}
	if got, err := UnmarshalFragHeader(h.Marshal()); err != nil || got != h {
		t.Fatal(got, err)
	}
	b := &Backtrace{Ino: 0x10000000001, Pool: 2, OldPools: []int64{1},
		Ancestors: []Ancestor{{DirIno: 0x10000000000, Name: "f", Version: 4}, {DirIno: RootIno, Name: "d", Version: 2}}}
	got, err := UnmarshalBacktrace(b.Marshal())
	if err != nil || !reflect.DeepEqual(got, b) {
		t.Fatal(got, err)
	}
	b.Ancestors[1].Name = "a/b"
	if _, err := UnmarshalBacktrace(b.Marshal()); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatal(err)
	}
}

func TestWellKnownNames(t *testing.T) {
	cases := map[string]string{
		DirfragObject(RootIno, RootFrag):   "1.00000000",
		DirfragObject(MDSDirIno(1), 0):     "101.00000000",
		DirfragObject(StrayIno(0, 9), 0):   "609.00000000",
		DirfragObject(StrayIno(1, 0), 0):   "60a.00000000",
		BaseInodeObject(RootIno):           "1.00000000.inode",
		InoTableObject(0):                  "mds0_inotable",
		FirstDataObject(0x10000000000):     "10000000000.00000000",
		DirfragObject(5, Frag(0x01800000)): "5.01800000",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
	if !IsBase(RootIno) || !IsBase(MDSDirIno(3)) || IsBase(StrayIno(0, 0)) || IsSystem(1<<40) {
		t.Fatal("IsBase/IsSystem")
	}
	if JournalIno(0) != 0x200 {
		t.Fatal(JournalIno(0))
	}
}

// Fragments split the 24-bit hash space; every name falls in exactly one
// leaf.
func TestFrags(t *testing.T) {
	var leaves []Frag
	for v := uint32(0); v < 4; v++ {
		f, err := MakeFrag(2, v<<22)
		if err != nil {
			t.Fatal(err)
		}
		leaves = append(leaves, f)
	}
	if err := ValidateLeaves(leaves); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]Frag{leaves[:3], {leaves[1], leaves[0], leaves[2], leaves[3]}, {RootFrag, RootFrag}} {
		if ValidateLeaves(bad) == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
	if _, err := MakeFrag(2, 1); err == nil {
		t.Fatal("value below its bits accepted")
	}
	counts := map[Frag]int{}
	for i := range 4000 {
		name := "n" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune(i))
		f, err := FragOf(leaves, name)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range leaves {
			if l.Contains(NameHash(name)) {
				n++
			}
		}
		if n != 1 || !f.Contains(NameHash(name)) {
			t.Fatalf("%q in %d leaves", name, n)
		}
		counts[f]++
	}
	for _, l := range leaves {
		if counts[l] < 500 {
			t.Fatalf("leaf %v got %d of 4000 names", l, counts[l])
		}
	}
	if f, _ := FragOf(nil, "x"); f != RootFrag || !RootFrag.Contains(0xffffff) {
		t.Fatal("root frag")
	}
}

// The inode table hands out ranges from the rank's share, takes them back
// merged, and refuses double frees and foreign numbers.
func TestInoTable(t *testing.T) {
	tab := NewInoTable(1)
	a, err := tab.Alloc(1)
	if err != nil || a.Start != 2<<40 || a.Len != 1 {
		t.Fatal(a, err)
	}
	b, _ := tab.Alloc(1000) // a client's preallocation
	c, _ := tab.Alloc(10)
	if b.Start != a.End() || c.Start != b.End() || tab.IsFree(b.Start+5) {
		t.Fatal(b, c)
	}
	if err := tab.Release(b); err != nil {
		t.Fatal(err)
	}
	if !tab.IsFree(b.Start) || len(tab.Free) != 2 {
		t.Fatal(tab.Free)
	}
	if err := tab.Release(Range{Start: b.Start + 1, Len: 1}); err == nil {
		t.Fatal("double free accepted")
	}
	if err := tab.Release(Range{Start: 1 << 40, Len: 1}); err == nil {
		t.Fatal("rank 0's number accepted by rank 1")
	}
	_ = tab.Release(a)
	_ = tab.Release(c)
	if len(tab.Free) != 1 || tab.Free[0] != NewInoTable(1).Free[0] {
		t.Fatalf("not merged back: %v", tab.Free)
	}
	v := tab.Version
	got, err := UnmarshalInoTable(tab.Marshal())
	if err != nil || !reflect.DeepEqual(got, tab) || got.Version != v {
		t.Fatal(got, err)
	}
	// Exhaustion.
	small := &InoTable{Rank: 0, Free: []Range{{Start: 1 << 40, Len: 2}}}
	if r, _ := small.Alloc(5); r.Len != 2 {
		t.Fatal(r)
	}
	if _, err := small.Alloc(1); !errors.Is(err, ErrNoInodes) {
		t.Fatal(err)
	}
	overlapping := &InoTable{Rank: 0, Free: []Range{{Start: 1 << 40, Len: 2}, {Start: 1<<40 + 2, Len: 1}}}
	if _, err := UnmarshalInoTable(overlapping.Marshal()); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatal(err)
	}
}
