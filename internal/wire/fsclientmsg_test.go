package wire

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
)

// Times past 2038 (int32 seconds) and 2106 (uint32 seconds), before
// 1970, and at the int64 extremes must come back exactly.
var sampleTimes = []FSTime{
	{Sec: 0},
	{Sec: 1<<31 + 5, Nsec: 999_999_999},  // 2038
	{Sec: 1<<32 + 17, Nsec: 1},           // 2106
	{Sec: -86400 * 365 * 100, Nsec: 500}, // 1870
	{Sec: math.MaxInt64, Nsec: 999_999_999},
	{Sec: math.MinInt64},
}

func sampleInodeStat() InodeStat {
	return InodeStat{
		Ino: 0x10000000002, Version: 9, ChangeAttr: 33, Mode: 0o100644, UID: 1000, GID: math.MaxUint32, Nlink: 2,
		Size: 1 << 40, MaxSize: 1<<40 + 4<<20, Rdev: 0,
		Atime: sampleTimes[1], Mtime: sampleTimes[2], Ctime: sampleTimes[3], Btime: sampleTimes[4],
		Layout:        FSLayout{ObjectSize: 4 << 20, StripeUnit: 1 << 20, StripeCount: 3, Pool: 2, PoolNamespace: "ns"},
		XattrVersion:  4,
		Xattrs:        []XattrKV{{Name: "user.a", Value: []byte("1")}, {Name: "user.empty"}},
		QuotaMaxBytes: 1 << 30, QuotaMaxFiles: 1000,
		Cap: InodeCap{ID: 5 << 16 /* made by rank 0 */, Seq: 3, IssueSeq: 2, Caps: 0x3d5, Wanted: 0xffd, Rank: 0, Lazy: true},
	}
}

func sampleDirStat() InodeStat {
	return InodeStat{Ino: 1, Mode: 0o40755, Nlink: 3, Files: 10, Subdirs: 1, RBytes: 1 << 33, RFiles: 1e6, RSubdirs: 12,
		Ctime: sampleTimes[5], Mtime: sampleTimes[4], Cap: InodeCap{ID: 1<<16 | 1, Caps: 1, Rank: 1}}
}

func sampleSessions() []ClientSession {
	return []ClientSession{
		{Op: SessionRequestOpen, Client: "client.4711", ClientID: 4711, Hostname: "node1", Root: "/home/a", Version: "cuttle 0.38", Features: 1<<63 | 5},
		{Op: SessionRequestOpen, Client: "client.admin", ClientID: 4712, Root: "/", Instance: "client.admin/1f2e3d4c5b6a7988"},
		{Op: SessionOpen, Seq: 1, TimeoutSec: 60},
		{Op: SessionRequestRenew, Seq: 12},
		{Op: SessionRenew, Seq: 12},
		{Op: SessionRequestClose, Seq: 99},
		{Op: SessionClose, Reason: "evicted"},
		{Op: SessionStale, Seq: 13},
		{Op: SessionReject, Reason: "client.4711 is blocklisted"},
		{Op: SessionFlushMsg, Seq: 7},
		{Op: SessionFlushMsgAck, Seq: 7},
		{Op: SessionRecallState, MaxCaps: 5000},
		{Op: SessionRequestFlush},
	}
}

