package mdtypes

// File types and permission bits of a mode, as POSIX's st_mode.
const (
	ModeType    uint32 = 0o170000 // S_IFMT
	ModeSocket  uint32 = 0o140000
	ModeSymlink uint32 = 0o120000
	ModeRegular uint32 = 0o100000
	ModeBlock   uint32 = 0o060000
	ModeDir     uint32 = 0o040000
	ModeChar    uint32 = 0o020000
	ModeFIFO    uint32 = 0o010000
	ModePerm    uint32 = 0o7777 // permission, setuid, setgid and sticky bits
)

// validType reports whether t (mode & ModeType) is a file type.
func validType(t uint32) bool {
	switch t {
	case ModeSocket, ModeSymlink, ModeRegular, ModeBlock, ModeDir, ModeChar, ModeFIFO:
		return true
	}
	return false
}

// DType is a directory entry's type as readdir reports it (Linux's
// IFTODT: the mode's type bits shifted down by 12).
func DType(mode uint32) uint8 { return uint8((mode & ModeType) >> 12) }

// ModeOfDType is the type bits of a DType.
func ModeOfDType(t uint8) uint32 { return uint32(t) << 12 }
