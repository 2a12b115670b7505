package locker

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Unix(1000, 0)

// at is t0 plus s seconds.
func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

const (
	c1  ClientID = 1
	c2  ClientID = 2
	c3  ClientID = 3
	ino Ino      = 0x100
)

func show(as []Action) string {
	lines := make([]string, len(as))
	for i, a := range as {
		lines[i] = a.String()
	}
	return strings.Join(lines, "\n")
}

type step struct {
	do   func(l *Locker) []Action
	want string
	// check, if set, runs after the step.
	check func(t *testing.T, l *Locker)
}

func run(t *testing.T, l *Locker, steps []step) {
	t.Helper()
	for i, st := range steps {
		got := show(st.do(l))
		if want := strings.TrimSpace(st.want); got != want {
			t.Fatalf("step %d:\ngot:\n%s\nwant:\n%s", i, got, want)
		}
		for _, in := range l.Inodes() {
			if err := l.Verify(in); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		if st.check != nil {
			st.check(t, l)
		}
	}
}

func open(req ReqID, c ClientID, mode OpenMode, now int) func(l *Locker) []Action {
	return func(l *Locker) []Action { return l.Open(req, c, ino, mode, at(now)) }
}

// capID is c's current cap's ID on ino (0 if none).
func capID(l *Locker, c ClientID) uint64 {
	cp, _ := l.Cap(ino, c)
	return cp.ID
}

func ack(c ClientID, seq uint64, f *Flush, now int) func(l *Locker) []Action {
	return func(l *Locker) []Action { return l.Ack(c, ino, capID(l, c), seq, f, at(now)) }
}

func release(c ClientID, issueSeq uint64, now int) func(l *Locker) []Action {
	return func(l *Locker) []Action { return l.Release(c, ino, capID(l, c), issueSeq, nil, at(now)) }
}

func stat(req ReqID, c ClientID, fields Field, now int) func(l *Locker) []Action {
	return func(l *Locker) []Action {
		return l.Request(Request{ID: req, Client: c, Ino: ino, Op: OpStat, Fields: fields}, at(now))
	}
}

func setattr(req ReqID, c ClientID, fields Field, now int) func(l *Locker) []Action {
	return func(l *Locker) []Action {
		return l.Request(Request{ID: req, Client: c, Ino: ino, Op: OpSetattr, Fields: fields}, at(now))
	}
}

func fileState(want LockState, loner ClientID) func(t *testing.T, l *Locker) {
	return func(t *testing.T, l *Locker) {
		t.Helper()
		if s, ln := l.LockState(ino, LockFile); s != want || ln != loner {
			t.Fatalf("file lock %s loner %d, want %s loner %d", s, ln, want, loner)
		}
	}
}

// Paper 3.2: a file opened by one reader may be read and cached; so may
// one opened by several readers.
func TestReadersCache(t *testing.T) {
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenRead, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFscr seq 1`,
			check: fileState(StateSync, 0)},
		{do: open(2, c2, OpenRead, 1), want: `
reply req 2 client.2 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFscr seq 1`,
			check: fileState(StateSync, 0)},
		// A stat among readers revokes nothing.
		{do: stat(3, c3, FieldsAll, 2), want: `
reply req 3 client.3 ino 0x100 size 0 mtime -62135596800`},
	})
}

// Paper 3.2: a single writer may buffer writes and update the size
// itself: the file lock is excl with it as the loner.
func TestOneWriterBuffers(t *testing.T) {
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenRead|OpenWrite, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFsxcrwba seq 1`,
			check: fileState(StateExcl, c1)},
	})
}

