package osd

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/wire"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/osd/recovery"
	"github.com/cuttlestore/cuttle/internal/osd/replread"
	"github.com/cuttlestore/cuttle/internal/osd/scrub"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// pg is one placement group held by this OSD.
type pg struct {
	o    *OSD
	id   osdmap.PG
	coll objectstore.CollectionID

	mu      sync.Mutex
	info    pglog.Info
	log     *pglog.Log
	pool    osdmap.Pool // as of epoch
	epoch   uint64      // the newest map the PG has seen
	fences  *osdmap.Map // that map, for its blocklist (blocklist.go); nil before the first
	acting  []int32
	upFrom  []uint32 // the acting OSDs' up_from epochs
	primary int32    // -1: none
	// queue holds the PG's work, each key's items in order, the running
	// one first: client ops and recovery pushes by object, rep ops and
	// scrub chunks on keys of their own (opqueue.go).
	queue *opq.Queue[qkey, work]
	// writes are the writes replicating, by tid.
	writes map[uint64]*write
	tid    uint64
	// acked is, for each replica, the newest write of this interval it
	// committed (acklag.go): with the writes it has yet to commit, the
	// replication lag a pool in ack primary shows.
	acked map[int32]wire.Version
	// lagging counts the writes of the interval answered before every
	// member committed them (ack primary; bounded by
	// ackPrimaryLagLimit).
	lagging int
	// parked requests wait for the PG to be active: peered, with
	// min_size OSDs acting.
	parked []*request
	// run is the primary's peering of the current interval (nil on a
	// replica, or before the first map); activated is set once it has
	// brought every member to the same history (recovery.go).
	run       *peerRun
	activated bool
	// missing are the objects this OSD's log says it has but its store
	// lacks (persisted with the log); recPlan, on an active primary,
	// plans the pushes of those each other member lacks; each push is an
	// item of the queue on its object's key (missing.go).
	missing map[objid.ID]bool
	recPlan *recovery.Plan
	// recoverer is the run whose recoverer (recoverReplicas) is due or
	// running: set at activation, cleared once it finds every member
	// complete, so that a replica refusing a write later in the interval
	// starts one again (replicaRefusedLocked).
	recoverer *peerRun
	// unfound are the objects peering could not find a copy of, and
	// loseUnfound says an operator told it to go on without them,
	// revertUnfound that it reverts them to older copies (unfound.go).
	unfound       []objid.ID
	loseUnfound   bool
	revertUnfound bool
	// recoveryKick wakes the recoverer when an object it skipped (held
	// by client ops or a push) is free again.
	recoveryKick chan struct{}
	// up is the PG's up set: it differs from acting while a temporary
	// acting set (pg_temp) lets the old members serve.
	up []int32
	// down says why peering cannot go on (a past interval none of whose
	// OSDs is up), and blockedBy lists those OSDs; both clear when the
	// interval ends.
	down      string
	blockedBy []int32
	// peerStep says what peering is doing (querying, pulling, pushing,
	// activating), for operators.
	peerStep string
	// recovering names what recovery is doing ("recovering",
	// "backfilling", or "recovery_wait" and "backfill_wait" while it
	// waits for one of the OSD's recovery slots; empty otherwise), and
	// missingCopies counts the object copies it has still to make.
	recovering    string
	missingCopies int64
	// backfillFull are the acting OSDs the PG's map marks backfillfull
	// or full: backfill pushes nothing to them (full.go, recPlan).
	backfillFull map[int32]bool
	// waiters are the messages tasks after peering wait for (scrub.go).
	waiters map[waitKey]chan peerEvent
	// scrubbing names the scrub running ("scrubbing", "scrubbing+deep",
	// with "+repair"), scrubToken numbers its requests, inconsistent is
	// what the last scrub found, and born is when this OSD instantiated
	// the PG (the first scrub is due an interval after it).
	scrubbing    string
	scrubToken   uint64
	inconsistent map[objid.ID]scrub.Inconsistency
	born         time.Time
	// watch is the watch/notify state of the PG's objects while this
	// OSD is its primary (watches.go).
	watch *pgWatch
	// layout is the pg_num the PG's collection is split for (split.go;
	// 0 until known).
	layout uint32
	// holdWrites is set while a pending merge the PG takes part in holds
	// its writes (mergepg.go): they are answered ESTALE, and the clients
	// wait for the map that merges.
	holdWrites bool
	// replRead is a replica's, and readHolds a primary's, state for
	// balanced reads (replread.go).
	replRead  replread.Replica
	readHolds replread.Holds
	// idleMark is the primary's state for the idle watermark, and idleTimer
	// its timer (replread.go).
	idleMark  replread.Idle
	idleTimer clock.Timer
}

func newPG(o *OSD, info pglog.Info, log *pglog.Log, missing map[objid.ID]bool) *pg {
	if missing == nil {
		missing = map[objid.ID]bool{}
	}
	return &pg{o: o, id: info.PG, coll: objectstore.PGCollection(info.PG.Pool, info.PG.Seed), info: info, log: log,
		missing: missing, primary: -1, queue: newOpQueue(o.policy), writes: map[uint64]*write{},
		recoveryKick: make(chan struct{}, 1), born: o.cfg.Clock.Now(), watch: newPGWatch(o.options().WatchTimeout)}
}

