package wire

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// Metadata requests of the file-system client protocol (fsclientmsg.go):
// a ClientRequest to the rank that owns its path, a ClientReply (an
// early "unsafe" one once the change is made in memory, and a "safe" one
// after the journal commits it; a read is answered once, safe), or a
// ClientRequestForward if another rank owns the path.

// MetaOp names a metadata operation. The numbers are part of the wire
// format and never reused: reads below 32, changes from 32 (IsWrite).
type MetaOp uint16

// Metadata operations, with the request fields each uses (Path is the
// target, or the directory and name of what it creates or removes).
const (
	MetaLookup       MetaOp = 1  // Path; Mask: attributes wanted -> trace to the target (Ino 0: no such name)
	MetaLookupIno    MetaOp = 2  // Path.Ino alone: find an inode by number (an NFS-style handle) -> its trace
	MetaLookupParent MetaOp = 3  // Path.Ino: the parent directory of a directory -> trace
	MetaGetattr      MetaOp = 4  // Path; Mask: attributes that must be exact (collects size and mtime from writers)
	MetaStatlite     MetaOp = 5  // Path; Mask: the attributes that must be exact; the others come back at once, those possibly stale in the reply's Approx
	MetaGetxattr     MetaOp = 6  // Path, Name -> Data (the value)
	MetaListxattr    MetaOp = 7  // Path -> Data (the names, each ending in a NUL)
	MetaReaddir      MetaOp = 8  // Path (the directory); Frag, Offset, StartName, MaxEntries, MaxBytes, Plus -> Dir
	MetaOpen         MetaOp = 9  // Path; OpFlags (O_*), WantCaps -> trace with the cap
	MetaGetFileLock  MetaOp = 10 // Path; Lock (the lock to test) -> Lock (a conflicting lock, or type LockUnlock)
	MetaLazyIO       MetaOp = 11 // Path; OpFlags: 1 turns lazy I/O on for the client's cap (O_LAZY after open), 0 off

	MetaSetattr      MetaOp = 32 // Path; Mask (Attr*): which of Mode, UID, GID, Size, Atime, Mtime, Ctime, Btime to set
	MetaSetxattr     MetaOp = 33 // Path, Name, Value, OpFlags (XATTR_CREATE 1, XATTR_REPLACE 2); ceph.quota.* and ceph.*layout* are virtual
	MetaRmxattr      MetaOp = 34 // Path, Name
	MetaCreate       MetaOp = 35 // Path (directory and name); OpFlags (O_*, with O_EXCL), Mode, WantCaps, CreatedIno -> trace with the cap
	MetaMknod        MetaOp = 36 // Path; Mode (with the file type), Rdev, CreatedIno
	MetaMkdir        MetaOp = 37 // Path; Mode, CreatedIno
	MetaSymlink      MetaOp = 38 // Path; Target, CreatedIno
	MetaLink         MetaOp = 39 // Path (the new name), Path2 (the existing file)
	MetaUnlink       MetaOp = 40 // Path
	MetaRmdir        MetaOp = 41 // Path
	MetaRename       MetaOp = 42 // Path (the new name), Path2 (the old name); OpFlags (RENAME_NOREPLACE 1, RENAME_EXCHANGE 2)
	MetaSetLayout    MetaOp = 43 // Path (a file, before data is written); Layout
	MetaSetDirLayout MetaOp = 44 // Path (a directory: the layout its new files inherit); Layout
	MetaSetFileLock  MetaOp = 45 // Path; Lock (type LockUnlock releases)
)

var metaOpNames = map[MetaOp]string{
	MetaLookup: "lookup", MetaLookupIno: "lookupino", MetaLookupParent: "lookupparent", MetaGetattr: "getattr",
	MetaStatlite: "statlite", MetaGetxattr: "getxattr", MetaListxattr: "listxattr", MetaReaddir: "readdir",
	MetaOpen: "open", MetaGetFileLock: "getfilelock", MetaLazyIO: "lazyio",
	MetaSetattr: "setattr", MetaSetxattr: "setxattr", MetaRmxattr: "rmxattr", MetaCreate: "create",
	MetaMknod: "mknod", MetaMkdir: "mkdir", MetaSymlink: "symlink", MetaLink: "link", MetaUnlink: "unlink",
	MetaRmdir: "rmdir", MetaRename: "rename", MetaSetLayout: "setlayout", MetaSetDirLayout: "setdirlayout",
	MetaSetFileLock: "setfilelock",
}

