package locker

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var (
	propSeeds = flag.Int("locker.seeds", 300, "random event sequences TestRandomEvents runs")
	propSeed  = flag.Int("locker.seed", -1, "run only this seed of TestRandomEvents")
)

// world drives a Locker with modelled clients: each client receives the
// Locker's messages in order (a session is an ordered stream), uses only
// the caps it has been told of, writes under write caps, acks every
// revocation with its dirty size, and re-releases a cap it closed if a
// grant crossed its release. The checks:
//   - after every event, Verify: no two clients implement conflicting
//     caps, issued ⊆ what the lock states allow, implemented = issued +
//     revoking;
//   - a client never holds (by the messages it has seen) a bit another
//     client holds and that conflicts with it (the client-side view of
//     the same rule);
//   - a stat asking for the size answers with at least the size every
//     live client had written when the stat was sent;
//   - at the end, once every message is delivered (but to hung
//     clients, which never read theirs), every setattr done, every dead
//     writer fenced and the revoke timeout passed: no revocation is
//     outstanding (every one was acked, or its client evicted), no
//     request waits, every request of a live client was answered once,
//     and every client holds all it wants that the states allow.
type world struct {
	t       *testing.T
	seed    uint64
	rng     *rand.Rand
	l       *Locker
	now     time.Time
	clients []*mclient // every client, by ID-1
	live    []*mclient // the live ones, propClients of them
	nextReq ReqID
	reqs    map[ReqID]*mreq
	held    []heldReq // setattrs answered, not done
	fence   []ClientID
	anyDrop bool // a client was dropped since the flag was cleared
	log     []string
}

type mclient struct {
	id   ClientID
	dead bool
	// zombie: dead, blocklisted, not yet fenced: it may still write with
	// the caps it last knew.
	zombie bool
	// stuck: it no longer reads its messages (a hung client); only the
	// revoke timeout gets rid of it.
	stuck bool
	inbox []Action
	files map[Ino]*mfile
}

// mfile is a client's view of its cap on one inode.
type mfile struct {
	open     bool
	lazy     bool
	capID    uint64 // the cap its messages name
	caps     Caps   // what it uses: as the messages say while open, none once closed
	issueSeq uint64 // the highest IssueSeq its messages carried
	size     uint64 // written locally
	known    uint64 // the size its last message carried
	dirty    Caps   // the bits its unflushed writes were made under
	// releasedCap and releasedWith are the cap and IssueSeq of its last
	// release: a message naming another cap, or a later issue, means
	// the release did not take and must be sent again.
	releasedCap  uint64
	releasedWith uint64
	// For a reconnect after a failover: what it wants, the last seq it
	// saw, and its latest open if unanswered.
	wanted   Caps
	seq      uint64
	awaiting ReqID
}

type mreq struct {
	r        Request
	mode     OpenMode // of an open
	answered int
	// sizes are what each client had written when the request was sent.
	sizes map[ClientID]uint64
}

type heldReq struct {
	ino Ino
	id  ReqID
}

const (
	propClients = 4
	propInodes  = 2
)

func newWorld(t *testing.T, seed uint64) *world {
	w := &world{
		t:    t,
		seed: seed,
		rng:  rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		l:    New(0, Config{RevokeWarn: 30 * time.Second, RevokeEvict: 120 * time.Second}),
		now:  t0,
		reqs: map[ReqID]*mreq{},
	}
	for i := range propClients {
		w.clients = append(w.clients, &mclient{id: ClientID(i + 1), files: map[Ino]*mfile{}})
		w.live = append(w.live, w.clients[i])
	}
	return w
}

func (w *world) fail(format string, args ...any) {
	w.t.Helper()
	tail := w.log[max(0, len(w.log)-40):]
	w.t.Fatalf("seed %d: %s\nlast events:\n  %s", w.seed, fmt.Sprintf(format, args...), joinLines(tail))
}

func joinLines(ls []string) string {
	s := ""
	for i, l := range ls {
		if i > 0 {
			s += "\n  "
		}
		s += l
	}
	return s
}

func (w *world) client(id ClientID) *mclient { return w.clients[id-1] }

func (m *mclient) file(ino Ino) *mfile {
	f := m.files[ino]
	if f == nil {
		f = &mfile{}
		m.files[ino] = f
	}
	return f
}