// Paper 3.2: a reader, then a writer: several clients with a writer
// among them switch to synchronous I/O (mix). The reader loses its
// cache (Fc) and the shared size (Fs) and keeps Fr; the writer gets Fw
// only once the reader has acked, never Fb or Fc.
func TestReaderThenWriter(t *testing.T) {
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenRead, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFscr seq 1`},
		{do: open(2, c2, OpenWrite, 1), want: `
revoke client.1 ino 0x100 Fsc to pAsLsXsFr seq 2
reply req 2 client.2 ino 0x100 size 0 mtime -62135596800 caps pAsLsXs seq 1`,
			check: fileState(StateMix, 0)},
		{do: ack(c1, 2, nil, 2), want: `
grant client.2 ino 0x100 pAsLsXsFw seq 2`},
	})
}

// A writer buffering alone, then a reader: the writer's buffer and
// local size (Fb, Fx) are revoked; its ack flushes size and mtime; only
// then may the reader read.
func TestWriterThenReaderFlushes(t *testing.T) {
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenWrite, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFsxwba seq 1`},
		{do: open(2, c2, OpenRead, 1), want: `
revoke client.1 ino 0x100 Fsxba to pAsLsXsFw seq 2
reply req 2 client.2 ino 0x100 size 0 mtime -62135596800 caps pAsLsXs seq 1`},
		{do: ack(c1, 2, &Flush{TID: 1, Size: 4096, Mtime: at(1), Dirty: FileWrite}, 2), want: `
flushack client.1 ino 0x100 tid 1 size 4096 mtime 1001
grant client.2 ino 0x100 pAsLsXsFr seq 2`},
		// The reader closes: the writer is alone again and buffers.
		{do: release(c2, 2, 3), want: `
grant client.1 ino 0x100 pAsLsXsFsxwba seq 3`,
			check: fileState(StateExcl, c1)},
	})
}

// Paper 3.2: "stat of a file being written collects size and mtime from
// the writers": a stat while a client buffers revokes Fb (with Fw and
// Fx), waits for the flushed size and mtime, answers with them, and the
// writer gets its caps back.
func TestStatDuringBufferedWrite(t *testing.T) {
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenWrite, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFsxwba seq 1`},
		{do: stat(7, c3, FieldsAll, 5), want: `
revoke client.1 ino 0x100 Fxwba to pAsLsXsFs seq 2`,
			check: fileState(StateSync, 0)},
		{do: ack(c1, 2, &Flush{TID: 1, Size: 8192, Mtime: at(4), Dirty: FileWrite}, 6), want: `
flushack client.1 ino 0x100 tid 1 size 8192 mtime 1004
reply req 7 client.3 ino 0x100 size 8192 mtime 1004
grant client.1 ino 0x100 pAsLsXsFsxwba seq 3`,
			check: fileState(StateExcl, c1)},
	})
}

// The POSIX extension statlite: a statlite that does not ask for size
// and mtime to be exact answers at once, without revoking the writer,
// and says those fields may be stale; one that asks behaves as stat.
func TestStatlite(t *testing.T) {
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenWrite, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFsxwba seq 1`},
		{do: stat(7, c2, FieldMode|FieldOwner|FieldNlink, 1), want: `
reply req 7 client.2 ino 0x100 size 0 mtime -62135596800 approx 0x70`},
		{do: stat(8, c2, FieldSize, 2), want: `
revoke client.1 ino 0x100 Fxwba to pAsLsXsFs seq 2`},
		{do: ack(c1, 2, &Flush{TID: 3, Size: 10, Mtime: at(2), Dirty: FileWrite}, 3), want: `
flushack client.1 ino 0x100 tid 3 size 10 mtime 1002
reply req 8 client.2 ino 0x100 size 10 mtime 1002
grant client.1 ino 0x100 pAsLsXsFsxwba seq 3`},
	})
}