// loadPG reads a PG's info, log and missing set from the store.
func (o *OSD) loadPG(ctx context.Context, id osdmap.PG) (*pg, error) {
	info, log, err := pglog.Load(ctx, o.cfg.Store, id)
	if err != nil {
		return nil, err
	}
	missing, err := pglog.LoadMissing(ctx, o.cfg.Store, id)
	if err != nil {
		return nil, err
	}
	return newPG(o, info, log, missing), nil
}

// advance tells the PG of a new map: mp is its placement if this OSD is in
// the acting set (ok), and the zero value otherwise. A change of acting
// set or primary starts a new interval, which began at epoch start (see
// OSD.intervalStart): unfinished writes and queued requests are answered
// -ESTALE, so clients resend to whoever serves now.
func (p *pg) advance(m *osdmap.Map, mp osdmap.Mapping, ok bool, start uint64) {
	epoch := uint64(m.Epoch())
	p.mu.Lock()
	if epoch <= p.epoch {
		p.mu.Unlock()
		return
	}
	acting, primary := []int32(nil), int32(-1)
	if ok {
		acting, primary = mp.Acting, mp.ActingPrimary
	}
	p.up = slices.Clone(mp.Up)
	upFrom := make([]uint32, len(acting))
	for i, id := range acting {
		upFrom[i] = uint32(m.OSD(id).UpFrom)
	}
	// A member that restarted (a new up_from) lost what it had not
	// committed: that too starts a new interval.
	changed := !slices.Equal(acting, p.acting) || primary != p.primary || !slices.Equal(upFrom, p.upFrom) ||
		pgNumChanged(p.pool, m.Pool(p.id.Pool), p.id.Seed) // a split or merge (split.go)
	p.epoch = epoch
	prev := p.fences
	p.fences = m
	p.upFrom = upFrom
	if pool := m.Pool(p.id.Pool); pool != nil {
		p.pool = *pool
		p.holdWrites = pool.MergeParticipant(p.id.Seed)
	}
	var stale []work
	switch {
	case changed:
		p.acting, p.primary = acting, primary
		p.info.SameIntervalSince = start
		stale = p.endIntervalLocked()
		p.startPeeringLocked(m)
		p.o.statsChanged()
	case p.down != "" && p.isPrimaryLocked() && blockersChanged(prev, m, p.blockedBy):
		// An OSD the down PG waits for came back outside the acting
		// set, or was declared lost: peer again (Ceph's prior set
		// "affected by" the map).
		stale = p.repeerLocked(m)
		p.o.statsChanged()
	}
	p.holdWatchesLocked() // the pool's min_size may have changed
	fullChanged := p.noteBackfillFullLocked(m)
	parked := p.parked
	p.parked = nil
	p.mu.Unlock()
	if fullChanged {
		p.kickRecovery() // a backfill target may take data again, or not
		p.o.statsChanged()
	}
	abandonAll(stale, epoch)
	for _, r := range parked {
		p.enqueue(r)
	}
}

// blockersChanged reports whether m, since prev, has one of the OSDs a
// down PG waits for up again, or declared lost.
func blockersChanged(prev, m *osdmap.Map, blockedBy []int32) bool {
	for _, id := range blockedBy {
		o := m.OSD(id)
		var was osdmap.OSD
		if prev != nil {
			was = prev.OSD(id)
		}
		if o.IsUp() && !was.IsUp() || o.LostAt != was.LostAt {
			return true
		}
	}
	return false
}

// endIntervalLocked abandons the writes in flight and returns what must
// be answered as abandoned (work.abandon): the writes' requests, which
// must be told to resend, every item of the op queue that has not
// started (the running ones notice by themselves) and the notifies in
// progress (the watch state is forgotten).
func (p *pg) endIntervalLocked() []work {
	var stale []work
	for tid, w := range p.writes {
		for _, r := range w.reqs {
			r.dropBuffer() // rep ops referring to it may be queued still
			stale = append(stale, r)
		}
		w.abandoned = true
		w.held = nil // as dropBuffer: rep ops referring to them may be queued still
		delete(p.writes, tid)
		p.readHolds.Wake(tid)
	}
	clear(p.acked)
	p.lagging = 0
	stale = p.queue.Cut(stale)
	for _, r := range p.watchResetLocked() {
		stale = append(stale, r)
	}
	return stale
}

// isPrimaryLocked reports whether this OSD is the PG's acting primary.
func (p *pg) isPrimaryLocked() bool { return p.primary == p.o.cfg.ID }

// activeLocked reports whether the PG may serve writes: enough OSDs act.
func (p *pg) activeLocked() bool {
	return p.isPrimaryLocked() && p.activated && len(p.acting) >= max(p.pool.MinSize, 1)
}

// replicasLocked returns the acting OSDs other than this one.
func (p *pg) replicasLocked() []int32 {
	out := make([]int32, 0, len(p.acting))
	for _, id := range p.acting {
		if id != p.o.cfg.ID && id >= 0 {
			out = append(out, id)
		}
	}
	return out
}

// saveInfoLocked queues a transaction saving the PG's info. It queues
// under p.mu, as writes do, so that infos reach the store in the order
// they were made: one saved after a newer write's would undo its update.
func (p *pg) saveInfoLocked() (*objectstore.Completion, error) {
	var t objectstore.Transaction
	pglog.SaveInfoTxn(&t, p.info)
	return p.o.cfg.Store.Queue(p.o.ctx, &t)
}