func (op MetaOp) String() string {
	if n, ok := metaOpNames[op]; ok {
		return n
	}
	return fmt.Sprintf("metaop(%d)", uint16(op))
}

// Known reports whether op is one of the operations above.
func (op MetaOp) Known() bool { _, ok := metaOpNames[op]; return ok }

// IsWrite reports whether op changes the namespace (and is journaled,
// answered unsafe then safe). An open with O_TRUNC changes the inode
// too, and is answered as a change.
func (op MetaOp) IsWrite() bool { return op >= 32 }

// Attribute mask bits: a setattr's fields to set, a getattr's or
// statlite's fields that must be exact, a reply's possibly stale fields
// (Approx). The setattr bits are Ceph's CEPH_SETATTR_* values.
const (
	AttrMode      = 1 << 0
	AttrUID       = 1 << 1
	AttrGID       = 1 << 2
	AttrMtime     = 1 << 3
	AttrAtime     = 1 << 4
	AttrSize      = 1 << 5
	AttrCtime     = 1 << 6
	AttrMtimeNow  = 1 << 7 // setattr: mtime to the MDS's now (utimensat UTIME_NOW)
	AttrAtimeNow  = 1 << 8 // setattr: atime to the MDS's now
	AttrBtime     = 1 << 9
	AttrKillSguid = 1 << 10 // setattr: clear setuid/setgid (a write or chown by a non-owner)
	AttrNlink     = 1 << 11 // getattr, statlite
	AttrXattrs    = 1 << 12 // getattr: send the xattrs
)

// Request flags.
const (
	// RequestReplay: the client resends, to a rank that took over
	// after a failover, a request it had an unsafe reply for: the rank
	// finds it applied in the journal (or applies it) and answers safe.
	RequestReplay = 1 << 0
)

// ClientRequest is a metadata request (Ceph's MClientRequest). The
// operation-specific fields are used as MetaOp's constants say and are
// zero otherwise.
type ClientRequest struct {
	Tid uint64 // the client's request id, the same in every attempt
	// Attempt counts the client's sends of this request (after a
	// reconnect, 1 onwards); NumFwd the forwards between ranks it went
	// through (from ClientRequestForward), so a rank can tell a stale
	// copy.
	Attempt uint32
	NumFwd  uint32
	Op      MetaOp
	Flags   uint32 // Request*
	// OldestTid is the client's oldest request without a safe reply:
	// the MDS may forget the completed requests below it.
	OldestTid uint64
	Path      FilePath
	Path2     FilePath // link's existing file, rename's old name
	// The caller: the MDS checks permissions with these (and the
	// client key's path restriction).
	UID, GID uint32
	Groups   []uint32

	Mask   uint32 // Attr* bits (getattr, statlite, setattr)
	Mode   uint32 // setattr, create, mknod, mkdir
	SetUID uint32 // setattr
	SetGID uint32 // setattr
	Size   uint64 // setattr (truncate)
	Atime  FSTime // setattr
	Mtime  FSTime
	Ctime  FSTime
	Btime  FSTime
	// OpFlags: open and create flags (O_*), setxattr's flags, rename's
	// flags, lazyio's switch.
	OpFlags uint32
	Rdev    uint64 // mknod
	Target  string // symlink
	// WantCaps: the caps the client asks for with an open or create
	// (locker.WantedFor of its mode).
	WantCaps uint32
	// CreatedIno: the inode number the client took from the range the
	// MDS preallocated for it, for a create, mknod, mkdir or symlink (0:
	// the MDS picks), so a replayed create makes the same inode.
	CreatedIno uint64
	Name       string // xattr name
	Value      []byte // setxattr
	// Readdir: the fragment, where to continue (the last name returned
	// and its hash offset; empty and 0 for the first call), how many
	// entries and bytes at most, and whether to send each entry's
	// attributes and a cap (readdirplus).
	Frag       uint32
	Offset     uint64
	StartName  string
	MaxEntries uint32
	MaxBytes   uint32
	Plus       bool
	Layout     FSLayout // setlayout, setdirlayout
	Lock       FileLock // setfilelock, getfilelock
}