// O_LAZY: two writers sharing a file both keep Fl and, through it, may
// cache and buffer, though the lock is in mix.
func TestLazyIO(t *testing.T) {
	lazy := OpenRead | OpenWrite | OpenLazy
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, lazy, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFsxcrwbal seq 1`},
		{do: open(2, c2, lazy, 1), want: `
revoke client.1 ino 0x100 Fsxcba to pAsLsXsFrwl seq 2
reply req 2 client.2 ino 0x100 size 0 mtime -62135596800 caps pAsLsXs seq 1`},
		{do: ack(c1, 2, &Flush{TID: 1, Size: 100, Mtime: at(1), Dirty: FileWrite}, 2), want: `
flushack client.1 ino 0x100 tid 1 size 100 mtime 1001
grant client.2 ino 0x100 pAsLsXsFrwl seq 2`,
			check: func(t *testing.T, l *Locker) {
				for _, c := range []ClientID{c1, c2} {
					cp, _ := l.Cap(ino, c)
					if !cp.Lazy || !cp.Issued.CanBuffer(cp.Lazy) || !cp.Issued.CanCache(cp.Lazy) {
						t.Errorf("client.%d with %s (lazy %v) may not buffer and cache", c, cp.Issued, cp.Lazy)
					}
				}
			}},
		// A third client without O_LAZY shares too, synchronously.
		{do: open(3, c3, OpenRead, 3), want: `
reply req 3 client.3 ino 0x100 size 100 mtime 1001 caps pAsLsXsFr seq 1`,
			check: func(t *testing.T, l *Locker) {
				cp, _ := l.Cap(ino, c3)
				if cp.Issued.CanCache(cp.Lazy) {
					t.Errorf("client.3 without O_LAZY may cache with %s", cp.Issued)
				}
			}},
	})
}

// A setattr of the mode takes the auth lock exclusively: readers' As is
// revoked, the request proceeds once acked, and As comes back at Done.
// A setattr of the size revokes every file cap and takes the size at
// Done.
func TestSetattr(t *testing.T) {
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenRead, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFscr seq 1`},
		{do: setattr(9, c2, FieldMode, 1), want: `
revoke client.1 ino 0x100 As to pLsXsFscr seq 2`},
		{do: ack(c1, 2, nil, 2), want: `
reply req 9 client.2 ino 0x100 size 0 mtime -62135596800`},
		// While the setattr holds the lock a stat of the mode waits.
		{do: stat(10, c2, FieldMode, 3), want: ``},
		{do: func(l *Locker) []Action { return l.Done(ino, 9, nil, at(4)) }, want: `
reply req 10 client.2 ino 0x100 size 0 mtime -62135596800
grant client.1 ino 0x100 pAsLsXsFscr seq 3`},
		{do: setattr(11, c2, FieldSize, 5), want: `
revoke client.1 ino 0x100 Fscr to pAsLsXs seq 4`,
			check: fileState(StateLock, 0)},
		{do: ack(c1, 4, nil, 6), want: `
reply req 11 client.2 ino 0x100 size 0 mtime -62135596800`},
		{do: func(l *Locker) []Action { return l.Done(ino, 11, &FileAttrs{Size: 1 << 20, Mtime: at(7)}, at(7)) }, want: `
grant client.1 ino 0x100 pAsLsXsFscr seq 5`},
		{do: stat(12, c2, FieldsAll, 8), want: `
reply req 12 client.2 ino 0x100 size 1048576 mtime 1007`},
	})
}