func sampleRequests() []*ClientRequest {
	caller := ClientRequest{UID: 1000, GID: 100, Groups: []uint32{100, 27, math.MaxUint32}}
	with := func(m ClientRequest) *ClientRequest {
		m.UID, m.GID, m.Groups = caller.UID, caller.GID, caller.Groups
		m.Tid, m.Attempt, m.OldestTid = 77, 1, 70
		return &m
	}
	return []*ClientRequest{
		with(ClientRequest{Op: MetaLookup, Path: FilePath{Ino: 1, Path: "a/b/c"}, Mask: AttrMode | AttrSize}),
		with(ClientRequest{Op: MetaLookupIno, Path: FilePath{Ino: 0x10000000005}}),
		with(ClientRequest{Op: MetaLookupParent, Path: FilePath{Ino: 0x10000000005}}),
		with(ClientRequest{Op: MetaGetattr, Path: FilePath{Ino: 0x10000000005}, Mask: AttrSize | AttrMtime}),
		with(ClientRequest{Op: MetaStatlite, Path: FilePath{Ino: 1, Path: "f"}, Mask: AttrMode | AttrUID}),
		with(ClientRequest{Op: MetaSetattr, Path: FilePath{Ino: 1, Path: "f"},
			Mask: AttrMode | AttrUID | AttrGID | AttrSize | AttrAtime | AttrMtime | AttrCtime | AttrBtime,
			Mode: 0o4755, SetUID: 0, SetGID: 5, Size: 1<<63 - 1,
			Atime: sampleTimes[1], Mtime: sampleTimes[2], Ctime: sampleTimes[3], Btime: sampleTimes[5]}),
		with(ClientRequest{Op: MetaSetxattr, Path: FilePath{Ino: 1, Path: "d"}, Name: "ceph.quota.max_bytes", Value: []byte("1073741824"), OpFlags: 1}),
		with(ClientRequest{Op: MetaRmxattr, Path: FilePath{Ino: 1, Path: "f"}, Name: "user.a"}),
		with(ClientRequest{Op: MetaGetxattr, Path: FilePath{Ino: 1, Path: "f"}, Name: "user.a"}),
		with(ClientRequest{Op: MetaListxattr, Path: FilePath{Ino: 1, Path: "f"}}),
		with(ClientRequest{Op: MetaReaddir, Path: FilePath{Ino: 1, Path: "d"}, Frag: 0x1800001, Offset: 0xdeadbeef,
			StartName: "m", MaxEntries: 1024, MaxBytes: 1 << 20, Plus: true}),
		with(ClientRequest{Op: MetaCreate, Path: FilePath{Ino: 1, Path: "d/new"}, OpFlags: 0o1302, Mode: 0o644,
			WantCaps: 0xffd, CreatedIno: 0x10000000100}),
		with(ClientRequest{Op: MetaOpen, Path: FilePath{Ino: 0x10000000100}, OpFlags: 2, WantCaps: 0x3d5}),
		with(ClientRequest{Op: MetaMkdir, Path: FilePath{Ino: 1, Path: "d/sub"}, Mode: 0o2775, CreatedIno: 0x10000000101}),
		with(ClientRequest{Op: MetaMknod, Path: FilePath{Ino: 1, Path: "d/null"}, Mode: 0o20666, Rdev: 1<<8 | 3}),
		with(ClientRequest{Op: MetaSymlink, Path: FilePath{Ino: 1, Path: "d/ln"}, Target: "../far/away"}),
		with(ClientRequest{Op: MetaLink, Path: FilePath{Ino: 1, Path: "d/hard"}, Path2: FilePath{Ino: 0x10000000100}}),
		with(ClientRequest{Op: MetaUnlink, Path: FilePath{Ino: 1, Path: "d/hard"}}),
		with(ClientRequest{Op: MetaRmdir, Path: FilePath{Ino: 1, Path: "d/sub"}}),
		with(ClientRequest{Op: MetaRename, Path: FilePath{Ino: 1, Path: "e/to"}, Path2: FilePath{Ino: 1, Path: "d/from"}, OpFlags: 1}),
		with(ClientRequest{Op: MetaSetLayout, Path: FilePath{Ino: 0x10000000100},
			Layout: FSLayout{ObjectSize: 8 << 20, StripeUnit: 64 << 10, StripeCount: 8, Pool: 3}}),
		with(ClientRequest{Op: MetaSetDirLayout, Path: FilePath{Ino: 1, Path: "d"}, Layout: FSLayout{ObjectSize: 4 << 20, StripeUnit: 4 << 20, StripeCount: 1, Pool: 4, PoolNamespace: "n"}}),
		with(ClientRequest{Op: MetaSetFileLock, Path: FilePath{Ino: 0x10000000100},
			Lock: FileLock{Kind: LockFcntl, Type: LockExclusive, Start: 100, Length: 0, PID: 4242, Owner: 0xabc, Wait: true}}),
		with(ClientRequest{Op: MetaSetFileLock, Path: FilePath{Ino: 0x10000000100}, Lock: FileLock{Kind: LockFlock, Type: LockUnlock, Owner: 9}}),
		with(ClientRequest{Op: MetaGetFileLock, Path: FilePath{Ino: 0x10000000100}, Lock: FileLock{Kind: LockFcntl, Type: LockShared, Start: 0, Length: 10, PID: 1}}),
		with(ClientRequest{Op: MetaLazyIO, Path: FilePath{Ino: 0x10000000100}, OpFlags: 1}),
		{Tid: 1 << 62, Attempt: 3, NumFwd: 2, Op: MetaCreate, Flags: RequestReplay, Path: FilePath{Ino: 1, Path: "x\x00y"},
			CreatedIno: 0x10000000102},
	}
}