// route hands the Locker's actions to the clients and the driver's
// bookkeeping, and checks the stat rule as replies go out.
func (w *world) route(acts []Action) {
	for _, a := range acts {
		w.log = append(w.log, "  -> "+a.String())
		switch a.Kind {
		case ActionGrant, ActionRevoke, ActionFlushAck:
			if c := w.client(a.Client); !c.dead {
				c.inbox = append(c.inbox, a)
			}
		case ActionReply:
			r := w.reqs[a.Req]
			if r == nil {
				w.fail("reply to unknown request %d", a.Req)
			}
			r.answered++
			if r.r.Op == OpSetattr {
				w.held = append(w.held, heldReq{ino: a.Ino, id: a.Req})
			}
			if r.r.Op == OpStat && r.r.Fields&FieldSize != 0 {
				for c, sz := range r.sizes {
					if !w.client(c).dead && a.Attrs.Size < sz {
						w.fail("stat %d answered size %d, but client.%d had written %d before it", a.Req, a.Attrs.Size, c, sz)
					}
				}
			}
			if r.r.Op == opOpen {
				if c := w.client(a.Client); !c.dead {
					c.inbox = append(c.inbox, a)
				}
			}
		case ActionDropClient:
			c := w.client(a.Client)
			if c.dead {
				w.fail("client.%d dropped twice", c.id)
			}
			c.dead, c.inbox = true, nil
			w.anyDrop = true
			// A new session takes its place.
			w.live[slices.Index(w.live, c)] = w.newClient()
			writer := false
			for _, f := range c.files {
				writer = writer || f.caps&AnyWrite != 0
			}
			if writer && !a.Blocklist {
				w.fail("client.%d knew it held write caps, dropped without a blocklist", c.id)
			}
			if a.Blocklist {
				c.zombie = true
				w.fence = append(w.fence, a.Client)
			} else {
				c.forget()
			}
		case ActionLaggy:
		default:
			w.fail("unexpected action %s", a)
		}
	}
	for _, ino := range w.l.Inodes() {
		if err := w.l.Verify(ino); err != nil {
			w.fail("%v", err)
		}
	}
	w.checkClientViews()
}

// opOpen marks the model's open requests (the Locker has no request
// kind for them: Open is its own event).
const opOpen Op = 100

// forget drops a dead client's caps: it can do nothing with them (it
// held none to write, or it is fenced).
func (m *mclient) forget() {
	for _, f := range m.files {
		f.caps = 0
	}
	m.zombie = false
}

// checkClientViews: what a live client believes it holds the Locker
// counts as implemented; and no two clients that may act on their caps
// (live ones, and dead ones not yet fenced) believe they hold
// conflicting bits.
func (w *world) checkClientViews() {
	for ino := range Ino(propInodes) {
		for _, a := range w.clients {
			fa := a.files[ino]
			if fa == nil || fa.caps == 0 {
				continue
			}
			for _, b := range w.clients {
				fb := b.files[ino]
				if b.id > a.id && fb != nil && fa.caps.ConflictsWith(fb.caps) {
					w.fail("client.%d (dead %v) believes it holds %s on %#x, client.%d (dead %v) %s", a.id, a.dead, fa.caps, ino, b.id, b.dead, fb.caps)
				}
			}
			if a.dead {
				continue
			}
			cp, ok := w.l.Cap(ino, a.id)
			if !ok || cp.ID != fa.capID || fa.caps&^cp.Implemented != 0 {
				w.fail("client.%d believes it holds %s on %#x (cap %d), the MDS counts %s implemented (cap %d, %v)", a.id, fa.caps, ino, fa.capID, cp.Implemented, cp.ID, ok)
			}
		}
	}
}

