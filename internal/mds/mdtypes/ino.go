package mdtypes

import "fmt"

// Ino is an inode number.
type Ino uint64

// Well-known inode numbers, as CephFS numbers them.
const (
	// RootIno is the root directory's inode.
	RootIno Ino = 0x1
	// mdsDirBase + rank is a rank's private directory (~mdsN), holding
	// its stray directories.
	mdsDirBase Ino = 0x100
	// journalBase + rank is a rank's journal (internal/mds/journal).
	journalBase Ino = 0x200
	// strayBase + rank*NumStrays + i is stray directory i of a rank.
	strayBase Ino = 0x600
	// NumStrays is how many stray directories each rank has (stray0 ..
	// stray9): unlinked inodes still open, or waiting to be purged.
	NumStrays = 10
	// MaxRank bounds the ranks the fixed numbers above leave room for
	// (Ceph's MAX_MDS).
	MaxRank = 0x100
)

// rankInoSpan is the size of each rank's share of client inode numbers:
// rank r allocates from [(r+1)<<40, (r+2)<<40), as Ceph's InoTable does.
const rankInoSpan = 1 << 40

// MDSDirIno is rank's private directory.
func MDSDirIno(rank int) Ino { return mdsDirBase + Ino(rank) }

// StrayIno is stray directory i of rank.
func StrayIno(rank, i int) Ino { return strayBase + Ino(rank*NumStrays+i) }

// JournalIno is rank's journal inode.
func JournalIno(rank int) Ino { return journalBase + Ino(rank) }

// StrayName names stray directory i in its mdsdir ("stray0").
func StrayName(i int) string { return fmt.Sprintf("stray%d", i) }

// IsSystem reports whether ino is one of the fixed inodes below the
// allocated range (the root, mdsdirs, journals, strays).
func IsSystem(ino Ino) bool { return ino < rankInoSpan }

// IsBase reports whether ino has no parent dentry (the root and the
// mdsdirs): its inode lives in an object of its own (BaseInodeObject).
func IsBase(ino Ino) bool {
	return ino == RootIno || (ino >= mdsDirBase && ino < mdsDirBase+MaxRank)
}

// String formats the inode number in hexadecimal, as object names do.
func (i Ino) String() string { return fmt.Sprintf("0x%x", uint64(i)) }

// DirfragObject names the object of fragment f of directory ino in the
// metadata pool: "<ino hex>.<frag hex, 8 digits>", as Ceph's CDir
// ("1.00000000" is the root directory's only fragment).
func DirfragObject(ino Ino, f Frag) string {
	return fmt.Sprintf("%x.%08x", uint64(ino), uint32(f))
}

// BaseInodeObject names the object holding a base inode (root, mdsdir):
// "<ino hex>.00000000.inode", as Ceph's CInode::store.
func BaseInodeObject(ino Ino) string { return fmt.Sprintf("%x.00000000.inode", uint64(ino)) }

// InoTableObject names rank's inode table object ("mds0_inotable").
func InoTableObject(rank int) string { return fmt.Sprintf("mds%d_inotable", rank) }

// FirstDataObject names the data object that carries a file's backtrace:
// its object 0 ("<ino hex>.00000000"), the same name striper/layout gives.
func FirstDataObject(ino Ino) string { return fmt.Sprintf("%x.%08x", uint64(ino), 0) }