func sampleReplies() []*ClientReply {
	dir, file := sampleDirStat(), sampleInodeStat()
	return []*ClientReply{
		{Tid: 77, Op: MetaLookup, Safe: true, Trace: []TraceStep{
			{Inode: dir}, {Name: "a", Inode: InodeStat{Ino: 0x10000000001, Mode: 0o40700}, LeaseMs: 30000, LeaseSeq: 4},
			{Name: "f", Inode: file, LeaseMs: 30000, LeaseSeq: 5}}},
		{Tid: 78, Op: MetaLookup, Result: -ENOENT, Safe: true, Trace: []TraceStep{{Inode: dir}, {Name: "missing", LeaseMs: 5000}}},
		{Tid: 79, Op: MetaCreate, Trace: []TraceStep{{Inode: dir}, {Name: "new", Inode: file}}, CreatedIno: file.Ino,
			Delegated: []InoRange{{Start: 0x10000001000, Len: 100}, {Start: 0x10000002000, Len: 1}}},
		{Tid: 79, Op: MetaCreate, Safe: true},
		{Tid: 80, Op: MetaStatlite, Safe: true, Trace: []TraceStep{{Inode: file}}, Approx: AttrSize | AttrMtime},
		{Tid: 81, Op: MetaReaddir, Safe: true, Trace: []TraceStep{{Inode: dir}}, Dir: DirListing{Frag: 0x1800001,
			Entries: []DirEntry{{Name: "a", Inode: InodeStat{Ino: 2, Mode: 0o40755}, Offset: 1}, {Name: "f", Inode: file, LeaseMs: 100, Offset: 1 << 31}},
			End:     true, Complete: true}},
		{Tid: 82, Op: MetaListxattr, Safe: true, Data: []byte("user.a\x00user.b\x00")},
		{Tid: 83, Op: MetaGetFileLock, Safe: true, Lock: FileLock{Kind: LockFcntl, Type: LockExclusive, Start: 5, Length: 1, PID: 99, Owner: 3}},
		{Tid: 84, Op: MetaGetFileLock, Safe: true, Lock: FileLock{Kind: LockFcntl, Type: LockUnlock}},
		{Tid: 85, Op: MetaSetattr, Result: -1 << 31, Safe: true},
	}
}

func sampleCaps() []*ClientCaps {
	return []*ClientCaps{
		{Op: CapGrant, Ino: 0x10000000100, CapID: 7 << 16 /* rank 0 */, Seq: 3, IssueSeq: 3, Caps: 0xffd, Wanted: 0xffd, Size: 10, MaxSize: 4 << 20,
			Mtime: sampleTimes[2], Atime: sampleTimes[1], Ctime: sampleTimes[3], Btime: sampleTimes[4], ChangeAttr: 8,
			Mode: 0o100644, UID: 1, GID: 2, Nlink: 1, XattrVersion: 2, Xattrs: []XattrKV{{Name: "user.x", Value: []byte{0, 1}}},
			Layout: FSLayout{ObjectSize: 4 << 20, StripeUnit: 4 << 20, StripeCount: 1, Pool: 2}},
		{Op: CapRevoke, Ino: 0x10000000100, CapID: 7 << 16, Seq: 4, IssueSeq: 3, Caps: 0x355},
		{Op: CapAck, Ino: 0x10000000100, CapID: 7 << 16, Seq: 4, Caps: 0x355, Wanted: 0xffd, Dirty: 0x200, FlushTID: 12,
			OldestFlushTID: 11, Size: 1 << 50, Mtime: sampleTimes[2]},
		{Op: CapUpdate, Ino: 0x10000000100, CapID: 7 << 16, IssueSeq: 3, Wanted: 0x155, Lazy: true},
		{Op: CapFlush, Ino: 0x10000000100, CapID: 7 << 16, Dirty: 0x204, FlushTID: 13, Size: 5, Mtime: sampleTimes[1], Mode: 0o100600},
		{Op: CapFlushAck, Ino: 0x10000000100, CapID: 7 << 16, FlushTID: 13, Size: 5, Mtime: sampleTimes[1]},
		{Op: CapRelease, Ino: 0x10000000100, CapID: 7 << 16, Seq: 4, IssueSeq: 3, Dirty: 0x200, FlushTID: 14, Size: 6},
		{Op: CapExport, Ino: 0x10000000100, CapID: 7 << 16, Rank: 0, MigrateSeq: 1, Peer: CapPeer{Rank: 2, CapID: 9<<16 | 2, Seq: 1, MigrateSeq: 2}},
		{Op: CapImport, Ino: 0x10000000100, CapID: 9<<16 | 2, Rank: 2, MigrateSeq: 2, Caps: 0x155, Peer: CapPeer{Rank: 0, CapID: 7 << 16, Seq: 4, MigrateSeq: 1}},
	}
}