// A client whose session ends while holding only read caps is dropped
// without fencing, and the writer waiting on it is granted at once.
func TestSessionEndWithoutWriteCaps(t *testing.T) {
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenRead, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFscr seq 1`},
		{do: open(2, c2, OpenWrite, 1), want: `
revoke client.1 ino 0x100 Fsc to pAsLsXsFr seq 2
reply req 2 client.2 ino 0x100 size 0 mtime -62135596800 caps pAsLsXs seq 1`},
		{do: func(l *Locker) []Action { return l.SessionEnd(c1, EndTimeout, at(100)) }, want: `
drop client.1
grant client.2 ino 0x100 pAsLsXsFsxwba seq 2`,
			check: fileState(StateExcl, c2)},
	})
}

// A client whose session ends while it may write is blocklisted, and
// nothing that conflicts with its caps is granted until it is fenced:
// it can never write after its caps were given away.
func TestSessionEndWithWriteCapsFences(t *testing.T) {
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenWrite, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFsxwba seq 1`},
		{do: open(2, c2, OpenRead, 1), want: `
revoke client.1 ino 0x100 Fsxba to pAsLsXsFw seq 2
reply req 2 client.2 ino 0x100 size 0 mtime -62135596800 caps pAsLsXs seq 1`},
		{do: func(l *Locker) []Action { return l.SessionEnd(c1, EndTimeout, at(100)) }, want: `
drop client.1 blocklist`,
			check: func(t *testing.T, l *Locker) {
				cp, ok := l.Cap(ino, c1)
				if !ok || !cp.Fencing() {
					t.Fatalf("client.1's cap %+v gone before it is fenced", cp)
				}
			}},
		// Its late ack is not taken: the session is over.
		{do: ack(c1, 2, &Flush{TID: 1, Size: 5, Dirty: FileWrite}, 101), want: ``},
		{do: func(l *Locker) []Action { return l.Fenced(c1, at(102)) }, want: `
grant client.2 ino 0x100 pAsLsXsFscr seq 2`},
	})
}

// A cap update changes what a client wants: a reader that also wants to
// write gets Fw once it is alone; one that gives up what it no longer
// wants frees it for others at once, without a revocation; an update
// that crossed a grant gives nothing back.
func TestWantChanges(t *testing.T) {
	want := func(c ClientID, issueSeq uint64, w Caps, now int) func(l *Locker) []Action {
		return func(l *Locker) []Action { return l.Want(c, ino, capID(l, c), issueSeq, w, nil, at(now)) }
	}
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenRead|OpenWrite, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFsxcrwba seq 1`},
		// It gives up writing (closed its writable descriptor): the
		// write bits go without a revocation.
		{do: want(c1, 1, WantedFor(OpenRead), 1), want: ``,
			check: func(t *testing.T, l *Locker) {
				if cp, _ := l.Cap(ino, c1); cp.Issued != WantedFor(OpenRead) || cp.Revoking() != 0 {
					t.Fatalf("issued %s revoking %s", cp.Issued, cp.Revoking())
				}
			}},
		{do: open(2, c2, OpenRead, 2), want: `
reply req 2 client.2 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFscr seq 1`},
		// Client 2 wants to write: mix; client 1 loses its cache.
		{do: want(c2, 1, WantedFor(OpenRead|OpenWrite), 3), want: `
revoke client.1 ino 0x100 Fsc to pAsLsXsFr seq 2
revoke client.2 ino 0x100 Fsc to pAsLsXsFr seq 2`},
		// Client 1's update crossed nothing (its last issue was seq 1)
		// and gives up reading entirely: client 2 is alone, and may
		// cache again at once, but write only once client 1 has acked
		// seq 2 for the cache it still implements.
		{do: want(c1, 1, Pin, 4), want: `
grant client.2 ino 0x100 pAsLsXsFscr seq 3`},
		{do: ack(c1, 2, nil, 5), want: `
grant client.2 ino 0x100 pAsLsXsFsxcrwba seq 4`},
		{do: ack(c2, 2, nil, 5), want: ``},
		// An update naming an issue older than the cap's crossed a
		// grant: nothing is given back at once; the bits no longer
		// wanted are revoked, to be acked with their flush.
		{do: want(c2, 1, WantedFor(OpenRead), 6), want: `
revoke client.2 ino 0x100 Fxwba to pAsLsXsFscr seq 5`,
			check: func(t *testing.T, l *Locker) {
				if cp, _ := l.Cap(ino, c2); cp.Implemented&FileBuffer == 0 {
					t.Fatalf("a stale update dropped Fb: implemented %s", cp.Implemented)
				}
			}},
	})
}

// The requests of a client whose session ends are dropped unanswered.
func TestSessionEndDropsWaitingRequests(t *testing.T) {
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenWrite, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFsxwba seq 1`},
		{do: stat(2, c2, FieldsAll, 1), want: `
revoke client.1 ino 0x100 Fxwba to pAsLsXsFs seq 2`},
		{do: func(l *Locker) []Action { return l.SessionEnd(c2, EndClosed, at(2)) }, want: `
drop client.2
grant client.1 ino 0x100 pAsLsXsFsxwba seq 3`},
		{do: ack(c1, 3, nil, 3), want: ``},
	})
}

