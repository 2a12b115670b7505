package wire

import (
	"fmt"
	"math"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
)

// The file-system client protocol, between a file-system client
// (fsclient, cuttle mount) and the MDS rank that owns the subtree it
// works in, after CephFS's MClientSession, MClientRequest, MClientReply,
// MClientRequestForward, MClientCaps and MClientReconnect. This file
// holds what the messages share (times, paths, file locks, layouts and
// the inode attributes of a reply) and the session messages;
// fsrequest.go has requests, replies and forwards, fscaps.go caps and
// reconnects. docs/FORMATS.md lists every field; docs/CAPABILITIES.md
// says what the cap fields mean.
//
// Caps travel as the uint32 bit sets of internal/mds/locker.Caps (the
// CephFS layout of the bits); wire does not interpret them.

// Limits on decoded file-system messages. They bound what a hostile
// peer can make a decoder allocate; they are wider than POSIX's (a name
// of 256 bytes or a path with a NUL decodes, and the MDS answers it with
// ENAMETOOLONG or EINVAL, not a dropped message).
const (
	maxFSPath      = 64 << 10 // a relative path, symlink target or dentry name
	maxFSMeta      = 4 << 10  // hostname, mount root, version, reason, pool namespace
	maxFSGroups    = 1 << 16  // supplementary groups (Linux's NGROUPS_MAX)
	maxFSXattr     = 1 << 20  // one extended attribute's value (the MDS refuses more than 64 KiB)
	maxFSXattrs    = 1 << 16  // extended attributes of one inode
	maxFSXattrData = 16 << 20 // getxattr's value or listxattr's names in a reply
	maxFSTrace     = 4096     // inodes of a reply's trace
	maxFSEntries   = 1 << 20  // entries of one readdir reply, caps or locks of one reconnect
	maxFSInoRanges = 1024     // inode ranges delegated in one reply
)

// FSTime is a file time: seconds since the Unix epoch (signed, 64 bits,
// so times past 2038 and 2106 and before 1970 are exact) and
// nanoseconds, below 1e9. Encoded as varint seconds, uvarint
// nanoseconds.
type FSTime struct {
	Sec  int64
	Nsec uint32
}

// FSTimeOf returns t as an FSTime.
func FSTimeOf(t time.Time) FSTime {
	return FSTime{Sec: t.Unix(), Nsec: uint32(t.Nanosecond())}
}

// Time returns t as a time.Time (in UTC). Seconds beyond what time.Time
// holds (about ±292 billion years) saturate there.
func (t FSTime) Time() time.Time {
	return time.Unix(t.Sec, int64(t.Nsec)).UTC()
}

func encodeFSTime(e *encoding.Encoder, t FSTime) {
	e.Varint(t.Sec)
	e.Uvarint(uint64(t.Nsec))
}

func decodeFSTime(d *encoding.Decoder) FSTime {
	t := FSTime{Sec: d.Varint()}
	ns := d.Uvarint()
	if ns >= 1e9 {
		d.Fail(fmt.Errorf("%w: %d nanoseconds", encoding.ErrCorrupt, ns))
		return FSTime{}
	}
	t.Nsec = uint32(ns)
	return t
}

// decodeU32 reads a uvarint that must fit in 32 bits.
func decodeU32(d *encoding.Decoder, what string) uint32 {
	v := d.Uvarint()
	if v > math.MaxUint32 {
		d.Fail(fmt.Errorf("%w: %s %d out of range", encoding.ErrCorrupt, what, v))
		return 0
	}
	return uint32(v)
}

// decodeI32 reads a varint that must fit in 32 bits.
func decodeI32(d *encoding.Decoder, what string) int32 {
	v := d.Varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.Fail(fmt.Errorf("%w: %s %d out of range", encoding.ErrCorrupt, what, v))
		return 0
	}
	return int32(v)
}

// FilePath names a file as CephFS's filepath does: a base inode the
// client knows (the root, 1, or any inode it holds a cap on) and a
// relative path from it ("" names the base itself). The MDS resolves it
// on the rank that owns the subtree, forwarding if another rank does.
type FilePath struct {
	Ino  uint64
	Path string
}

func encodeFilePath(e *encoding.Encoder, p FilePath) {
	e.Uvarint(p.Ino)
	e.String(p.Path)
}

func decodeFilePath(d *encoding.Decoder) FilePath {
	return FilePath{Ino: d.Uvarint(), Path: d.String(maxFSPath)}
}

// FSLayout is a file's layout as the wire carries it: striper/layout's
// fields (wire sits below the striper and does not import it; the MDS
// and client convert, and the striper validates).
type FSLayout struct {
	ObjectSize    uint32
	StripeUnit    uint32
	StripeCount   uint32
	Pool          int64
	PoolNamespace string
}