func sampleReconnect() *ClientReconnect {
	return &ClientReconnect{
		Caps: []ReconnectCap{
			{Ino: 0x10000000100, CapID: 7 << 16, Seq: 4, IssueSeq: 3, Issued: 0xffd, Wanted: 0xffd, Lazy: true,
				Path: FilePath{Ino: 1, Path: "d/new"}, Dirty: 0x200, FlushTID: 15, Size: 1 << 33, Mtime: sampleTimes[2]},
			{Ino: 1, CapID: 1 << 16, Seq: 1, IssueSeq: 1, Issued: 0x55, Wanted: 0x55, Path: FilePath{Ino: 1}},
		},
		Locks: []ReconnectLock{
			{Ino: 0x10000000100, Lock: FileLock{Kind: LockFcntl, Type: LockShared, Start: 0, Length: 100, PID: 7, Owner: 8}},
			{Ino: 0x10000000100, Lock: FileLock{Kind: LockFlock, Type: LockExclusive, Owner: 9}},
		},
		More: true,
	}
}

func sampleLeases() []ClientLease {
	return []ClientLease{
		{Op: LeaseRevoke, Ino: 1, Name: "f", Seq: 5},
		{Op: LeaseRevokeAck, Ino: 1, Name: "f", Seq: 5},
		{Op: LeaseRenew, Ino: 1, Name: "g", Seq: 6, DurationMs: 30000},
		{Op: LeaseRelease, Ino: 1, Name: "g", Seq: 6},
	}
}

// sampleFSEncodings are every sample message's encoding, with its
// decoder: the round-trip cases, the corruption cases and the fuzz
// seeds.
func sampleFSEncodings() []struct {
	name   string
	b      []byte
	decode func([]byte) (any, error)
} {
	type enc = struct {
		name   string
		b      []byte
		decode func([]byte) (any, error)
	}
	var out []enc
	for _, m := range sampleSessions() {
		out = append(out, enc{"session " + m.Op.String(), m.Encode(), func(b []byte) (any, error) { return DecodeClientSession(b) }})
	}
	for _, m := range sampleRequests() {
		out = append(out, enc{"request " + m.Op.String(), m.Encode(), func(b []byte) (any, error) { return DecodeClientRequest(b) }})
	}
	for _, m := range sampleReplies() {
		out = append(out, enc{"reply " + m.Op.String(), m.Encode(), func(b []byte) (any, error) { return DecodeClientReply(b) }})
	}
	for _, m := range sampleCaps() {
		out = append(out, enc{"caps " + m.Op.String(), m.Encode(), func(b []byte) (any, error) { return DecodeClientCaps(b) }})
	}
	for _, m := range sampleLeases() {
		out = append(out, enc{"lease", m.Encode(), func(b []byte) (any, error) { return DecodeClientLease(b) }})
	}
	out = append(out, enc{"forward", ClientRequestForward{Tid: 9, Dest: 3, NumFwd: 2, MustResend: true}.Encode(),
		func(b []byte) (any, error) { return DecodeClientRequestForward(b) }})
	out = append(out, enc{"reconnect", sampleReconnect().Encode(), func(b []byte) (any, error) { return DecodeClientReconnect(b) }})
	return out
}

