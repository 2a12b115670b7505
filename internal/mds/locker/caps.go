package locker

import (
	"fmt"
	"strings"
)

// Caps is a set of capability bits, laid out as CephFS lays them out on
// the wire: the pin in bit 0, then each lock's generic bits shifted to
// the lock's place (Auth at 2, Link at 4, Xattr at 6, File at 8). Only
// the file lock has more than the shared and exclusive bits.
type Caps uint32

// Generic bits, before the shift to a lock's place.
const (
	gShared  Caps = 1 << iota // s: read a coherent value
	gExcl                     // x: read and update it
	gCache                    // c: (file) cache reads
	gRead                     // r: (file) read
	gWrite                    // w: (file) write
	gBuffer                   // b: (file) buffer writes
	gExtend                   // a: (file) extend the end of file
	gLazy                     // l: (file) lazy I/O
	gAll     = gShared | gExcl | gCache | gRead | gWrite | gBuffer | gExtend | gLazy
	gMeta    = gShared | gExcl // the bits a non-file lock has
	genBits  = "sxcrwbal"      // the letters of the generic bits, in bit order
	pinShift = 0               // the pin has no lock place
)

// The lock places.
const (
	shiftAuth  = 2
	shiftLink  = 4
	shiftXattr = 6
	shiftFile  = 8
)

// The capability bits, named as Ceph's logs name them.
const (
	Pin Caps = 1 << pinShift // p: the client knows the inode; the MDS keeps it cached

	AuthShared Caps = gShared << shiftAuth // As: mode, owner, group
	AuthExcl   Caps = gExcl << shiftAuth   // Ax: and may change them locally

	LinkShared Caps = gShared << shiftLink // Ls: the link count
	LinkExcl   Caps = gExcl << shiftLink   // Lx

	XattrShared Caps = gShared << shiftXattr // Xs: the extended attributes
	XattrExcl   Caps = gExcl << shiftXattr   // Xx

	FileShared Caps = gShared << shiftFile // Fs: size and times, read
	FileExcl   Caps = gExcl << shiftFile   // Fx: size and times, updated locally
	FileCache  Caps = gCache << shiftFile  // Fc: cache file data read
	FileRead   Caps = gRead << shiftFile   // Fr: read file data from the OSDs
	FileWrite  Caps = gWrite << shiftFile  // Fw: write file data to the OSDs
	FileBuffer Caps = gBuffer << shiftFile // Fb: buffer writes (write-back)
	FileExtend Caps = gExtend << shiftFile // Fa: extend the end of file
	FileLazy   Caps = gLazy << shiftFile   // Fl: lazy I/O (O_LAZY)
)

// Masks of a lock's bits.
const (
	AuthMask  Caps = gMeta << shiftAuth
	LinkMask  Caps = gMeta << shiftLink
	XattrMask Caps = gMeta << shiftXattr
	FileMask  Caps = gAll << shiftFile

	// AnyWrite are the bits with which a client may change the inode or
	// its data without asking the MDS: a client that held any of them
	// when its session ended may still have writes in flight, so it is
	// fenced (blocklisted) before its caps go to anyone else.
	AnyWrite = AuthExcl | LinkExcl | XattrExcl | FileExcl | FileWrite | FileBuffer | FileExtend
)

// locks lists the lock places in String's order.
var locks = [...]struct {
	letter byte
	shift  uint
	bits   Caps
}{
	{'A', shiftAuth, gMeta},
	{'L', shiftLink, gMeta},
	{'X', shiftXattr, gMeta},
	{'F', shiftFile, gAll},
}

// String renders c in Ceph's notation: "p" for the pin, then each lock's
// letter followed by its generic bits, e.g. "pAsLsXsFscr". The empty set
// is "-". Bits outside the layout are shown in hex after a '+'.
func (c Caps) String() string {
	if c == 0 {
		return "-"
	}
	var b strings.Builder
	if c&Pin != 0 {
		b.WriteByte('p')
	}
	known := Pin
	for _, l := range locks {
		g := (c >> l.shift) & l.bits
		known |= l.bits << l.shift
		if g == 0 {
			continue
		}
		b.WriteByte(l.letter)
		for i := range len(genBits) {
			if g&(1<<i) != 0 {
				b.WriteByte(genBits[i])
			}
		}
	}
	if rest := c &^ known; rest != 0 {
		fmt.Fprintf(&b, "+%#x", uint32(rest))
	}
	return b.String()
}