// step performs one random event.
func (w *world) step() {
	c := w.live[w.rng.IntN(len(w.live))]
	ino := Ino(w.rng.IntN(propInodes))
	switch op := w.rng.IntN(100); {
	case op < 15: // open
		mode := OpenMode(1 + w.rng.IntN(3))
		if w.rng.IntN(4) == 0 {
			mode |= OpenLazy
		}
		w.nextReq++
		f := c.file(ino)
		f.open, f.lazy = true, f.lazy || mode&OpenLazy != 0
		f.wanted |= WantedFor(mode)
		f.awaiting = w.nextReq
		w.reqs[w.nextReq] = &mreq{r: Request{ID: w.nextReq, Client: c.id, Ino: ino, Op: opOpen}, mode: mode}
		w.log = append(w.log, fmt.Sprintf("open client.%d %#x mode %d", c.id, ino, mode))
		w.route(w.l.Open(w.nextReq, c.id, ino, mode, w.now))
	case op < 45: // deliver a message
		w.deliver(c)
	case op < 55: // write under the caps held
		f := c.files[ino]
		if f != nil && f.open && f.caps&(FileWrite|FileBuffer|FileExcl) != 0 {
			f.size = max(f.size, f.known) + uint64(1+w.rng.IntN(4096))
			// Synchronous writes reach the OSDs at once, but the size
			// reaches the MDS only with the next flush either way.
			f.dirty |= f.caps & (FileWrite | FileBuffer | FileExcl | FileExtend)
			w.log = append(w.log, fmt.Sprintf("write client.%d %#x size %d under %s", c.id, ino, f.size, f.caps))
		}
	case op < 62: // close
		f := c.files[ino]
		if f != nil && f.open {
			f.open = false
			w.release(c, ino, f)
		}
	case op < 67: // change wants, giving back what it no longer wants
		if f := c.files[ino]; f != nil && f.open && f.capID != 0 {
			want := WantedFor(OpenMode(1+w.rng.IntN(3)) | OpenLazy*OpenMode(w.rng.IntN(2)))
			var fl *Flush
			if f.dirty != 0 {
				fl = &Flush{Size: f.size, Mtime: w.now, Dirty: f.dirty}
				f.dirty = 0
			}
			f.caps &= want
			f.wanted = want | Pin
			w.log = append(w.log, fmt.Sprintf("want client.%d %#x cap %d issue %d %s", c.id, ino, f.capID, f.issueSeq, want))
			w.route(w.l.Want(c.id, ino, f.capID, f.issueSeq, want, fl, w.now))
		}
	case op < 80: // a metadata request
		w.nextReq++
		r := Request{ID: w.nextReq, Client: c.id, Ino: ino, Op: OpStat, Fields: Field(1 + w.rng.IntN(int(FieldsAll)))}
		if w.rng.IntN(4) == 0 {
			r.Op = OpSetattr
		}
		m := &mreq{r: r, sizes: map[ClientID]uint64{}}
		for _, o := range w.clients {
			if f := o.files[ino]; f != nil && !o.dead {
				m.sizes[o.id] = f.size
			}
		}
		w.reqs[r.ID] = m
		w.log = append(w.log, fmt.Sprintf("%s %d client.%d %#x fields %#x", r.Op, r.ID, c.id, ino, uint32(r.Fields)))
		w.route(w.l.Request(r, w.now))
	case op < 86: // a setattr finishes
		if len(w.held) > 0 {
			h := w.held[0]
			w.held = w.held[1:]
			attrs := w.l.Attrs(h.ino)
			attrs.Mtime = w.now
			w.log = append(w.log, fmt.Sprintf("done %d", h.id))
			w.route(w.l.Done(h.ino, h.id, &attrs, w.now))
		}
	case op < 87: // a session ends
		reason := EndReason(1 + w.rng.IntN(3))
		w.log = append(w.log, fmt.Sprintf("session end client.%d", c.id))
		w.route(w.l.SessionEnd(c.id, reason, w.now))
	case op < 88: // a client hangs
		if !c.stuck && w.rng.IntN(3) == 0 {
			c.stuck = true
			w.log = append(w.log, fmt.Sprintf("client.%d hangs", c.id))
		}
	case op < 89: // the MDS fails over
		if w.rng.IntN(3) == 0 {
			w.failover()
		}
	case op < 92: // a fence takes effect
		if len(w.fence) > 0 {
			id := w.fence[0]
			w.fence = w.fence[1:]
			w.log = append(w.log, fmt.Sprintf("fenced client.%d", id))
			w.client(id).forget()
			w.route(w.l.Fenced(id, w.now))
		}
	default:
		w.tick()
	}
}

func (w *world) tick() {
	w.now = w.now.Add(time.Duration(1+w.rng.IntN(20)) * time.Second)
	w.log = append(w.log, fmt.Sprintf("tick %d", w.now.Unix()))
	w.route(w.l.Tick(w.now))
}