// Encode encodes m (version 1).
func (m *ClientRequest) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint64(m.Tid)
	e.Uvarint(uint64(m.Attempt))
	e.Uvarint(uint64(m.NumFwd))
	e.Uint16(uint16(m.Op))
	e.Uvarint(uint64(m.Flags))
	e.Uvarint(m.OldestTid)
	encodeFilePath(&e, m.Path)
	encodeFilePath(&e, m.Path2)
	e.Uvarint(uint64(m.UID))
	e.Uvarint(uint64(m.GID))
	e.Uvarint(uint64(len(m.Groups)))
	for _, g := range m.Groups {
		e.Uvarint(uint64(g))
	}
	for _, v := range [...]uint32{m.Mask, m.Mode, m.SetUID, m.SetGID} {
		e.Uvarint(uint64(v))
	}
	e.Uvarint(m.Size)
	for _, t := range [...]FSTime{m.Atime, m.Mtime, m.Ctime, m.Btime} {
		encodeFSTime(&e, t)
	}
	e.Uvarint(uint64(m.OpFlags))
	e.Uvarint(m.Rdev)
	e.String(m.Target)
	e.Uvarint(uint64(m.WantCaps))
	e.Uvarint(m.CreatedIno)
	e.String(m.Name)
	e.Bytes(m.Value)
	e.Uvarint(uint64(m.Frag))
	e.Uvarint(m.Offset)
	e.String(m.StartName)
	e.Uvarint(uint64(m.MaxEntries))
	e.Uvarint(uint64(m.MaxBytes))
	e.Bool(m.Plus)
	encodeFSLayout(&e, m.Layout)
	encodeFileLock(&e, m.Lock)
	e.End(mk)
	return e.Data()
}

// DecodeClientRequest decodes a ClientRequest. An unknown op is an error
// (the client and the MDS of one release agree on the ops; a newer
// client's op would be refused by an older MDS the same way). Contents
// are not checked against POSIX (an over-long name, a NUL in a path):
// the MDS answers those with their errno.
func DecodeClientRequest(b []byte) (*ClientRequest, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := &ClientRequest{Tid: d.Uint64(), Attempt: decodeU32(d, "attempt"), NumFwd: decodeU32(d, "forwards"),
		Op: MetaOp(d.Uint16()), Flags: decodeU32(d, "flags"), OldestTid: d.Uvarint(),
		Path: decodeFilePath(d), Path2: decodeFilePath(d), UID: decodeU32(d, "uid"), GID: decodeU32(d, "gid")}
	n := d.Count(1)
	if n > maxFSGroups {
		d.Fail(fmt.Errorf("%w: %d groups", encoding.ErrCorrupt, n))
	}
	if n > 0 && d.Err() == nil {
		m.Groups = make([]uint32, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			m.Groups[i] = decodeU32(d, "gid")
		}
	}
	m.Mask, m.Mode, m.SetUID, m.SetGID = decodeU32(d, "mask"), decodeU32(d, "mode"), decodeU32(d, "uid"), decodeU32(d, "gid")
	m.Size = d.Uvarint()
	m.Atime, m.Mtime, m.Ctime, m.Btime = decodeFSTime(d), decodeFSTime(d), decodeFSTime(d), decodeFSTime(d)
	m.OpFlags = decodeU32(d, "flags")
	m.Rdev = d.Uvarint()
	m.Target = d.String(maxFSPath)
	m.WantCaps = decodeU32(d, "caps")
	m.CreatedIno = d.Uvarint()
	m.Name = d.String(maxFSPath)
	m.Value = d.Bytes(maxFSXattr)
	m.Frag = decodeU32(d, "frag")
	m.Offset = d.Uvarint()
	m.StartName = d.String(maxFSPath)
	m.MaxEntries = decodeU32(d, "max entries")
	m.MaxBytes = decodeU32(d, "max bytes")
	m.Plus = d.Bool()
	m.Layout = decodeFSLayout(d)
	m.Lock = decodeFileLock(d, true)
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("wire: client request: %w", err)
	}
	if !m.Op.Known() {
		return nil, fmt.Errorf("wire: client request: %w: op %d", encoding.ErrCorrupt, uint16(m.Op))
	}
	return m, nil
}