// ParseCaps reads String's notation back ("-" or "" is the empty set);
// the locks must come in String's order, each bit once.
func ParseCaps(s string) (Caps, error) {
	if s == "-" || s == "" {
		return 0, nil
	}
	var c Caps
	cur := -1 // index into locks of the letter in effect
	for i := range len(s) {
		ch := s[i]
		bad := func() error {
			return fmt.Errorf("locker: caps %q: unexpected %q at %d: %w", s, ch, i, ErrBadCaps)
		}
		if ch == 'p' && i == 0 {
			c |= Pin
			continue
		}
		if j := strings.IndexByte("ALXF", ch); j >= 0 {
			if j <= cur {
				return 0, bad() // out of order or repeated
			}
			cur = j
			continue
		}
		g := strings.IndexByte(genBits, ch)
		if cur < 0 || g < 0 || Caps(1<<g)&locks[cur].bits == 0 {
			return 0, bad()
		}
		bit := Caps(1<<g) << locks[cur].shift
		if c&bit != 0 {
			return 0, bad()
		}
		c |= bit
	}
	return c, nil
}

// conflictsOfFile maps a generic file bit to the generic bits of the
// file lock that no other client may hold at the same time. The
// relation is symmetric (a test checks): if a conflicts with b, b
// conflicts with a.
//
// For the file lock:
//   - s and c (a coherent size and cached data) go stale under another
//     client's w, b, a or x;
//   - r (synchronous reads at the OSDs) conflicts only with buffering
//     (b) and local updates (x): reads and writes straight to the OSDs
//     are ordered there, which is the mix state;
//   - w conflicts with what caches (s, c) and what buffers (b, x);
//   - a (extend EOF) behaves as w and also excludes another a;
//   - b and x exclude every file bit of another client;
//   - l (lazy I/O) excludes only b and x: it licenses a client that
//     opened with O_LAZY to cache and buffer despite other clients'
//     r and w, coherence being left to lazyio_propagate/synchronize.
//
// For Auth, Link and Xattr: x excludes s and x.
func conflictsOfFile(g Caps) Caps {
	switch g {
	case gShared, gCache:
		return gWrite | gBuffer | gExtend | gExcl
	case gRead:
		return gBuffer | gExcl
	case gWrite:
		return gShared | gCache | gBuffer | gExcl
	case gExtend:
		return gShared | gCache | gBuffer | gExcl | gExtend
	case gBuffer, gExcl:
		return gAll
	case gLazy:
		return gBuffer | gExcl
	}
	return 0
}

// conflictsOfMeta is conflictsOfFile for the Auth, Link and Xattr locks.
func conflictsOfMeta(g Caps) Caps {
	switch g {
	case gShared:
		return gExcl
	case gExcl:
		return gShared | gExcl
	}
	return 0
}

// Conflicts returns the bits that no other client may hold while one
// holds c. The pin conflicts with nothing.
func (c Caps) Conflicts() Caps {
	var out Caps
	for _, l := range locks {
		g := (c >> l.shift) & l.bits
		for i := range 8 {
			bit := Caps(1 << i)
			if g&bit == 0 {
				continue
			}
			if l.shift == shiftFile {
				out |= conflictsOfFile(bit) << l.shift
			} else {
				out |= conflictsOfMeta(bit) << l.shift
			}
		}
	}
	return out
}

// ConflictsWith reports whether two different clients may not hold c
// and d at the same time.
func (c Caps) ConflictsWith(d Caps) bool { return c.Conflicts()&d != 0 }

// CanCache reports whether a client holding c may serve reads of file
// data from its cache: with Fc, or with Fl on a file it opened O_LAZY.
func (c Caps) CanCache(lazy bool) bool {
	return c&FileCache != 0 || (lazy && c&FileLazy != 0 && c&FileRead != 0)
}

// CanBuffer reports whether a client holding c may buffer writes (write
// back later): with Fb, or with Fl on a file it opened O_LAZY.
func (c Caps) CanBuffer(lazy bool) bool {
	return c&FileBuffer != 0 || (lazy && c&FileLazy != 0 && c&FileWrite != 0)
}