func encodeFSLayout(e *encoding.Encoder, l FSLayout) {
	e.Uvarint(uint64(l.ObjectSize))
	e.Uvarint(uint64(l.StripeUnit))
	e.Uvarint(uint64(l.StripeCount))
	e.Varint(l.Pool)
	e.String(l.PoolNamespace)
}

func decodeFSLayout(d *encoding.Decoder) FSLayout {
	return FSLayout{
		ObjectSize:    decodeU32(d, "object size"),
		StripeUnit:    decodeU32(d, "stripe unit"),
		StripeCount:   decodeU32(d, "stripe count"),
		Pool:          d.Varint(),
		PoolNamespace: d.String(maxFSMeta),
	}
}

// File lock kinds and types (FileLock).
const (
	LockFcntl = 1 // POSIX record lock (fcntl F_SETLK): per process, byte ranges
	LockFlock = 2 // BSD lock (flock): per open file, whole file

	LockShared    = 1 // F_RDLCK, LOCK_SH
	LockExclusive = 2 // F_WRLCK, LOCK_EX
	LockUnlock    = 3 // F_UNLCK, LOCK_UN; getfilelock's answer when nothing conflicts
)

// FileLock is an advisory lock, as setfilelock/getfilelock carry it and
// a reconnect reports it: Length 0 runs to the end of the file (a flock
// has Start and Length 0); Owner tells one client's lock owners apart
// (the fcntl owner or the open file), PID is reported back by
// getfilelock (F_GETLK's l_pid); Wait asks the MDS to queue a
// conflicting setfilelock (F_SETLKW, flock without LOCK_NB) instead of
// failing it with EAGAIN.
type FileLock struct {
	Kind   uint8
	Type   uint8
	Start  uint64
	Length uint64
	PID    uint64
	Owner  uint64
	Wait   bool
}

func encodeFileLock(e *encoding.Encoder, l FileLock) {
	e.Uint8(l.Kind)
	e.Uint8(l.Type)
	e.Uvarint(l.Start)
	e.Uvarint(l.Length)
	e.Uvarint(l.PID)
	e.Uvarint(l.Owner)
	e.Bool(l.Wait)
}

// decodeFileLock reads a lock; a zero one (no lock) is allowed where
// optional is set.
func decodeFileLock(d *encoding.Decoder, optional bool) FileLock {
	l := FileLock{Kind: d.Uint8(), Type: d.Uint8(), Start: d.Uvarint(), Length: d.Uvarint(),
		PID: d.Uvarint(), Owner: d.Uvarint(), Wait: d.Bool()}
	if optional && l == (FileLock{}) {
		return l
	}
	if l.Kind < LockFcntl || l.Kind > LockFlock || l.Type < LockShared || l.Type > LockUnlock {
		d.Fail(fmt.Errorf("%w: file lock kind %d type %d", encoding.ErrCorrupt, l.Kind, l.Type))
	}
	return l
}

// XattrKV is one extended attribute.
type XattrKV struct {
	Name  string
	Value []byte
}

func encodeXattrs(e *encoding.Encoder, xs []XattrKV) {
	e.Uvarint(uint64(len(xs)))
	for _, x := range xs {
		e.String(x.Name)
		e.Bytes(x.Value)
	}
}

func decodeXattrs(d *encoding.Decoder) []XattrKV {
	n := d.Count(2)
	if n > maxFSXattrs {
		d.Fail(fmt.Errorf("%w: %d xattrs", encoding.ErrCorrupt, n))
	}
	if n == 0 || d.Err() != nil {
		return nil
	}
	xs := make([]XattrKV, n)
	for i := 0; i < n && d.Err() == nil; i++ {
		xs[i] = XattrKV{Name: d.String(maxFSPath), Value: d.Bytes(maxFSXattr)}
	}
	return xs
}

// InodeCap is a cap as a reply hands it out with an inode (on open and
// create, and the pin of every inode in a trace): ID 0 means no cap.
// Rank is the rank that made the cap id (it is also in the id's low 16
// bits); Seq and IssueSeq start the cap's sequence as
// docs/CAPABILITIES.md describes.
type InodeCap struct {
	ID       uint64
	Seq      uint64
	IssueSeq uint64
	Caps     uint32
	Wanted   uint32
	Rank     int32
	Lazy     bool
}

func encodeInodeCap(e *encoding.Encoder, c InodeCap) {
	e.Uvarint(c.ID)
	e.Uvarint(c.Seq)
	e.Uvarint(c.IssueSeq)
	e.Uvarint(uint64(c.Caps))
	e.Uvarint(uint64(c.Wanted))
	e.Varint(int64(c.Rank))
	e.Bool(c.Lazy)
}