// failover replaces the Locker by a new one, as a standby does after
// replaying the journal: messages in flight are lost; hung clients do
// not reconnect and, like the dead not yet fenced, are fenced before
// the new rank resumes; the others report their open files' caps, then
// resend their unanswered requests.
func (w *world) failover() {
	w.log = append(w.log, "failover")
	old := w.l
	w.l = New(0, old.cfg)
	// Replaying the journal brings back the attributes the old rank
	// had acknowledged.
	for _, ino := range old.Inodes() {
		w.l.Load(ino, old.Attrs(ino))
	}
	w.held, w.fence = nil, nil
	for _, c := range w.clients {
		c.inbox = nil
		if c.stuck && !c.dead {
			c.dead = true
			w.live[slices.Index(w.live, c)] = w.newClient()
		}
		if c.dead {
			c.forget()
		}
	}
	var resend []ReqID
	var acks []Action // routed once every client has reconnected
	for _, c := range w.live {
		for ino := range Ino(propInodes) {
			f := c.files[ino]
			if f == nil || !f.open {
				continue
			}
			if f.awaiting != 0 {
				resend = append(resend, f.awaiting)
			}
			if f.capID == 0 || (f.caps == 0 && f.dirty == 0) {
				continue // it holds nothing; the resent open brings a cap
			}
			var fl *Flush
			if f.dirty != 0 {
				fl = &Flush{Size: f.size, Mtime: w.now, Dirty: f.dirty}
				f.dirty = 0
			}
			rc := ReconnectCap{CapID: f.capID, Seq: f.seq, IssueSeq: f.issueSeq, Issued: f.caps, Wanted: f.wanted, Lazy: f.lazy, Flush: fl}
			w.log = append(w.log, fmt.Sprintf("reconnect client.%d %#x %+v", c.id, ino, rc))
			acts, err := w.l.Reconnect(c.id, ino, rc, w.now)
			if err != nil {
				w.fail("reconnect: %v", err)
			}
			acks = append(acks, acts...)
		}
	}
	w.route(append(acks, w.l.Resume(w.now)...))
	for id, r := range w.reqs {
		if r.answered == 0 && r.r.Op != opOpen && !w.client(r.r.Client).dead {
			resend = append(resend, id)
		}
	}
	slices.Sort(resend)
	for _, id := range resend {
		r := w.reqs[id]
		r.answered = 0 // its answer, if any, was lost with the MDS
		w.log = append(w.log, fmt.Sprintf("resend %d", id))
		if r.r.Op == opOpen {
			w.route(w.l.Open(id, r.r.Client, r.r.Ino, r.mode, w.now))
		} else {
			w.route(w.l.Request(r.r, w.now))
		}
	}
}

func (w *world) newClient() *mclient {
	c := &mclient{id: ClientID(len(w.clients) + 1), files: map[Ino]*mfile{}}
	w.clients = append(w.clients, c)
	return c
}

// deliver hands c its oldest message.
func (w *world) deliver(c *mclient) bool {
	if len(c.inbox) == 0 || c.stuck {
		return false
	}
	a := c.inbox[0]
	c.inbox = c.inbox[1:]
	if a.Kind == ActionFlushAck {
		return true
	}
	f := c.file(a.Ino)
	w.log = append(w.log, fmt.Sprintf("client.%d gets %s cap %d issue %d", c.id, a, a.CapID, a.IssueSeq))
	// A message about the cap last released, issuing nothing since the
	// release, was sent before the release arrived: if the release took,
	// that cap is gone, so the client only acks it.
	stale := a.CapID == f.releasedCap && a.IssueSeq <= f.releasedWith
	if !stale {
		if a.CapID != f.capID {
			f.capID, f.issueSeq, f.caps = a.CapID, 0, 0
		}
		// A message that issues something the client has not seen sets
		// its caps; one that does not can only take away (it may have
		// been sent before the client gave bits back in an update).
		if f.open && a.IssueSeq > f.issueSeq {
			f.caps = a.Caps
		} else {
			f.caps &= a.Caps
		}
		f.issueSeq = max(f.issueSeq, a.IssueSeq)
		f.seq = max(f.seq, a.Seq)
		f.known = a.Attrs.Size
	}
	if a.Kind == ActionReply && a.Req == f.awaiting {
		f.awaiting = 0
	}
	if a.Kind == ActionRevoke {
		// Stop using the revoked bits, flush what they covered, ack.
		if a.Caps&a.Revoking != 0 {
			w.fail("revoke %s both keeps and takes bits", a)
		}
		var fl *Flush
		if f.dirty != 0 {
			fl = &Flush{Size: f.size, Mtime: w.now, Dirty: f.dirty}
			f.dirty = 0
		}
		w.route(w.l.Ack(c.id, a.Ino, a.CapID, a.Seq, fl, w.now))
	}
	if !stale && !f.open && (f.releasedCap != f.capID || f.issueSeq > f.releasedWith) {
		w.release(c, a.Ino, f)
	}
	return true
}