func TestFSClientRoundTrip(t *testing.T) {
	for _, m := range sampleSessions() {
		if got, err := DecodeClientSession(m.Encode()); err != nil || got != m {
			t.Errorf("session %v: %+v, %v", m.Op, got, err)
		}
	}
	for _, m := range sampleRequests() {
		if got, err := DecodeClientRequest(m.Encode()); err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("request %v: %+v, %v", m.Op, got, err)
		}
	}
	for _, m := range sampleReplies() {
		if got, err := DecodeClientReply(m.Encode()); err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("reply %v: %+v, %v", m.Op, got, err)
		}
	}
	for _, m := range sampleCaps() {
		if got, err := DecodeClientCaps(m.Encode()); err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("caps %v: %+v, %v", m.Op, got, err)
		}
	}
	for _, m := range sampleLeases() {
		if got, err := DecodeClientLease(m.Encode()); err != nil || got != m {
			t.Errorf("lease %v: %+v, %v", m.Op, got, err)
		}
	}
	fw := ClientRequestForward{Tid: 9, Dest: 3, NumFwd: 2, MustResend: true}
	if got, err := DecodeClientRequestForward(fw.Encode()); err != nil || got != fw {
		t.Errorf("forward: %+v, %v", got, err)
	}
	rc := sampleReconnect()
	if got, err := DecodeClientReconnect(rc.Encode()); err != nil || !reflect.DeepEqual(got, rc) {
		t.Errorf("reconnect: %+v, %v", got, err)
	}
	if got, err := DecodeClientReconnect((&ClientReconnect{}).Encode()); err != nil || !reflect.DeepEqual(got, &ClientReconnect{}) {
		t.Errorf("empty reconnect: %+v, %v", got, err)
	}
}

// Every time in the reply's inode and the caps' attributes, including
// those past 2038 and 2106, comes back to the nanosecond.
func TestFSTimesRoundTrip(t *testing.T) {
	for _, ts := range sampleTimes {
		m := &ClientCaps{Op: CapGrant, Mtime: ts, Atime: ts, Ctime: ts, Btime: ts}
		got, err := DecodeClientCaps(m.Encode())
		if err != nil || got.Mtime != ts || got.Atime != ts || got.Ctime != ts || got.Btime != ts {
			t.Errorf("time %+v: %+v, %v", ts, got, err)
		}
	}
	for _, ts := range sampleTimes[:4] {
		if got := FSTimeOf(ts.Time()); got != ts {
			t.Errorf("time %+v through time.Time: %+v", ts, got)
		}
	}
	if y := (FSTime{Sec: 1<<32 + 17}).Time().Year(); y != 2106 {
		t.Errorf("2^32 s is in %d", y)
	}
	var e encoding.Encoder
	e.Varint(5)
	e.Uvarint(1e9)
	if d := encoding.NewDecoder(e.Data()); decodeFSTime(d) != (FSTime{}) || !errors.Is(d.Err(), encoding.ErrCorrupt) {
		t.Errorf("a billion nanoseconds decoded: %v", d.Err())
	}
}

// Every strict prefix of every encoding fails to decode, as does every
// encoding with a byte appended; none panics.
func TestFSClientTruncatedAndTrailing(t *testing.T) {
	for _, c := range sampleFSEncodings() {
		for n := range len(c.b) {
			if _, err := c.decode(c.b[:n]); err == nil {
				t.Errorf("%s: a prefix of %d of %d bytes decoded", c.name, n, len(c.b))
			}
		}
		if _, err := c.decode(append(c.b[:len(c.b):len(c.b)], 0)); err == nil {
			t.Errorf("%s: a trailing byte decoded", c.name)
		}
	}
}

