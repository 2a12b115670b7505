package wire_test

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// A client creates a file and the MDS answers twice: unsafe once the
// inode exists in its memory, with the cap the client asked for, then
// safe once the journal holds the create. Later the MDS revokes the
// client's write-back bits, and the client acks with the size it
// buffered as a flush.
func Example_fileSystemClient() {
	req := &wire.ClientRequest{Tid: 7, Op: wire.MetaCreate, Path: wire.FilePath{Ino: 1, Path: "logs/today"},
		OpFlags: 0o101, Mode: 0o644, UID: 1000, GID: 1000, WantCaps: 0xffd, CreatedIno: 0x10000000100}
	got, _ := wire.DecodeClientRequest(req.Encode())
	fmt.Println(got.Op, got.Path.Path, got.CreatedIno == req.CreatedIno)

	file := wire.InodeStat{Ino: 0x10000000100, Mode: 0o100644, Nlink: 1,
		Cap: wire.InodeCap{ID: 1 << 16, Seq: 1, IssueSeq: 1, Caps: 0xffd, Wanted: 0xffd}}
	for _, safe := range []bool{false, true} {
		rep := &wire.ClientReply{Tid: 7, Op: wire.MetaCreate, Safe: safe, CreatedIno: file.Ino,
			Trace: []wire.TraceStep{{Inode: wire.InodeStat{Ino: 1, Mode: 0o40755}}, {Name: "today", Inode: file}}}
		r, _ := wire.DecodeClientReply(rep.Encode())
		fmt.Printf("reply tid %d safe %v cap %#x caps %#x\n", r.Tid, r.Safe, r.Trace[1].Inode.Cap.ID, r.Trace[1].Inode.Cap.Caps)
	}

	revoke := &wire.ClientCaps{Op: wire.CapRevoke, Ino: file.Ino, CapID: 1 << 16, Seq: 2, IssueSeq: 1, Caps: 0x1d5}
	ack := &wire.ClientCaps{Op: wire.CapAck, Ino: file.Ino, CapID: 1 << 16, Seq: revoke.Seq, Caps: revoke.Caps,
		Dirty: 0x2000, FlushTID: 1, Size: 4096, Mtime: wire.FSTime{Sec: 1 << 32}}
	for _, m := range []*wire.ClientCaps{revoke, ack} {
		c, _ := wire.DecodeClientCaps(m.Encode())
		fmt.Printf("%s seq %d caps %#x size %d mtime year %d\n", c.Op, c.Seq, c.Caps, c.Size, c.Mtime.Time().Year())
	}
	// Output:
	// create logs/today true
	// reply tid 7 safe false cap 0x10000 caps 0xffd
	// reply tid 7 safe true cap 0x10000 caps 0xffd
	// revoke seq 2 caps 0x1d5 size 0 mtime year 1970
	// ack seq 2 caps 0x1d5 size 4096 mtime year 2106
}