func (w *world) release(c *mclient, ino Ino, f *mfile) {
	var fl *Flush
	if f.dirty != 0 {
		fl = &Flush{Size: f.size, Mtime: w.now, Dirty: f.dirty}
		f.dirty = 0
	}
	w.log = append(w.log, fmt.Sprintf("release client.%d %#x cap %d issue seq %d", c.id, ino, f.capID, f.issueSeq))
	f.caps, f.wanted = 0, 0
	f.releasedCap, f.releasedWith = f.capID, f.issueSeq
	w.route(w.l.Release(c.id, ino, f.capID, f.issueSeq, fl, w.now))
}

// drain delivers everything, finishes the setattrs and fences the dead,
// until nothing moves; then checks the end state.
func (w *world) drain() {
	for round := 0; ; round++ {
		if round > 10000 {
			w.fail("the system does not settle")
		}
		moved := false
		for _, c := range w.clients {
			for w.deliver(c) {
				moved = true
			}
		}
		for len(w.held) > 0 {
			h := w.held[0]
			w.held = w.held[1:]
			w.route(w.l.Done(h.ino, h.id, nil, w.now))
			moved = true
		}
		for len(w.fence) > 0 {
			id := w.fence[0]
			w.fence = w.fence[1:]
			w.client(id).forget()
			w.route(w.l.Fenced(id, w.now))
			moved = true
		}
		if !moved {
			// Only hung clients are left to answer: let the revoke
			// timeout pass.
			n := len(w.fence)
			w.now = w.now.Add(w.l.cfg.RevokeEvict)
			w.route(w.l.Tick(w.now))
			if len(w.fence) == n && !w.anyDrop {
				break
			}
			w.anyDrop = false
		}
	}
	for _, ino := range w.l.Inodes() {
		in := w.l.inodes[ino]
		if len(in.waiting) != 0 {
			w.fail("ino %#x: requests still wait: %v", ino, in.waiting[0])
		}
		for _, c := range in.clientOrder() {
			cp := in.caps[c]
			if cp.Revoking() != 0 || cp.fencing {
				w.fail("ino %#x client.%d: revoking %s fencing %v after the drain", ino, c, cp.Revoking(), cp.fencing)
			}
			if missing := cp.Wanted & in.allowedFor(c) &^ cp.Issued; missing != 0 {
				w.fail("ino %#x client.%d wants %s, allowed, not issued (%s)", ino, c, missing, in.statesString())
			}
		}
	}
	for id, r := range w.reqs {
		dead := w.client(r.r.Client).dead
		if r.answered > 1 || (!dead && r.answered != 1) {
			w.fail("request %d (%s of client.%d, dead %v) answered %d times", id, r.r.Op, r.r.Client, dead, r.answered)
		}
	}
}

func TestRandomEvents(t *testing.T) {
	for seed := range uint64(*propSeeds) {
		if *propSeed >= 0 && seed != uint64(*propSeed) {
			continue
		}
		w := newWorld(t, seed)
		for range 400 {
			w.step()
		}
		w.drain()
	}
}

// FuzzRandomEvents runs TestRandomEvents's world from a fuzzed seed and
// length.
func FuzzRandomEvents(f *testing.F) {
	f.Add(uint64(1), uint16(400))
	f.Add(uint64(77), uint16(1000))
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16) {
		w := newWorld(t, seed)
		for range int(steps) % 2000 {
			w.step()
		}
		w.drain()
	})
}
