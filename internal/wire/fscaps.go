package wire

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// Capabilities, dentry leases and reconnects of the file-system client
// protocol (fsclientmsg.go). docs/CAPABILITIES.md says what the fields
// mean; internal/mds/locker takes them as events (Ack, Want, Release,
// Reconnect) and makes the MDS's (ActionGrant, ActionRevoke,
// ActionFlushAck).

// CapOp says what a ClientCaps does.
type CapOp uint8

// Cap operations.
const (
	// CapGrant (MDS -> client): Caps is the whole issued set now, with
	// Seq and IssueSeq (= Seq); the attributes are the MDS's (a client
	// granted Fs or Fx starts from them), including the client's flushes
	// up to FlushTID (also in a CapRevoke; 0 from an MDS that does not
	// say).
	CapGrant CapOp = 1
	// CapRevoke (MDS -> client): Caps is the new issued set; the bits
	// the client held beyond it are revoked. It stops using them,
	// flushes what they covered and answers CapAck with Seq. IssueSeq =
	// Seq when the message also grants bits.
	CapRevoke CapOp = 2
	// CapUpdate (client -> MDS): the client now wants Wanted (IssueSeq:
	// the last it saw); issued bits it no longer wants are given back.
	// Dirty (non-zero) carries a flush as CapFlush does.
	CapUpdate CapOp = 3
	// CapFlush (client -> MDS): dirty metadata, Size, Mtime, Atime,
	// Ctime, Mode, UID, GID, Xattrs changed under Dirty, FlushTID to be
	// acked; sent without waiting for a revocation (fsync).
	CapFlush CapOp = 4
	// CapFlushAck (MDS -> client): flush FlushTID is journaled; the
	// attributes are the inode's now.
	CapFlushAck CapOp = 5
	// CapRelease (client -> MDS): the client dropped cap CapID (last
	// close), after flushing (Dirty, FlushTID); ignored by the MDS if
	// IssueSeq is older than the cap's (a grant crossed it).
	CapRelease CapOp = 6
	// CapExport (MDS -> client): the cap moved to rank Peer.Rank (part
	// II: a subtree migrated); wait for its CapImport.
	CapExport CapOp = 7
	// CapImport (MDS -> client): this rank now holds the cap, as Peer
	// (the exporter's cap id, seq and migrate seq) described it.
	CapImport CapOp = 8
	// CapAck (client -> MDS): the client no longer uses the bits
	// revoked up to Seq; Dirty, FlushTID and the attributes carry the
	// flush of what they covered.
	CapAck CapOp = 9

	capOpLast = CapAck
)

var capOpNames = [...]string{"", "grant", "revoke", "update", "flush", "flush_ack", "release", "export", "import", "ack"}

func (op CapOp) String() string {
	if op >= 1 && op <= capOpLast {
		return capOpNames[op]
	}
	return fmt.Sprintf("cap-op-%d", uint8(op))
}

// CapPeer is, in a CapExport, where the cap went, and in a CapImport,
// where it came from: the other rank's cap id, seq and migrate seq.
type CapPeer struct {
	Rank       int32
	CapID      uint64
	Seq        uint64
	MigrateSeq uint32
}

// ClientCaps is a cap message (Ceph's MClientCaps), about client's cap
// CapID on inode Ino. Which fields matter depends on Op.
type ClientCaps struct {
	Op    CapOp
	Ino   uint64
	CapID uint64
	// Rank is the rank that made CapID (a rank resumed after a
	// failover keeps the ids clients reported).
	Rank     int32
	Seq      uint64
	IssueSeq uint64
	// MigrateSeq is raised each time the cap moves between ranks, so a
	// message from the rank it left is recognised as stale.
	MigrateSeq uint32
	Caps       uint32 // issued (from the MDS), or what the client holds (from it)
	Wanted     uint32
	Dirty      uint32 // the bits the flushed attributes were changed under; 0: no flush
	Lazy       bool   // the cap is open O_LAZY (Fl)
	FlushTID   uint64
	// OldestFlushTID is the client's oldest flush not yet acked: the
	// MDS may forget the acked flush ids below it.
	OldestFlushTID uint64
	Size           uint64
	MaxSize        uint64 // a writer may extend the file this far before asking for more
	Mtime          FSTime
	Atime          FSTime
	Ctime          FSTime
	Btime          FSTime
	ChangeAttr     uint64
	Mode           uint32
	UID, GID       uint32
	Nlink          uint32
	XattrVersion   uint64
	Xattrs         []XattrKV // with Xs granted or flushed under Xx
	Layout         FSLayout  // with a grant: the file's layout
	Peer           CapPeer   // CapExport, CapImport
}