// InoRange is Len inode numbers from Start.
type InoRange struct {
	Start, Len uint64
}

// TraceStep is one step of a reply's trace: the dentry Name (in the
// previous step's directory; "" for the first step, the request's base)
// and the inode it leads to, with the lease under which the client may
// cache the dentry (0 ms: none).
type TraceStep struct {
	Name    string
	Inode   InodeStat
	LeaseMs uint32
	// LeaseSeq numbers the dentry lease, for its revocation.
	LeaseSeq uint64
}

// DirEntry is one readdir entry: its name and inode (Ino and Mode's type
// always; every attribute and a cap with readdirplus), and its dentry
// lease.
type DirEntry struct {
	Name    string
	Inode   InodeStat
	LeaseMs uint32
	// Offset is the entry's position (its name's hash), a readdir
	// continuation (seekdir/telldir) may start after.
	Offset uint64
}

// DirListing is the part of a directory a readdir reply carries. To go
// on, the client sends the last entry's name and offset; End says the
// fragment has no more entries, Complete that this listing and those
// before it were all of the directory with nothing changed in between,
// so the client may answer lookups of absent names itself.
type DirListing struct {
	Frag     uint32
	Entries  []DirEntry
	End      bool
	Complete bool
}

// ClientReply is the MDS's answer to a ClientRequest (Ceph's
// MClientReply).
type ClientReply struct {
	Tid    uint64
	Op     MetaOp
	Result int32 // 0 or a negative errno
	// Safe: the change is in the journal and survives the MDS's death.
	// A change is answered twice, unsafe (applied in memory; the client
	// may proceed but keeps the request to replay after a failover) and
	// then safe; a read, or an error, once, safe.
	Safe bool
	// Trace: the inodes from the request's base to its target (for a
	// rename or link, to the first path's target), each with this
	// client's cap.
	Trace []TraceStep
	// Approx: the Attr* fields of the target that may be stale (a
	// statlite that did not ask for them).
	Approx uint32
	// CreatedIno: the inode a create, mknod, mkdir or symlink made.
	CreatedIno uint64
	// Delegated: inode numbers the MDS hands the client for its next
	// creates (ClientRequest.CreatedIno), given with a create's reply
	// and refilled as the client uses them.
	Delegated []InoRange
	Dir       DirListing // readdir
	Data      []byte     // getxattr, listxattr
	Lock      FileLock   // getfilelock
}

// Encode encodes m (version 1).
func (m *ClientReply) Encode() []byte {
	var e encoding.Encoder
	// About 130 bytes an inode without xattrs: one allocation for a
	// readdirplus of a thousand entries, not a dozen growths.
	e.Grow(64 + len(m.Data) + 160*(len(m.Trace)+len(m.Dir.Entries)))
	mk := e.Begin(1, 1)
	e.Uint64(m.Tid)
	e.Uint16(uint16(m.Op))
	e.Varint(int64(m.Result))
	e.Bool(m.Safe)
	e.Uvarint(uint64(len(m.Trace)))
	for i := range m.Trace {
		s := &m.Trace[i]
		e.String(s.Name)
		encodeInodeStat(&e, &s.Inode)
		e.Uvarint(uint64(s.LeaseMs))
		e.Uvarint(s.LeaseSeq)
	}
	e.Uvarint(uint64(m.Approx))
	e.Uvarint(m.CreatedIno)
	e.Uvarint(uint64(len(m.Delegated)))
	for _, r := range m.Delegated {
		e.Uvarint(r.Start)
		e.Uvarint(r.Len)
	}
	e.Uvarint(uint64(m.Dir.Frag))
	e.Uvarint(uint64(len(m.Dir.Entries)))
	for i := range m.Dir.Entries {
		de := &m.Dir.Entries[i]
		e.String(de.Name)
		encodeInodeStat(&e, &de.Inode)
		e.Uvarint(uint64(de.LeaseMs))
		e.Uvarint(de.Offset)
	}
	e.Bool(m.Dir.End)
	e.Bool(m.Dir.Complete)
	e.Bytes(m.Data)
	encodeFileLock(&e, m.Lock)
	e.End(mk)
	return e.Data()
}