// Flipping each byte of each encoding gives an error or a message that
// re-encodes to what it decoded from — never a panic.
func TestFSClientCorrupted(t *testing.T) {
	for _, c := range sampleFSEncodings() {
		for i := range c.b {
			for _, x := range []byte{0xff, 0x80, 0x01} {
				b := append([]byte(nil), c.b...)
				b[i] ^= x
				m, err := c.decode(b)
				if err != nil {
					continue
				}
				if again, err := c.decode(reencodeFS(m)); err != nil || !reflect.DeepEqual(again, m) {
					t.Errorf("%s with byte %d ^ %#x: decoded %+v, re-encoded %+v, %v", c.name, i, x, m, again, err)
				}
			}
		}
	}
}

// reencodeFS encodes a decoded file-system message again (nil for a
// type it does not know, which no decoder returns).
func reencodeFS(m any) []byte {
	switch m := m.(type) {
	case ClientSession:
		return m.Encode()
	case *ClientRequest:
		return m.Encode()
	case *ClientReply:
		return m.Encode()
	case ClientRequestForward:
		return m.Encode()
	case *ClientCaps:
		return m.Encode()
	case ClientLease:
		return m.Encode()
	case *ClientReconnect:
		return m.Encode()
	}
	return nil
}

// Fields the decoders check, each set to a value they refuse.
func TestFSClientInvalid(t *testing.T) {
	bad := map[string][]byte{
		"session op 0":    ClientSession{}.Encode(),
		"session op 13":   ClientSession{Op: 13}.Encode(),
		"request op 0":    (&ClientRequest{}).Encode(),
		"request op 31":   (&ClientRequest{Op: 31}).Encode(),
		"request lock":    (&ClientRequest{Op: MetaSetFileLock, Lock: FileLock{Kind: 3, Type: LockShared}}).Encode(),
		"request lock 2":  (&ClientRequest{Op: MetaSetFileLock, Lock: FileLock{Kind: LockFcntl, Type: 0, Start: 1}}).Encode(),
		"reply op":        (&ClientReply{Op: 999}).Encode(),
		"caps op 0":       (&ClientCaps{}).Encode(),
		"caps op 10":      (&ClientCaps{Op: 10}).Encode(),
		"caps rank":       (&ClientCaps{Op: CapGrant, Rank: -1}).Encode(),
		"caps peer rank":  (&ClientCaps{Op: CapExport, Peer: CapPeer{Rank: -2}}).Encode(),
		"lease op":        ClientLease{Op: 5}.Encode(),
		"forward rank":    ClientRequestForward{Dest: -1}.Encode(),
		"reconnect lock":  (&ClientReconnect{Locks: []ReconnectLock{{Ino: 1}}}).Encode(),
		"newer compat":    func() []byte { b := ClientLease{Op: 1}.Encode(); b[0], b[1] = 3, 2; return b }(),
		"huge group list": hugeCount(),
	}
	for name, b := range bad {
		var err error
		switch name {
		case "session op 0", "session op 13":
			_, err = DecodeClientSession(b)
		case "request op 0", "request op 31", "request lock", "request lock 2", "huge group list":
			_, err = DecodeClientRequest(b)
		case "reply op":
			_, err = DecodeClientReply(b)
		case "caps op 0", "caps op 10", "caps rank", "caps peer rank":
			_, err = DecodeClientCaps(b)
		case "lease op", "newer compat":
			_, err = DecodeClientLease(b)
		case "forward rank":
			_, err = DecodeClientRequestForward(b)
		case "reconnect lock":
			_, err = DecodeClientReconnect(b)
		}
		if err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if MetaOp(999).Known() || !MetaRename.IsWrite() || MetaReaddir.IsWrite() || MetaOp(999).String() != "metaop(999)" {
		t.Error("meta op helpers")
	}
}

// hugeCount is a request whose group count claims more groups than its
// bytes hold.
func hugeCount() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint64(1)
	e.Uvarint(0)
	e.Uvarint(0)
	e.Uint16(uint16(MetaGetattr))
	e.Uvarint(0)
	e.Uvarint(0)
	encodeFilePath(&e, FilePath{})
	encodeFilePath(&e, FilePath{})
	e.Uvarint(0)
	e.Uvarint(0)
	e.Uvarint(1 << 40)
	e.End(mk)
	return e.Data()
}