// Encode encodes m (version 1).
func (m *ClientCaps) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint8(uint8(m.Op))
	e.Uvarint(m.Ino)
	e.Uvarint(m.CapID)
	e.Varint(int64(m.Rank))
	e.Uvarint(m.Seq)
	e.Uvarint(m.IssueSeq)
	e.Uvarint(uint64(m.MigrateSeq))
	e.Uvarint(uint64(m.Caps))
	e.Uvarint(uint64(m.Wanted))
	e.Uvarint(uint64(m.Dirty))
	e.Bool(m.Lazy)
	e.Uvarint(m.FlushTID)
	e.Uvarint(m.OldestFlushTID)
	e.Uvarint(m.Size)
	e.Uvarint(m.MaxSize)
	for _, t := range [...]FSTime{m.Mtime, m.Atime, m.Ctime, m.Btime} {
		encodeFSTime(&e, t)
	}
	e.Uvarint(m.ChangeAttr)
	for _, v := range [...]uint32{m.Mode, m.UID, m.GID, m.Nlink} {
		e.Uvarint(uint64(v))
	}
	e.Uvarint(m.XattrVersion)
	encodeXattrs(&e, m.Xattrs)
	encodeFSLayout(&e, m.Layout)
	e.Varint(int64(m.Peer.Rank))
	e.Uvarint(m.Peer.CapID)
	e.Uvarint(m.Peer.Seq)
	e.Uvarint(uint64(m.Peer.MigrateSeq))
	e.End(mk)
	return e.Data()
}

// DecodeClientCaps decodes a ClientCaps. An unknown op or a negative
// rank is an error.
func DecodeClientCaps(b []byte) (*ClientCaps, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := &ClientCaps{Op: CapOp(d.Uint8()), Ino: d.Uvarint(), CapID: d.Uvarint(), Rank: decodeI32(d, "rank"),
		Seq: d.Uvarint(), IssueSeq: d.Uvarint(), MigrateSeq: decodeU32(d, "migrate seq"),
		Caps: decodeU32(d, "caps"), Wanted: decodeU32(d, "wanted"), Dirty: decodeU32(d, "dirty"), Lazy: d.Bool(),
		FlushTID: d.Uvarint(), OldestFlushTID: d.Uvarint(), Size: d.Uvarint(), MaxSize: d.Uvarint()}
	m.Mtime, m.Atime, m.Ctime, m.Btime = decodeFSTime(d), decodeFSTime(d), decodeFSTime(d), decodeFSTime(d)
	m.ChangeAttr = d.Uvarint()
	m.Mode, m.UID, m.GID, m.Nlink = decodeU32(d, "mode"), decodeU32(d, "uid"), decodeU32(d, "gid"), decodeU32(d, "nlink")
	m.XattrVersion = d.Uvarint()
	m.Xattrs = decodeXattrs(d)
	m.Layout = decodeFSLayout(d)
	m.Peer = CapPeer{Rank: decodeI32(d, "peer rank"), CapID: d.Uvarint(), Seq: d.Uvarint(), MigrateSeq: decodeU32(d, "peer migrate seq")}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("wire: client caps: %w", err)
	}
	if m.Op < 1 || m.Op > capOpLast {
		return nil, fmt.Errorf("wire: client caps: %w: op %d", encoding.ErrCorrupt, m.Op)
	}
	if m.Rank < 0 || m.Peer.Rank < 0 {
		return nil, fmt.Errorf("wire: client caps: %w: rank %d, peer rank %d", encoding.ErrCorrupt, m.Rank, m.Peer.Rank)
	}
	return m, nil
}

// LeaseOp says what a ClientLease does.
type LeaseOp uint8

// Dentry lease operations.
const (
	LeaseRevoke    LeaseOp = 1 // MDS -> client: stop trusting the dentry (it changes); answer LeaseRevokeAck
	LeaseRevokeAck LeaseOp = 2 // client -> MDS
	LeaseRenew     LeaseOp = 3 // client -> MDS: extend it; the MDS answers LeaseRenew with DurationMs
	LeaseRelease   LeaseOp = 4 // client -> MDS: the client dropped it
	leaseOpLast            = LeaseRelease
)

// ClientLease is a message about the lease a client holds on the
// dentry Name of directory Ino (Ceph's MClientLease), from a reply's
// trace (TraceStep.LeaseSeq and LeaseMs).
type ClientLease struct {
	Op         LeaseOp
	Ino        uint64
	Name       string
	Seq        uint64
	DurationMs uint32
}

// Encode encodes m (version 1).
func (m ClientLease) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint8(uint8(m.Op))
	e.Uvarint(m.Ino)
	e.String(m.Name)
	e.Uvarint(m.Seq)
	e.Uvarint(uint64(m.DurationMs))
	e.End(mk)
	return e.Data()
}

