package mdtypes

import (
	"bytes"
	"testing"
)

// Every decoder: no panic on any input, and what decodes re-encodes to
// a value that decodes to the same (not to the same bytes: envelopes may
// carry fields a decoder skips).

func FuzzInode(f *testing.F) {
	f.Add(MarshalInode(sampleFile()))
	f.Add(MarshalInode(&Inode{Ino: 1, Mode: ModeDir | 0o755, Frags: []Frag{RootFrag}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := UnmarshalInode(b)
		if err != nil {
			return
		}
		if err := in.Validate(); err != nil {
			t.Fatalf("decoded an invalid inode: %v", err)
		}
		if again, err := UnmarshalInode(MarshalInode(in)); err != nil || !bytes.Equal(MarshalInode(again), MarshalInode(in)) {
			t.Fatalf("re-encoding: %v", err)
		}
	})
}

func FuzzDentry(f *testing.F) {
	f.Add((&Dentry{Name: "a", Version: 1, Inode: sampleFile()}).MarshalValue())
	f.Add((&Dentry{Name: "b", RemoteIno: 9, RemoteType: 4}).MarshalValue())
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := UnmarshalDentry("n", b)
		if err != nil {
			return
		}
		if again, err := UnmarshalDentry("n", d.MarshalValue()); err != nil || !bytes.Equal(again.MarshalValue(), d.MarshalValue()) {
			t.Fatalf("re-encoding: %v", err)
		}
	})
}

func FuzzDentryKey(f *testing.F) {
	f.Add("a_head")
	f.Add("_head")
	f.Fuzz(func(t *testing.T, k string) {
		n, err := NameOfKey(k)
		if err == nil && DentryKey(n) != k {
			t.Fatalf("%q -> %q", k, n)
		}
	})
}

func FuzzFragHeader(f *testing.F) {
	f.Add((&FragHeader{Version: 3, Files: 1}).Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := UnmarshalFragHeader(b)
		if err != nil {
			return
		}
		// Not bytes.Equal(h.Marshal(), b): an envelope may carry fields
		// this version skips.
		if again, err := UnmarshalFragHeader(h.Marshal()); err != nil || again != h {
			t.Fatalf("re-encoding: %+v %v", again, err)
		}
	})
}

func FuzzBacktrace(f *testing.F) {
	f.Add((&Backtrace{Ino: 5, Ancestors: []Ancestor{{DirIno: 1, Name: "x", Version: 2}}, OldPools: []int64{-1}}).Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		bt, err := UnmarshalBacktrace(b)
		if err != nil {
			return
		}
		if again, err := UnmarshalBacktrace(bt.Marshal()); err != nil || !bytes.Equal(again.Marshal(), bt.Marshal()) {
			t.Fatalf("re-encoding: %v", err)
		}
	})
}

func FuzzInoTable(f *testing.F) {
	tab := NewInoTable(2)
	tab.Alloc(7)
	f.Add(tab.Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		tab, err := UnmarshalInoTable(b)
		if err != nil {
			return
		}
		// Whatever decodes is usable: allocation and release keep it valid.
		r, err := tab.Alloc(3)
		if err == nil {
			if err := tab.Release(r); err != nil {
				t.Fatalf("release of %v: %v", r, err)
			}
		}
		if err := tab.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzFragOf(f *testing.F) {
	f.Add(uint8(2), "name")
	f.Fuzz(func(t *testing.T, bits uint8, name string) {
		bits %= 9
		var leaves []Frag
		for v := uint32(0); v < 1<<bits; v++ {
			fr, err := MakeFrag(bits, v<<(24-uint32(bits)))
			if err != nil {
				t.Fatal(err)
			}
			leaves = append(leaves, fr)
		}
		if err := ValidateLeaves(leaves); err != nil {
			t.Fatal(err)
		}
		if _, err := FragOf(leaves, name); err != nil {
			t.Fatal(err)
		}
	})
}