func decodeInodeCap(d *encoding.Decoder) InodeCap {
	return InodeCap{ID: d.Uvarint(), Seq: d.Uvarint(), IssueSeq: d.Uvarint(),
		Caps: decodeU32(d, "caps"), Wanted: decodeU32(d, "wanted"), Rank: decodeI32(d, "rank"), Lazy: d.Bool()}
}

// InodeStat is an inode's attributes as a reply carries them (in its
// trace and readdirplus entries), with the cap this client holds on it.
// Ino 0 in a trace is a negative dentry: the name does not exist.
type InodeStat struct {
	Ino     uint64
	Version uint64 // the MDS's inode version, raised by every change
	// ChangeAttr is the change attribute (NFSv4's, statx's
	// STATX_CHANGE_COOKIE): raised by every change of data or metadata.
	ChangeAttr uint64
	Mode       uint32 // type and permission bits, as st_mode
	UID, GID   uint32
	Nlink      uint32
	Size       uint64
	MaxSize    uint64 // how far a writer may extend before asking the MDS
	Rdev       uint64 // device number of a device node
	Atime      FSTime
	Mtime      FSTime
	Ctime      FSTime
	Btime      FSTime // birth time
	Layout     FSLayout
	Symlink    string // a symlink's target
	// XattrVersion is raised by every xattr change; Xattrs are sent
	// when the client may cache them (Xs), with the version.
	XattrVersion uint64
	Xattrs       []XattrKV
	// Directories: entries (files, subdirectories), and the recursive
	// statistics of the subtree (bytes, files, subdirectories) that
	// quotas and df use.
	Files, Subdirs           uint64
	RBytes, RFiles, RSubdirs uint64
	// Quota (0: none), set through the ceph.quota.* virtual xattrs.
	QuotaMaxBytes, QuotaMaxFiles uint64
	Cap                          InodeCap
}

// minInodeStatLen is the fewest bytes an encoded InodeStat takes (an
// envelope header).
const minInodeStatLen = 6

func encodeInodeStat(e *encoding.Encoder, s *InodeStat) {
	mk := e.Begin(1, 1)
	e.Uvarint(s.Ino)
	e.Uvarint(s.Version)
	e.Uvarint(s.ChangeAttr)
	e.Uvarint(uint64(s.Mode))
	e.Uvarint(uint64(s.UID))
	e.Uvarint(uint64(s.GID))
	e.Uvarint(uint64(s.Nlink))
	e.Uvarint(s.Size)
	e.Uvarint(s.MaxSize)
	e.Uvarint(s.Rdev)
	for _, t := range [...]FSTime{s.Atime, s.Mtime, s.Ctime, s.Btime} {
		encodeFSTime(e, t)
	}
	encodeFSLayout(e, s.Layout)
	e.String(s.Symlink)
	e.Uvarint(s.XattrVersion)
	encodeXattrs(e, s.Xattrs)
	for _, v := range [...]uint64{s.Files, s.Subdirs, s.RBytes, s.RFiles, s.RSubdirs, s.QuotaMaxBytes, s.QuotaMaxFiles} {
		e.Uvarint(v)
	}
	encodeInodeCap(e, s.Cap)
	e.End(mk)
}

func decodeInodeStat(d *encoding.Decoder) InodeStat {
	d.Begin(1)
	s := InodeStat{Ino: d.Uvarint(), Version: d.Uvarint(), ChangeAttr: d.Uvarint(),
		Mode: decodeU32(d, "mode"), UID: decodeU32(d, "uid"), GID: decodeU32(d, "gid"), Nlink: decodeU32(d, "nlink"),
		Size: d.Uvarint(), MaxSize: d.Uvarint(), Rdev: d.Uvarint()}
	s.Atime, s.Mtime, s.Ctime, s.Btime = decodeFSTime(d), decodeFSTime(d), decodeFSTime(d), decodeFSTime(d)
	s.Layout = decodeFSLayout(d)
	s.Symlink = d.String(maxFSPath)
	s.XattrVersion = d.Uvarint()
	s.Xattrs = decodeXattrs(d)
	for _, p := range [...]*uint64{&s.Files, &s.Subdirs, &s.RBytes, &s.RFiles, &s.RSubdirs, &s.QuotaMaxBytes, &s.QuotaMaxFiles} {
		*p = d.Uvarint()
	}
	s.Cap = decodeInodeCap(d)
	d.End()
	return s
}

// SessionOp says what a ClientSession does.
type SessionOp uint8