// DecodeClientLease decodes a ClientLease; an unknown op is an error.
func DecodeClientLease(b []byte) (ClientLease, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := ClientLease{Op: LeaseOp(d.Uint8()), Ino: d.Uvarint(), Name: d.String(maxFSPath), Seq: d.Uvarint(),
		DurationMs: decodeU32(d, "duration")}
	d.End()
	if err := d.Finish(); err != nil {
		return ClientLease{}, fmt.Errorf("wire: client lease: %w", err)
	}
	if m.Op < 1 || m.Op > leaseOpLast {
		return ClientLease{}, fmt.Errorf("wire: client lease: %w: op %d", encoding.ErrCorrupt, m.Op)
	}
	return m, nil
}

// ReconnectCap is one cap a client reports to a rank that took over
// after a failover (locker.ReconnectCap): the cap as the client knows
// it, what it wants, the path of its inode (from the root, so the new
// rank can load it), and the flush it has not seen acked (Dirty 0:
// none).
type ReconnectCap struct {
	Ino      uint64
	CapID    uint64
	Seq      uint64
	IssueSeq uint64
	Issued   uint32
	Wanted   uint32
	Lazy     bool
	Path     FilePath
	Dirty    uint32
	FlushTID uint64
	Size     uint64
	Mtime    FSTime
}

// ReconnectLock is one file lock a client holds, reported on reconnect.
type ReconnectLock struct {
	Ino  uint64
	Lock FileLock
}

// ClientReconnect is a client's report to a rank in its reconnect phase
// (Ceph's MClientReconnect): its caps and file locks. A client with many
// sends several, each but the last with More set. Unanswered requests
// are resent afterwards as ClientRequests (RequestReplay for those with
// an unsafe reply).
type ClientReconnect struct {
	Caps  []ReconnectCap
	Locks []ReconnectLock
	More  bool
}

// minReconnectCapLen and minReconnectLockLen are the fewest bytes an
// encoded ReconnectCap and ReconnectLock take.
const (
	minReconnectCapLen  = 15
	minReconnectLockLen = 8
)

// Encode encodes m (version 1).
func (m *ClientReconnect) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uvarint(uint64(len(m.Caps)))
	for i := range m.Caps {
		c := &m.Caps[i]
		e.Uvarint(c.Ino)
		e.Uvarint(c.CapID)
		e.Uvarint(c.Seq)
		e.Uvarint(c.IssueSeq)
		e.Uvarint(uint64(c.Issued))
		e.Uvarint(uint64(c.Wanted))
		e.Bool(c.Lazy)
		encodeFilePath(&e, c.Path)
		e.Uvarint(uint64(c.Dirty))
		e.Uvarint(c.FlushTID)
		e.Uvarint(c.Size)
		encodeFSTime(&e, c.Mtime)
	}
	e.Uvarint(uint64(len(m.Locks)))
	for _, l := range m.Locks {
		e.Uvarint(l.Ino)
		encodeFileLock(&e, l.Lock)
	}
	e.Bool(m.More)
	e.End(mk)
	return e.Data()
}

// DecodeClientReconnect decodes a ClientReconnect.
func DecodeClientReconnect(b []byte) (*ClientReconnect, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := &ClientReconnect{}
	n := d.Count(minReconnectCapLen)
	if n > maxFSEntries {
		d.Fail(fmt.Errorf("%w: %d caps", encoding.ErrCorrupt, n))
	}
	if n > 0 && d.Err() == nil {
		m.Caps = make([]ReconnectCap, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			c := &m.Caps[i]
			c.Ino, c.CapID, c.Seq, c.IssueSeq = d.Uvarint(), d.Uvarint(), d.Uvarint(), d.Uvarint()
			c.Issued, c.Wanted, c.Lazy = decodeU32(d, "issued"), decodeU32(d, "wanted"), d.Bool()
			c.Path = decodeFilePath(d)
			c.Dirty, c.FlushTID, c.Size = decodeU32(d, "dirty"), d.Uvarint(), d.Uvarint()
			c.Mtime = decodeFSTime(d)
		}
	}
	n = d.Count(minReconnectLockLen)
	if n > maxFSEntries {
		d.Fail(fmt.Errorf("%w: %d locks", encoding.ErrCorrupt, n))
	}
	if n > 0 && d.Err() == nil {
		m.Locks = make([]ReconnectLock, n)
		for i := 0; i < n && d.Err() == nil; i++ {
			m.Locks[i] = ReconnectLock{Ino: d.Uvarint(), Lock: decodeFileLock(d, false)}
		}
	}
	m.More = d.Bool()
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("wire: client reconnect: %w", err)
	}
	return m, nil
}