// fsRoundTrip checks that a decoded message re-encodes to bytes that
// decode to the same message.
func fsRoundTrip[M any](t *testing.T, b []byte, decode func([]byte) (M, error), encode func(M) []byte) {
	m, err := decode(b)
	if err != nil {
		return
	}
	again, err := decode(encode(m))
	if err != nil || !reflect.DeepEqual(again, m) {
		t.Fatalf("re-encoding %+v: %+v, %v", m, again, err)
	}
}

func FuzzClientSession(f *testing.F) {
	for _, m := range sampleSessions() {
		f.Add(m.Encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fsRoundTrip(t, b, DecodeClientSession, ClientSession.Encode)
	})
}

func FuzzClientRequest(f *testing.F) {
	for _, m := range sampleRequests() {
		f.Add(m.Encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fsRoundTrip(t, b, DecodeClientRequest, (*ClientRequest).Encode)
	})
}

func FuzzClientReply(f *testing.F) {
	for _, m := range sampleReplies() {
		f.Add(m.Encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fsRoundTrip(t, b, DecodeClientReply, (*ClientReply).Encode)
	})
}

func FuzzClientRequestForward(f *testing.F) {
	f.Add(ClientRequestForward{Tid: 9, Dest: 3, NumFwd: 2, MustResend: true}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		fsRoundTrip(t, b, DecodeClientRequestForward, ClientRequestForward.Encode)
	})
}

func FuzzClientCaps(f *testing.F) {
	for _, m := range sampleCaps() {
		f.Add(m.Encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fsRoundTrip(t, b, DecodeClientCaps, (*ClientCaps).Encode)
	})
}

func FuzzClientLease(f *testing.F) {
	for _, m := range sampleLeases() {
		f.Add(m.Encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fsRoundTrip(t, b, DecodeClientLease, ClientLease.Encode)
	})
}

func FuzzClientReconnect(f *testing.F) {
	f.Add(sampleReconnect().Encode())
	f.Add((&ClientReconnect{}).Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		fsRoundTrip(t, b, DecodeClientReconnect, (*ClientReconnect).Encode)
	})
}

// A readdirplus reply of 1,024 entries, each with its attributes and
// cap, encoded and decoded: the MDS's and the client's cost per
// listing.
func BenchmarkClientReplyReaddirplus(b *testing.B) {
	m := &ClientReply{Tid: 1, Op: MetaReaddir, Safe: true, Dir: DirListing{End: true}}
	for i := range 1024 {
		st := sampleInodeStat()
		st.Ino += uint64(i)
		st.Xattrs = nil
		m.Dir.Entries = append(m.Dir.Entries, DirEntry{Name: fmt.Sprintf("file%05d", i), Inode: st, LeaseMs: 30000, Offset: uint64(i)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeClientReply(m.Encode()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(m.Encode()))/1024, "bytes/entry")
}

// A create request and its reply, encoded and decoded: the per-operation
// cost of the protocol in a create-heavy metadata benchmark.
func BenchmarkClientCreateRoundTrip(b *testing.B) {
	req := sampleRequests()[11]
	st := sampleInodeStat()
	rep := &ClientReply{Tid: req.Tid, Op: MetaCreate, Trace: []TraceStep{{Inode: sampleDirStat()}, {Name: "new", Inode: st}}, CreatedIno: st.Ino}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeClientRequest(req.Encode()); err != nil {
			b.Fatal(err)
		}
		if _, err := DecodeClientReply(rep.Encode()); err != nil {
			b.Fatal(err)
		}
	}
}

// A session open of version 1 (before Instance) still decodes, without
// an instance.
func TestClientSessionVersion1(t *testing.T) {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint8(uint8(SessionRequestOpen))
	e.Uvarint(0)
	e.String("client.admin")
	e.Uvarint(4711)
	e.String("node1")
	e.String("/")
	e.String("cuttle 0.37")
	e.Uint64(0)
	e.Uvarint(0)
	e.Uvarint(0)
	e.String("")
	e.End(mk)
	got, err := DecodeClientSession(e.Data())
	want := ClientSession{Op: SessionRequestOpen, Client: "client.admin", ClientID: 4711, Hostname: "node1", Root: "/", Version: "cuttle 0.37"}
	if err != nil || got != want {
		t.Fatalf("version 1 session: %+v %v, want %+v", got, err, want)
	}
}