// A revocation not acked within the warning timeout is reported once;
// with an eviction timeout, the client is then dropped.
func TestLaggyClient(t *testing.T) {
	run(t, New(0, Config{RevokeWarn: 60 * time.Second, RevokeEvict: 300 * time.Second}), []step{
		{do: open(1, c1, OpenRead, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFscr seq 1`},
		{do: open(2, c2, OpenWrite, 10), want: `
revoke client.1 ino 0x100 Fsc to pAsLsXsFr seq 2
reply req 2 client.2 ino 0x100 size 0 mtime -62135596800 caps pAsLsXs seq 1`},
		{do: func(l *Locker) []Action { return l.Tick(at(69)) }, want: ``},
		{do: func(l *Locker) []Action { return l.Tick(at(70)) }, want: `
laggy client.1 ino 0x100 Fsc since 1010`},
		{do: func(l *Locker) []Action { return l.Tick(at(71)) }, want: ``},
		{do: func(l *Locker) []Action { return l.Tick(at(310)) }, want: `
drop client.1
grant client.2 ino 0x100 pAsLsXsFsxwba seq 2`},
	})
}

// Acks name the message they answer: an ack of an older revocation
// leaves a later one in force; an ack of a Seq never sent is ignored;
// a flush replayed with an applied TID is acked but not applied.
func TestAckSequencing(t *testing.T) {
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenRead, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFscr seq 1`},
		{do: setattr(5, c3, FieldMode, 1), want: `
revoke client.1 ino 0x100 As to pLsXsFscr seq 2`},
		{do: open(2, c2, OpenWrite, 2), want: `
revoke client.1 ino 0x100 Fsc to pLsXsFr seq 3
reply req 2 client.2 ino 0x100 size 0 mtime -62135596800 caps pLsXs seq 1`},
		{do: ack(c1, 9, nil, 3), want: ``},
		{do: func(l *Locker) []Action { return l.Ack(c1, ino, capID(l, c1)+10, 2, nil, at(3)) }, want: ``},
		// Seq 2 acked: As is gone, Fsc still revoking.
		{do: ack(c1, 2, nil, 3), want: `
reply req 5 client.3 ino 0x100 size 0 mtime -62135596800`,
			check: func(t *testing.T, l *Locker) {
				if cp, _ := l.Cap(ino, c1); cp.Revoking() != FileShared|FileCache {
					t.Fatalf("revoking %s, want Fsc", cp.Revoking())
				}
			}},
		{do: ack(c1, 3, nil, 4), want: `
grant client.2 ino 0x100 pLsXsFw seq 2`},
		{do: func(l *Locker) []Action {
			return l.Ack(c2, ino, capID(l, c2), 2, &Flush{TID: 4, Size: 50, Mtime: at(4), Dirty: FileWrite}, at(5))
		}, want: `
flushack client.2 ino 0x100 tid 4 size 50 mtime 1004`},
		{do: func(l *Locker) []Action {
			return l.Ack(c2, ino, capID(l, c2), 2, &Flush{TID: 4, Size: 80, Mtime: at(6), Dirty: FileWrite}, at(6))
		}, want: `
flushack client.2 ino 0x100 tid 4 size 50 mtime 1004`},
	})
}

// A release that crossed a grant (it names an older IssueSeq) keeps the
// cap: the client will see the grant and release again.
func TestReleaseCrossingGrant(t *testing.T) {
	run(t, New(0, Config{}), []step{
		{do: open(1, c1, OpenRead, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFscr seq 1`},
		{do: open(2, c2, OpenWrite, 1), want: `
revoke client.1 ino 0x100 Fsc to pAsLsXsFr seq 2
reply req 2 client.2 ino 0x100 size 0 mtime -62135596800 caps pAsLsXs seq 1`},
		{do: ack(c1, 2, nil, 2), want: `
grant client.2 ino 0x100 pAsLsXsFw seq 2`},
		{do: release(c2, 1, 3), want: ``,
			check: func(t *testing.T, l *Locker) {
				if _, ok := l.Cap(ino, c2); !ok {
					t.Fatal("a release older than the last grant dropped the cap")
				}
			}},
		{do: release(c2, 2, 4), want: `
grant client.1 ino 0x100 pAsLsXsFscr seq 3`},
	})
}

// Part II: an inode's cap state moves to another rank as a value, with
// a revocation in flight; the client's ack completes it there.
func TestExportImport(t *testing.T) {
	a, b := New(0, Config{}), New(1, Config{})
	run(t, a, []step{
		{do: open(1, c1, OpenWrite, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFsxwba seq 1`},
		{do: open(2, c2, OpenRead, 1), want: `
revoke client.1 ino 0x100 Fsxba to pAsLsXsFw seq 2
reply req 2 client.2 ino 0x100 size 0 mtime -62135596800 caps pAsLsXs seq 1`},
		// The stat puts the file lock in sync: the writer loses Fw
		// and, in the same message, gets Fs, which sync allows.
		{do: stat(3, c2, FieldSize, 2), want: `
revoke client.1 ino 0x100 Fw to pAsLsXsFs seq 3`},
	})
	if _, err := a.Export(ino); !errors.Is(err, ErrBusy) {
		t.Fatalf("export with a waiting stat: %v, want ErrBusy", err)
	}
	run(t, a, []step{
		{do: ack(c1, 3, &Flush{TID: 1, Size: 7, Mtime: at(2), Dirty: FileWrite}, 3), want: `
flushack client.1 ino 0x100 tid 1 size 7 mtime 1002
reply req 3 client.2 ino 0x100 size 7 mtime 1002
revoke client.1 ino 0x100 Fs to pAsLsXsFw seq 4
grant client.2 ino 0x100 pAsLsXsFr seq 2`},
		{do: release(c2, 2, 4), want: `
grant client.1 ino 0x100 pAsLsXsFsxwba seq 5`},
		{do: open(4, c2, OpenRead, 5), want: `
revoke client.1 ino 0x100 Fsxba to pAsLsXsFw seq 6
reply req 4 client.2 ino 0x100 size 7 mtime 1002 caps pAsLsXs seq 1`},
	})
	ic, err := a.Export(ino)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Inodes()) != 0 {
		t.Fatalf("rank 0 still has %v", a.Inodes())
	}
	acts, err := b.Import(ic, at(6))
	if err != nil || len(acts) != 0 {
		t.Fatalf("import: %v, %v", show(acts), err)
	}
	if _, err := b.Import(ic, at(6)); !errors.Is(err, ErrAlreadyHere) {
		t.Fatalf("second import: %v", err)
	}
	run(t, b, []step{
		{do: ack(c1, 6, &Flush{TID: 2, Size: 9, Mtime: at(6), Dirty: FileWrite}, 7), want: `
flushack client.1 ino 0x100 tid 2 size 9 mtime 1006
grant client.2 ino 0x100 pAsLsXsFr seq 2`},
	})
}

// settle acks every revocation in acts, and in what the acks bring,
// until none is left, as prompt clients would.
func settle(t *testing.T, l *Locker, acts []Action) {
	t.Helper()
	for len(acts) > 0 {
		var next []Action
		for _, a := range acts {
			if a.Kind == ActionRevoke {
				next = append(next, l.Ack(a.Client, a.Ino, a.CapID, a.Seq, nil, t0)...)
			}
		}
		acts = next
		if err := l.Verify(ino); err != nil {
			t.Fatal(err)
		}
	}
}

// Paper 3.2, every pairing of two clients' opens: once both have acked
// what they were asked to give back, what each holds of the file and
// the file lock's state.
func TestTwoClientCombinations(t *testing.T) {
	r, w, rw, lazy := OpenRead, OpenWrite, OpenRead|OpenWrite, OpenLazy
	for _, tc := range []struct {
		name       string
		first, sec OpenMode
		state      LockState
		c1, c2     string // the F bits each ends with
	}{
		{"reader, reader", r, r, StateSync, "Fscr", "Fscr"},
		{"reader, writer", r, w, StateMix, "Fr", "Fw"},
		{"writer, reader", w, r, StateMix, "Fw", "Fr"},
		{"writer, writer", w, w, StateMix, "Fw", "Fw"},
		{"read-write, reader", rw, r, StateMix, "Frw", "Fr"},
		{"read-write, read-write", rw, rw, StateMix, "Frw", "Frw"},
		{"lazy writers", rw | lazy, rw | lazy, StateMix, "Frwl", "Frwl"},
		{"lazy writer, reader", w | lazy, r, StateMix, "Fwl", "Fr"},
		{"lazy readers", r | lazy, r | lazy, StateSync, "Fscrl", "Fscrl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(0, Config{})
			settle(t, l, l.Open(1, c1, ino, tc.first, t0))
			settle(t, l, l.Open(2, c2, ino, tc.sec, t0))
			if s, _ := l.LockState(ino, LockFile); s != tc.state {
				t.Errorf("file lock %s, want %s", s, tc.state)
			}
			for _, x := range []struct {
				c    ClientID
				want string
			}{{c1, tc.c1}, {c2, tc.c2}} {
				cp, _ := l.Cap(ino, x.c)
				if got := (cp.Issued & FileMask).String(); got != x.want || cp.Revoking() != 0 {
					t.Errorf("client.%d holds %s (revoking %s), want %s", x.c, got, cp.Revoking(), x.want)
				}
			}
			// The first client closes: the second is alone, and a
			// writer alone buffers.
			cp, _ := l.Cap(ino, c1)
			settle(t, l, l.Release(c1, ino, cp.ID, cp.IssueSeq, nil, t0))
			cp, _ = l.Cap(ino, c2)
			if tc.sec&OpenWrite != 0 && cp.Issued&FileBuffer == 0 {
				t.Errorf("client.2 alone with a writer's open holds %s, without Fb", cp.Issued)
			}
		})
	}
}

