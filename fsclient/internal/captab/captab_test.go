package captab

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/wire"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const ino = 0x10000000001

func caps(t *testing.T, s string) locker.Caps {
	t.Helper()
	c, err := locker.ParseCaps(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// expect checks the actions since the last Take.
func expect(t *testing.T, tab *Table, want ...string) {
	t.Helper()
	var got []string
	for _, a := range tab.Take() {
		got = append(got, a.String())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("actions\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// opened returns a table holding cap 5 on ino, opened read-write.
func opened(t *testing.T, issued string) *Table {
	tab := New(Config{ReleaseDelay: 5 * time.Second})
	tab.Add(ino, wire.InodeCap{ID: 5, Seq: 1, IssueSeq: 1, Caps: uint32(caps(t, issued))}, wire.FilePath{Ino: 1, Path: "f"})
	tab.Open(ino, locker.OpenRead|locker.OpenWrite)
	expect(t, tab, "changed ino 0x10000000001 to "+issued)
	return tab
}

// A revocation is acked only once the driver says it stopped using the
// bits, and the ack carries the dirty attributes as a flush (the
// paper's "flush, then release"; CAPABILITIES.md, "Revocation and the
// flush").
func TestRevokeFlushesThenAcks(t *testing.T) {
	tab := opened(t, "pAsLsXsFsxcrwb")
	tab.MarkDirty(ino, locker.FileWrite|locker.FileBuffer)
	tab.Handle(&wire.ClientCaps{Op: wire.CapRevoke, Ino: ino, CapID: 5, Seq: 2, IssueSeq: 1, Caps: uint32(caps(t, "pAsLsXsFrw"))})
	expect(t, tab, "revoke ino 0x10000000001 to pAsLsXsFrw seq 2")
	if c := tab.Get(ino); c.Implemented != caps(t, "pAsLsXsFsxcrwb") {
		t.Fatalf("implemented %v before the ack", c.Implemented)
	}
	if got, _ := tab.Issued(ino); got != caps(t, "pAsLsXsFrw") {
		t.Fatalf("usable %v during the revocation", got)
	}
	tab.RevokeDone(ino, 2)
	expect(t, tab, "send ack ino 0x10000000001 cap 5 seq 2 issue_seq 1 caps pAsLsXsFrw wanted pAsLsXsFsxcrwba dirty Fwb flush 1 oldest 1")
	if !tab.Flushing(ino, 1) {
		t.Fatal("flush 1 not pending after the ack")
	}
	tab.Handle(&wire.ClientCaps{Op: wire.CapFlushAck, Ino: ino, CapID: 5, Seq: 2, FlushTID: 1})
	expect(t, tab, "flush-acked ino 0x10000000001 flush 1")
	if tab.Flushing(ino, 1) {
		t.Fatal("flush 1 pending after its ack")
	}
	// A grant gives bits back; a stale message (older seq) is ignored.
	tab.Handle(&wire.ClientCaps{Op: wire.CapGrant, Ino: ino, CapID: 5, Seq: 3, IssueSeq: 3, Caps: uint32(caps(t, "pAsLsXsFsxcrwb"))})
	tab.Handle(&wire.ClientCaps{Op: wire.CapRevoke, Ino: ino, CapID: 5, Seq: 2, Caps: uint32(caps(t, "p"))})
	expect(t, tab, "changed ino 0x10000000001 to pAsLsXsFsxcrwb")
	// A message about another cap id (released since) is ignored.
	tab.Handle(&wire.ClientCaps{Op: wire.CapRevoke, Ino: ino, CapID: 4, Seq: 9, Caps: uint32(caps(t, "p"))})
	expect(t, tab)
}

// Two revocations before the driver answers the first: only the later
// one is acked (its seq acknowledges both).
func TestRevokeSuperseded(t *testing.T) {
	tab := opened(t, "pAsLsXsFsxcrwb")
	tab.Handle(&wire.ClientCaps{Op: wire.CapRevoke, Ino: ino, CapID: 5, Seq: 2, Caps: uint32(caps(t, "pAsLsXsFscrw"))})
	tab.Handle(&wire.ClientCaps{Op: wire.CapRevoke, Ino: ino, CapID: 5, Seq: 3, Caps: uint32(caps(t, "pAsLsXsFrw"))})
	expect(t, tab, "revoke ino 0x10000000001 to pAsLsXsFscrw seq 2", "revoke ino 0x10000000001 to pAsLsXsFrw seq 3")
	tab.RevokeDone(ino, 2)
	expect(t, tab)
	tab.RevokeDone(ino, 3)
	expect(t, tab, "send ack ino 0x10000000001 cap 5 seq 3 issue_seq 1 caps pAsLsXsFrw wanted pAsLsXsFsxcrwba")
}

// A grant that gives a revoked bit back before the driver answers the
// revocation does not make the answer stale: the MDS keeps the
// revocation pending until an ack at or past its seq, so RevokeDone
// acks at the grant's seq (a dropped answer left the MDS waiting until
// it fenced the client).
func TestRevokeThenGrantBeforeDone(t *testing.T) {
	tab := opened(t, "pAsLsXsFsxcrw")
	tab.Handle(&wire.ClientCaps{Op: wire.CapRevoke, Ino: ino, CapID: 5, Seq: 2, IssueSeq: 1, Caps: uint32(caps(t, "pAsLsXsFscr"))})
	tab.Handle(&wire.ClientCaps{Op: wire.CapGrant, Ino: ino, CapID: 5, Seq: 3, IssueSeq: 3, Caps: uint32(caps(t, "pAsLsXsFsxcrw"))})
	expect(t, tab, "revoke ino 0x10000000001 to pAsLsXsFscr seq 2", "changed ino 0x10000000001 to pAsLsXsFsxcrw")
	tab.RevokeDone(ino, 2)
	expect(t, tab, "send ack ino 0x10000000001 cap 5 seq 3 issue_seq 3 caps pAsLsXsFsxcrw wanted pAsLsXsFsxcrwba")
}

// fsync's flush: dirty attributes go with a flush tid; nothing dirty
// sends nothing.
func TestFlush(t *testing.T) {
	tab := opened(t, "pAsLsXsFsxcrwb")
	if tid := tab.Flush(ino); tid != 0 {
		t.Fatalf("flush of a clean cap: tid %d", tid)
	}
	tab.MarkDirty(ino, locker.FileExcl)
	if tid := tab.Flush(ino); tid != 1 {
		t.Fatalf("flush tid %d, want 1", tid)
	}
	tab.MarkDirty(ino, locker.AuthExcl)
	if tid := tab.Flush(ino); tid != 2 {
		t.Fatalf("flush tid %d, want 2", tid)
	}
	expect(t, tab,
		"send flush ino 0x10000000001 cap 5 seq 1 issue_seq 1 caps pAsLsXsFsxcrwb wanted pAsLsXsFsxcrwba dirty Fx flush 1 oldest 1",
		"send flush ino 0x10000000001 cap 5 seq 1 issue_seq 1 caps pAsLsXsFsxcrwb wanted pAsLsXsFsxcrwba dirty Ax flush 2 oldest 1")
}

// The cap of a closed file is released after the delay, not before, and
// not if it is opened again; a recall releases closed files' caps at
// once, oldest closed first, but never an open file's.
func TestReleaseAfterDelayAndRecall(t *testing.T) {
	tab := opened(t, "pAsLsXsFscr")
	tab.Close(ino, locker.OpenRead|locker.OpenWrite, t0)
	tab.Tick(t0.Add(4 * time.Second))
	expect(t, tab)
	tab.Tick(t0.Add(5 * time.Second))
	expect(t, tab, "send release ino 0x10000000001 cap 5 seq 1 issue_seq 1 caps - wanted -", "dropped ino 0x10000000001")
	if tab.Len() != 0 {
		t.Fatalf("%d caps after the release", tab.Len())
	}

	tab = New(Config{})
	for i := range uint64(4) {
		tab.Add(ino+i, wire.InodeCap{ID: 10 + i, Seq: 1, Caps: uint32(locker.Pin)}, wire.FilePath{Ino: 1})
		tab.Open(ino+i, locker.OpenRead)
	}
	tab.Close(ino+2, locker.OpenRead, t0)
	tab.Close(ino+1, locker.OpenRead, t0.Add(time.Second))
	tab.Take()
	tab.Recall(2)
	expect(t, tab, "send release ino 0x10000000003 cap 12 seq 1 issue_seq 0 caps - wanted -", "dropped ino 0x10000000003",
		"send release ino 0x10000000002 cap 11 seq 1 issue_seq 0 caps - wanted -", "dropped ino 0x10000000002")
	tab.Recall(0)
	expect(t, tab) // the others are open
}

// After a failover the table reports every cap with its implemented
// bits, wants, path and oldest unacked flush; a lost session drops them
// all.
func TestReconnectAndLost(t *testing.T) {
	tab := opened(t, "pAsLsXsFsxcrwb")
	tab.MarkDirty(ino, locker.FileBuffer)
	tab.Flush(ino)
	tab.Add(ino+1, wire.InodeCap{ID: 6, Seq: 4, IssueSeq: 3, Caps: uint32(caps(t, "pAsFscr"))}, wire.FilePath{Ino: 1, Path: "d/g"})
	tab.Take()
	m := tab.Reconnect()
	want := []wire.ReconnectCap{
		{Ino: ino, CapID: 5, Seq: 1, IssueSeq: 1, Issued: uint32(caps(t, "pAsLsXsFsxcrwb")), Wanted: uint32(caps(t, "pAsLsXsFsxcrwba")),
			Path: wire.FilePath{Ino: 1, Path: "f"}, Dirty: uint32(locker.FileBuffer), FlushTID: 1},
		{Ino: ino + 1, CapID: 6, Seq: 4, IssueSeq: 3, Issued: uint32(caps(t, "pAsFscr")), Path: wire.FilePath{Ino: 1, Path: "d/g"}},
	}
	if !slices.Equal(m.Caps, want) {
		t.Fatalf("reconnect caps\n %+v\nwant\n %+v", m.Caps, want)
	}
	tab.Lost()
	expect(t, tab, "dropped ino 0x10000000001", "dropped ino 0x10000000002")
}

// A closed file's cap with a flush not yet acked is kept past the delay
// (a failover's reconnect must report the flush), and released once the
// ack comes.
func TestReleaseWaitsForFlushAck(t *testing.T) {
	tab := opened(t, "pAsLsXsFsxcrwb")
	tab.MarkDirty(ino, locker.FileWrite)
	tid := tab.Flush(ino)
	tab.Close(ino, locker.OpenRead|locker.OpenWrite, t0)
	tab.Take()
	tab.Tick(t0.Add(time.Minute))
	tab.Recall(0)
	expect(t, tab)
	if m := tab.Reconnect(); len(m.Caps) != 1 || m.Caps[0].FlushTID != tid {
		t.Fatalf("reconnect %+v", m.Caps)
	}
	tab.Handle(&wire.ClientCaps{Op: wire.CapFlushAck, Ino: ino, CapID: 5, Seq: 1, FlushTID: tid})
	tab.Tick(t0.Add(time.Minute))
	expect(t, tab, "flush-acked ino 0x10000000001 flush 1",
		"send release ino 0x10000000001 cap 5 seq 1 issue_seq 1 caps - wanted -", "dropped ino 0x10000000001")
}

// A flush ack is matched by its tid even when it names no cap id (the
// engine's acks carry 0): fsync must not wait forever for it.
func TestFlushAckWithoutCapID(t *testing.T) {
	tab := opened(t, "pAsLsXsFsxcrwb")
	tab.MarkDirty(ino, locker.FileWrite)
	tid := tab.Flush(ino)
	tab.Take()
	tab.Handle(&wire.ClientCaps{Op: wire.CapFlushAck, Ino: ino, FlushTID: tid})
	if tab.Flushing(ino, tid) {
		t.Fatal("flush still pending after an ack without a cap id")
	}
	expect(t, tab, "flush-acked ino 0x10000000001 flush 1")
}

// At unmount every cap is released, open or closed, the dirty
// attributes flushed with the release.
func TestReleaseAll(t *testing.T) {
	tab := opened(t, "pAsLsXsFsxcrwb")
	tab.MarkDirty(ino, locker.FileWrite)
	tab.Add(ino+1, wire.InodeCap{ID: 6, Seq: 1, IssueSeq: 1, Caps: uint32(locker.Pin)}, wire.FilePath{Ino: 1, Path: "g"})
	tab.Take()
	tab.ReleaseAll()
	expect(t, tab,
		"send release ino 0x10000000001 cap 5 seq 1 issue_seq 1 caps - wanted - dirty Fw flush 1 oldest 1", "dropped ino 0x10000000001",
		"send release ino 0x10000000002 cap 6 seq 1 issue_seq 1 caps - wanted -", "dropped ino 0x10000000002")
	if tab.Len() != 0 {
		t.Fatalf("%d caps after ReleaseAll", tab.Len())
	}
}

// A grant that comes while a revocation is not yet acked, and still
// takes a bit (the revoked one), is a revocation too: the bits it grants
// are in use from then on (a later revocation of them must be seen as
// one), and it carries the MDS's attributes for the driver to take.
func TestGrantDuringRevocationIsImplemented(t *testing.T) {
	tab := opened(t, "pAsLsXsFrw")
	tab.Handle(&wire.ClientCaps{Op: wire.CapRevoke, Ino: ino, CapID: 5, Seq: 2, IssueSeq: 1, Caps: uint32(caps(t, "pAsLsXsFr"))})
	grant := &wire.ClientCaps{Op: wire.CapGrant, Ino: ino, CapID: 5, Seq: 3, IssueSeq: 3, Caps: uint32(caps(t, "pAsLsXsFscr")), Size: 4096}
	tab.Handle(grant)
	acts := tab.Take()
	if len(acts) != 2 || acts[1].Kind != Revoke || acts[1].Msg != grant {
		t.Fatalf("actions %v: want two revocations, the second with the grant's attributes", acts)
	}
	if c := tab.Get(ino); c.Implemented != caps(t, "pAsLsXsFscrw") {
		t.Fatalf("implemented %v, want the granted bits and the revoked Fw", c.Implemented)
	}
	// The write is wanted again: Fs and Fc go before Fw's ack came.
	tab.Handle(&wire.ClientCaps{Op: wire.CapRevoke, Ino: ino, CapID: 5, Seq: 4, IssueSeq: 3, Caps: uint32(caps(t, "pAsLsXsFr"))})
	expect(t, tab, "revoke ino 0x10000000001 to pAsLsXsFr seq 4")
	tab.RevokeDone(ino, 2)
	tab.RevokeDone(ino, 3)
	expect(t, tab)
	tab.RevokeDone(ino, 4)
	expect(t, tab, "send ack ino 0x10000000001 cap 5 seq 4 issue_seq 3 caps pAsLsXsFr wanted pAsLsXsFsxcrwba")
	if c := tab.Get(ino); c.Implemented != caps(t, "pAsLsXsFr") {
		t.Fatalf("implemented %v after the ack", c.Implemented)
	}
}