// Session operations. A client opens a session with a rank before its
// first request there, renews it (and with it its caps) within the
// session timeout, and closes it on unmount; a rank that hears nothing
// for the timeout marks it stale, and after the autoclose time ends it
// (the client's caps are revoked and, if it could write, it is fenced).
const (
	SessionRequestOpen  SessionOp = 1  // client -> MDS: open (Client, ClientID, metadata)
	SessionOpen         SessionOp = 2  // MDS -> client: opened (Seq, TimeoutSec)
	SessionRequestRenew SessionOp = 3  // client -> MDS: renew caps (Seq: the renewal's number)
	SessionRenew        SessionOp = 4  // MDS -> client: renewed (Seq echoed)
	SessionRequestClose SessionOp = 5  // client -> MDS: close (Seq: the last MDS message seen)
	SessionClose        SessionOp = 6  // MDS -> client: closed (Reason if the MDS ended it)
	SessionStale        SessionOp = 7  // MDS -> client: no renewal in time: caps are suspended until the client renews
	SessionReject       SessionOp = 8  // MDS -> client: open refused (Reason: blocklisted, bad root, ...)
	SessionFlushMsg     SessionOp = 9  // MDS -> client: answer once the messages before this one are handled (Seq)
	SessionFlushMsgAck  SessionOp = 10 // client -> MDS: done (Seq echoed)
	SessionRecallState  SessionOp = 11 // MDS -> client: release caps down to MaxCaps
	SessionRequestFlush SessionOp = 12 // MDS -> client: flush dirty caps now (before a failover or a snapshot)

	sessionOpLast = SessionRequestFlush
)

var sessionOpNames = [...]string{"", "request_open", "open", "request_renewcaps", "renewcaps",
	"request_close", "close", "stale", "reject", "flushmsg", "flushmsg_ack", "recall_state", "request_flush"}

func (op SessionOp) String() string {
	if op >= 1 && op <= sessionOpLast {
		return sessionOpNames[op]
	}
	return fmt.Sprintf("session-op-%d", uint8(op))
}

// ClientSession is a session message (Ceph's MClientSession). Which
// fields matter depends on Op; the others are zero.
type ClientSession struct {
	Op SessionOp
	// Seq: a renewal's or flushmsg's number, echoed in the answer; in
	// SessionOpen the MDS's message sequence the client counts from.
	Seq uint64
	// Open: the client's entity name and id (its cephx global id, the
	// id caps and locks are kept under), and its metadata.
	Client   string
	ClientID uint64
	Hostname string
	Root     string // the mount's root path: the MDS checks the client key's path restriction
	Version  string // the client's software version
	Features uint64 // protocol features the client supports
	// TimeoutSec (SessionOpen): the session timeout the client renews
	// within (mds_session_timeout).
	TimeoutSec uint32
	// MaxCaps (SessionRecallState): how many caps the client may keep.
	MaxCaps uint64
	Reason  string // SessionReject, SessionClose
	// Instance (SessionRequestOpen, version 2): the client's RADOS
	// instance, as rados.Conn.Instance names it (ENTITY/INCARNATION),
	// the one its file data goes through: what the MDS blocklists when
	// it evicts the client, so that the OSDs refuse its writes too.
	Instance string
}

// Encode encodes m (version 2: Instance).
func (m ClientSession) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	e.Uint8(uint8(m.Op))
	e.Uvarint(m.Seq)
	e.String(m.Client)
	e.Uvarint(m.ClientID)
	e.String(m.Hostname)
	e.String(m.Root)
	e.String(m.Version)
	e.Uint64(m.Features)
	e.Uvarint(uint64(m.TimeoutSec))
	e.Uvarint(m.MaxCaps)
	e.String(m.Reason)
	e.String(m.Instance)
	e.End(mk)
	return e.Data()
}

// DecodeClientSession decodes a ClientSession (versions 1 and 2). An op
// it does not know is an error.
func DecodeClientSession(b []byte) (ClientSession, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	m := ClientSession{Op: SessionOp(d.Uint8()), Seq: d.Uvarint(), Client: d.String(maxClient), ClientID: d.Uvarint(),
		Hostname: d.String(maxFSMeta), Root: d.String(maxFSPath), Version: d.String(maxFSMeta), Features: d.Uint64(),
		TimeoutSec: decodeU32(d, "timeout"), MaxCaps: d.Uvarint(), Reason: d.String(maxFSMeta)}
	if v >= 2 {
		m.Instance = d.String(maxClient)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return ClientSession{}, fmt.Errorf("wire: client session: %w", err)
	}
	if m.Op < 1 || m.Op > sessionOpLast {
		return ClientSession{}, fmt.Errorf("wire: client session: %w: op %d", encoding.ErrCorrupt, m.Op)
	}
	return m, nil
}