// Cap ids made by different ranks differ, so a message about a cap an
// inode's former rank made is never taken for one its new rank made.
func TestCapIDsCarryTheRank(t *testing.T) {
	a, b := New(0, Config{}), New(1, Config{})
	a.Open(1, c1, ino, OpenRead, t0)
	b.Open(1, c1, ino+1, OpenRead, t0)
	ca, _ := a.Cap(ino, c1)
	cb, _ := b.Cap(ino+1, c1)
	if ca.ID == cb.ID || ca.ID&0xffff != 0 || cb.ID&0xffff != 1 {
		t.Fatalf("cap ids %#x (rank 0) and %#x (rank 1)", ca.ID, cb.ID)
	}
}

// Failover: a standby that replayed the journal takes the caps as the
// clients report them, with their unacked flushes, and only then
// (Resume) revokes and grants: the revocation the failed MDS sent and
// never saw acked is sent again.
func TestReconnectAfterFailover(t *testing.T) {
	old := New(0, Config{})
	run(t, old, []step{
		{do: open(1, c1, OpenWrite, 0), want: `
reply req 1 client.1 ino 0x100 size 0 mtime -62135596800 caps pAsLsXsFsxwba seq 1`},
		{do: open(2, c2, OpenRead, 1), want: `
revoke client.1 ino 0x100 Fsxba to pAsLsXsFw seq 2
reply req 2 client.2 ino 0x100 size 0 mtime -62135596800 caps pAsLsXs seq 1`},
	})
	// The MDS dies; client 1 never saw the revocation.
	id1, id2 := capID(old, c1), capID(old, c2)
	l := New(0, Config{})
	acts, err := l.Reconnect(c1, ino, ReconnectCap{CapID: id1, Seq: 1, IssueSeq: 1,
		Issued: WantedFor(OpenWrite), Wanted: WantedFor(OpenWrite),
		Flush: &Flush{TID: 1, Size: 100, Mtime: at(1), Dirty: FileBuffer}}, at(10))
	if err != nil || show(acts) != "flushack client.1 ino 0x100 tid 1 size 100 mtime 1001" {
		t.Fatalf("reconnect client.1: %v\n%s", err, show(acts))
	}
	acts, err = l.Reconnect(c2, ino, ReconnectCap{CapID: id2, Seq: 1, IssueSeq: 1,
		Issued: Pin | AuthShared | LinkShared | XattrShared, Wanted: WantedFor(OpenRead)}, at(10))
	if err != nil || len(acts) != 0 {
		t.Fatalf("reconnect client.2: %v\n%s", err, show(acts))
	}
	// A report that conflicts with what client 1 holds is refused.
	if _, err := l.Reconnect(c3, ino, ReconnectCap{CapID: 7 << 16, Issued: FileRead | FileCache}, at(10)); !errors.Is(err, ErrReconnectConflict) {
		t.Fatalf("conflicting reconnect: %v", err)
	}
	if _, err := l.Reconnect(c2, ino, ReconnectCap{CapID: id2}, at(10)); !errors.Is(err, ErrAlreadyHere) {
		t.Fatalf("second reconnect: %v", err)
	}
	run(t, l, []step{
		{do: func(l *Locker) []Action { return l.Resume(at(11)) }, want: `
revoke client.1 ino 0x100 Fsxba to pAsLsXsFw seq 2`},
		{do: ack(c1, 2, nil, 12), want: `
grant client.2 ino 0x100 pAsLsXsFr seq 2`},
		{do: open(3, c3, OpenRead, 13), want: `
reply req 3 client.3 ino 0x100 size 100 mtime 1001 caps pAsLsXsFr seq 1`,
			check: func(t *testing.T, l *Locker) {
				if id := capID(l, c3); id <= max(id1, id2) {
					t.Fatalf("a cap made after the failover has id %#x, not above %#x and %#x", id, id1, id2)
				}
			}},
	})
}

// A flush sent on its own (fsync, close: wire CapFlush, handled as
// Want) is acked on the flushing cap: the client drops cap messages
// naming another cap, so an ack without the cap's ID left fsync and
// close waiting for ever.
func TestFlushAckNamesTheCap(t *testing.T) {
	l := New(0, Config{})
	l.Open(1, c1, ino, OpenWrite, at(0))
	cp, ok := l.Cap(ino, c1)
	if !ok || cp.ID == 0 {
		t.Fatalf("no cap after open: %+v %v", cp, ok)
	}
	acts := l.Want(c1, ino, cp.ID, cp.IssueSeq, cp.Wanted, &Flush{TID: 7, Size: 6, Mtime: at(1), Dirty: FileWrite | FileBuffer}, at(1))
	var acked bool
	for _, a := range acts {
		if a.Kind != ActionFlushAck {
			continue
		}
		acked = true
		if a.CapID != cp.ID || a.TID != 7 || a.Attrs.Size != 6 {
			t.Fatalf("flush ack %s cap %d, want cap %d tid 7 size 6", a, a.CapID, cp.ID)
		}
	}
	if !acked {
		t.Fatalf("no flush ack in %v", acts)
	}
}