// DecodeClientReply decodes a ClientReply.
func DecodeClientReply(b []byte) (*ClientReply, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := &ClientReply{Tid: d.Uint64(), Op: MetaOp(d.Uint16()), Result: decodeResult(d), Safe: d.Bool()}
	n := d.Count(1 + minInodeStatLen + 2)
	if n > maxFSTrace {
		d.Fail(fmt.Errorf("%w: trace of %d inodes", encoding.ErrCorrupt, n))
	}
	if n > 0 && d.Err() == nil {
		m.Trace = make([]TraceStep, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			m.Trace[i] = TraceStep{Name: d.String(maxFSPath), Inode: decodeInodeStat(d),
				LeaseMs: decodeU32(d, "lease"), LeaseSeq: d.Uvarint()}
		}
	}
	m.Approx = decodeU32(d, "approx")
	m.CreatedIno = d.Uvarint()
	n = d.Count(2)
	if n > maxFSInoRanges {
		d.Fail(fmt.Errorf("%w: %d inode ranges", encoding.ErrCorrupt, n))
	}
	if n > 0 && d.Err() == nil {
		m.Delegated = make([]InoRange, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			m.Delegated[i] = InoRange{Start: d.Uvarint(), Len: d.Uvarint()}
		}
	}
	m.Dir.Frag = decodeU32(d, "frag")
	n = d.Count(1 + minInodeStatLen + 2)
	if n > maxFSEntries {
		d.Fail(fmt.Errorf("%w: %d directory entries", encoding.ErrCorrupt, n))
	}
	if n > 0 && d.Err() == nil {
		m.Dir.Entries = make([]DirEntry, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			m.Dir.Entries[i] = DirEntry{Name: d.String(maxFSPath), Inode: decodeInodeStat(d),
				LeaseMs: decodeU32(d, "lease"), Offset: d.Uvarint()}
		}
	}
	m.Dir.End = d.Bool()
	m.Dir.Complete = d.Bool()
	m.Data = d.Bytes(maxFSXattrData)
	m.Lock = decodeFileLock(d, true)
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("wire: client reply: %w", err)
	}
	if !m.Op.Known() {
		return nil, fmt.Errorf("wire: client reply: %w: op %d", encoding.ErrCorrupt, uint16(m.Op))
	}
	return m, nil
}

// ClientRequestForward tells a client that the rank it asked does not
// own the request's path (Ceph's MClientRequestForward; part II's
// several active ranks): resend request Tid to rank Dest with NumFwd as
// the request's forward count. MustResend is always set by a rank that
// did not pass the request on itself.
type ClientRequestForward struct {
	Tid        uint64
	Dest       int32
	NumFwd     uint32
	MustResend bool
}

// Encode encodes m (version 1).
func (m ClientRequestForward) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint64(m.Tid)
	e.Varint(int64(m.Dest))
	e.Uvarint(uint64(m.NumFwd))
	e.Bool(m.MustResend)
	e.End(mk)
	return e.Data()
}

// DecodeClientRequestForward decodes a ClientRequestForward; a negative
// rank is an error.
func DecodeClientRequestForward(b []byte) (ClientRequestForward, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := ClientRequestForward{Tid: d.Uint64(), Dest: decodeI32(d, "rank"), NumFwd: decodeU32(d, "forwards"), MustResend: d.Bool()}
	d.End()
	if err := d.Finish(); err != nil {
		return ClientRequestForward{}, fmt.Errorf("wire: client request forward: %w", err)
	}
	if m.Dest < 0 {
		return ClientRequestForward{}, fmt.Errorf("wire: client request forward: %w: rank %d", encoding.ErrCorrupt, m.Dest)
	}
	return m, nil
}

// IsPosixACL reports whether name is one of the POSIX ACL extended
// attributes. Cuttle does not enforce ACLs, so the MDS refuses to store
// them (EOPNOTSUPP), as a file system mounted without ACL support does,
// and clients answer reads of them with EOPNOTSUPP without asking.
func IsPosixACL(name string) bool {
	return name == "system.posix_acl_access" || name == "system.posix_acl_default"
}
