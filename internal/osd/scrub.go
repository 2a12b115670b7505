package osd

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/osd/opq"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/osd/scrub"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// Scrub compares the copies of a PG's objects across its acting members,
// a chunk of objects (in hash order) at a time: a light scrub compares
// sizes, versions and attributes; a deep scrub also reads every byte
// (which verifies the store's checksums) and compares data and omap
// digests. The primary asks each member for a scrub map of the chunk
// (ScrubRequest, ScrubMap), builds its own, and compares. Copies that
// cannot be read, or that disagree with the authoritative copy, make the
// object inconsistent; repair copies the authoritative copy over the bad
// ones with the recovery messages (PGPull, PGPush).
//
// Scrub does not stop writes. An object written while its chunk is
// compared may differ between maps taken at different moments; such
// objects (written since the chunk began, or replicating when it began)
// are left for the next scrub rather than reported.
//
// A client read that meets a checksum error on the primary fetches the
// object from a replica, repairs the primary's copy and is answered from
// it; the client never sees the error while a good copy exists.
//
// Each chunk is an item of the PG's op queue (opqueue.go), class Scrub,
// on the PG's scrub key: it costs one per object for a light scrub, the
// objects' bytes for a deep one; it holds no object's key, so client ops
// never wait behind it. The OSD runs one scrub at a time (scrubsched.go).
//
// This file is the driver: it lists the chunks, builds this OSD's scrub
// map, gathers the members', records the result and carries repairs out.
// The decisions (which objects are inconsistent and why, the
// authoritative copy, what a repair pulls and pushes, the digests a
// scrub map carries) are internal/osd/scrub's.

// scrubChunk is how many objects one scrub map covers.
const scrubChunk = 64

// scrubWait bounds the wait for a member's scrub map or a repair's
// answer.
const scrubWait = time.Minute

var errScrubTimeout = errors.New("scrub: a member did not answer")

// waitKey names a message a task of the primary waits for once the PG is
// active (peering's messages go through its run instead).
type waitKey struct {
	typ    uint16
	from   int32
	object objid.ID
	token  uint64
}

// await registers keys, all answered on the returned channel, until done
// is called.
func (p *pg) await(keys ...waitKey) (ch <-chan peerEvent, done func()) {
	c := make(chan peerEvent, len(keys))
	p.mu.Lock()
	if p.waiters == nil {
		p.waiters = map[waitKey]chan peerEvent{}
	}
	for _, k := range keys {
		p.waiters[k] = c
	}
	p.mu.Unlock()
	return c, func() {
		p.mu.Lock()
		for _, k := range keys {
			if p.waiters[k] == c {
				delete(p.waiters, k)
			}
		}
		p.mu.Unlock()
	}
}

// deliver hands msg to whoever waits for k, and reports whether someone
// did.
func (p *pg) deliver(k waitKey, msg any) bool {
	p.mu.Lock()
	c := p.waiters[k]
	p.mu.Unlock()
	if c == nil {
		return false
	}
	select {
	case c <- peerEvent{k.from, msg}:
	default: // a duplicate: the first answer is taken
	}
	return true
}

// receive waits for a message on c, until the interval ends or timeout.
func (p *pg) receive(r *peerRun, c <-chan peerEvent, timeout time.Duration) (peerEvent, error) {
	timer := p.o.cfg.Clock.NewTimer(timeout)
	defer timer.Stop()
	select {
	case ev := <-c:
		return ev, nil
	case <-r.done:
		return peerEvent{}, errIntervalEnded
	case <-p.o.ctx.Done():
		return peerEvent{}, errIntervalEnded
	case <-timer.C():
		return peerEvent{}, errScrubTimeout
	}
}

// scrubJob is a scrub to run on a PG this OSD is primary of.
type scrubJob struct {
	pg           *pg
	deep, repair bool
}

// errNotScrubbable means the PG cannot be scrubbed now.
var errNotScrubbable = errors.New("the PG is not active and clean on this primary")

// scrub scrubs the whole PG; with repair it then repairs what it found.
func (p *pg) scrub(deep, repair bool) error {
	p.mu.Lock()
	r := p.run
	if r == nil || !p.activeLocked() || len(p.acting) < p.pool.Size || p.scrubbing != "" || p.recPlan.Pending() {
		p.mu.Unlock()
		return errNotScrubbable
	}
	replicas := p.replicasLocked()
	p.scrubbing = "scrubbing"
	if deep {
		p.scrubbing = "scrubbing+deep"
	}
	p.mu.Unlock()
	p.o.statsChanged()
	defer p.setScrubbing("")
	found := map[objid.ID]scrub.Inconsistency{}
	cursor := objid.ID{}
	for {
		end, n, err := p.chunkEnd(cursor)
		if err != nil {
			return err
		}
		start := cursor
		j := &chunkJob{run: func() error { return p.scrubChunk(r, replicas, start, end, deep, found) }, done: make(chan struct{})}
		if err := p.queueChunk(j, n, deep); err != nil {
			return err
		}
		if end.IsMax() {
			break
		}
		cursor = end
	}
	if deep {
		if err := p.scrubSnapIndex(repair, found); err != nil {
			return err
		}
	}
	if repair && len(found) > 0 {
		p.setScrubbing(p.scrubbingState() + "+repair")
		for id, inc := range found {
			plan, err := scrub.PlanRepair(id, inc, p.o.cfg.ID)
			if errors.Is(err, scrub.ErrMisplaced) {
				p.o.log.Error("scrub: repair leaves an object stored in a PG its name does not map to where it is "+
					"(repair cannot move it to that PG); its data can be saved from the stopped OSD with cuttle objectstore get",
					"pg", p.id.String(), "object", id.String(), "why", inc.Why)
				continue
			}
			if err == nil {
				err = p.repairObject(r, id, plan)
			}
			if err != nil {
				p.o.log.Error("scrub: repair failed", "pg", p.id.String(), "object", id.String(), "err", err)
				continue
			}
			p.o.log.Info("scrub: repaired", "pg", p.id.String(), "object", id.String(), "from", inc.Auth, "to", inc.Bad)
			delete(found, id)
		}
	}
	return p.finishScrub(deep, found)
}

// chunkEnd returns the end of the chunk that begins at cursor (the first
// object after scrubChunk of them here, or objid.Max()) and how many
// objects it holds here.
func (p *pg) chunkEnd(cursor objid.ID) (objid.ID, int, error) {
	objs, next, err := p.o.cfg.Store.ListObjects(p.o.ctx, p.coll, cursor, scrubChunk)
	if err != nil {
		return objid.ID{}, 0, fmt.Errorf("scrub: list pg %v: %w", p.id, err)
	}
	return next, len(objs), nil
}

// chunkJob is a chunk of a scrub, an item of the PG's op queue on its
// scrub key. done is closed once it ran (err is its result) or was cut
// from the queue.
type chunkJob struct {
	run  func() error
	err  error
	done chan struct{}
}

// abandon ends a chunk that will not run: its interval ended.
func (j *chunkJob) abandon(uint64) {
	j.err = errIntervalEnded
	close(j.done)
}

// queueChunk runs chunk j of n objects through the op queue, here if it
// starts at once (Today's policy starts it: the PG scrubs one chunk at a
// time), and returns its result.
func (p *pg) queueChunk(j *chunkJob, n int, deep bool) error {
	key := scrubKey()
	p.mu.Lock()
	cost := int64(n)
	if deep {
		cost *= int64(p.objectSizeLocked())
	}
	start := p.queue.Add(key, opq.Scrub, max(cost, 1), j)
	p.mu.Unlock()
	if start {
		p.runKey(key, j)
	}
	select {
	case <-j.done:
		return j.err
	case <-p.o.ctx.Done():
		return errIntervalEnded
	}
}

// scrubChunk gathers the members' scrub maps of the objects in [start,
// end) and adds what scrub.Chunk finds wrong to found.
func (p *pg) scrubChunk(r *peerRun, replicas []int32, start, end objid.ID, deep bool, found map[objid.ID]scrub.Inconsistency) error {
	lu, replicating := p.fluxStart()
	p.mu.Lock()
	p.scrubToken++
	token := p.scrubToken
	h := wire.PGInterval{PG: p.id, Epoch: p.epoch, IntervalStart: r.interval}
	p.mu.Unlock()
	keys := make([]waitKey, len(replicas))
	for i, x := range replicas {
		keys[i] = waitKey{typ: wire.TypeScrubMap, from: x, token: token}
	}
	c, done := p.await(keys...)
	defer done()
	req := wire.ScrubRequest{PGInterval: h, Token: token, Start: start, End: end, Deep: deep}.Encode()
	for _, x := range replicas {
		if err := p.o.sendToOSD(x, msgr.Message{Type: wire.TypeScrubRequest, Version: 1, Payload: req}); err != nil {
			return fmt.Errorf("scrub: ask osd.%d: %w", x, err)
		}
	}
	own, err := p.scrubMap(start, end, deep)
	if err != nil {
		return err
	}
	scrubMaps := map[int32][]wire.ScrubObject{p.o.cfg.ID: own}
	for len(scrubMaps) < len(replicas)+1 {
		ev, err := p.receive(r, c, scrubWait)
		if err != nil {
			return err
		}
		scrubMaps[ev.from] = ev.msg.(wire.ScrubMap).Objects
	}
	flux := p.fluxSince(lu, replicating)
	p.mu.Lock()
	pool := p.pool
	p.mu.Unlock()
	chunk := scrub.Chunk{PG: p.id, Pool: pool, Primary: p.o.cfg.ID, Maps: scrubMaps, InFlux: flux}
	maps.Copy(found, chunk.Check())
	return nil
}

// fluxStart notes, as a chunk's scrub begins, the PG's last update and
// the objects whose writes are still replicating.
func (p *pg) fluxStart() (wire.Version, map[objid.ID]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	replicating := map[objid.ID]bool{}
	for _, w := range p.writes {
		replicating[w.object] = true
	}
	return p.info.LastUpdate, replicating
}

// fluxSince returns the objects whose copies may have differed while the
// chunk was scrubbed: those replicating when it began or now, and those
// written since lu.
func (p *pg) fluxSince(lu wire.Version, replicating map[objid.ID]bool) map[objid.ID]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	flux := maps.Clone(replicating)
	for _, w := range p.writes {
		flux[w.object] = true
	}
	entries := p.log.Entries()
	for i := len(entries) - 1; i >= 0 && lu.Less(entries[i].Version); i-- {
		flux[entries[i].Object] = true
	}
	return flux
}

// scrubMap describes this OSD's copies of the PG's objects in [start,
// end).
func (p *pg) scrubMap(start, end objid.ID, deep bool) ([]wire.ScrubObject, error) {
	var out []wire.ScrubObject
	cursor := start
	for {
		objs, next, err := p.o.cfg.Store.ListObjects(p.o.ctx, p.coll, cursor, scrubChunk)
		if err != nil {
			return nil, fmt.Errorf("scrub: list pg %v: %w", p.id, err)
		}
		for _, id := range objs {
			if !end.IsMax() && objid.Compare(id, end) >= 0 {
				return out, nil
			}
			if id.Pool < 0 {
				continue // the PG's own metadata object
			}
			if so, ok := p.scrubObject(id, deep); ok {
				out = append(out, so)
			}
		}
		if next.IsMax() || len(out) >= scrubChunk*16 {
			return out, nil
		}
		cursor = next
	}
}

// scrubObject describes this OSD's copy of id; false if it vanished.
func (p *pg) scrubObject(id objid.ID, deep bool) (wire.ScrubObject, bool) {
	ctx, st := p.o.ctx, p.o.cfg.Store
	so := wire.ScrubObject{ID: id}
	bad := func(what string, err error) (wire.ScrubObject, bool) {
		so.ReadError = fmt.Sprintf("%s: %v", what, err)
		return so, true
	}
	info, err := st.Stat(ctx, p.coll, id)
	if errors.Is(err, objectstore.ErrNotFound) {
		return so, false
	} else if err != nil {
		return bad("stat", err)
	}
	so.Size = info.Size
	attrs, err := st.GetAttrs(ctx, p.coll, id)
	if err != nil {
		return bad("attributes", err)
	}
	so.AttrsDigest = scrub.AttrsDigest(attrs)
	so.Version = ops.VersionOf(attrs[ops.InfoAttr])
	if !deep {
		return so, true
	}
	// From the device: a cached copy could hide what the disk lost.
	data, err := objectstore.ReadDevice(ctx, st, p.coll, id, 0, 0)
	if err != nil {
		return bad("data", err)
	}
	so.DataDigest = scrub.DataDigest(data)
	header, err := st.OmapGetHeader(ctx, p.coll, id)
	if err != nil {
		return bad("omap header", err)
	}
	kvs, _, err := st.OmapIterate(ctx, p.coll, id, "", "", 0)
	if err != nil {
		return bad("omap", err)
	}
	d := scrub.NewOmapDigest(header)
	for _, kv := range kvs {
		d.Add(kv.Key, kv.Value)
	}
	so.OmapDigest = d.Sum32()
	return so, true
}

// repairObject carries out plan, scrub.PlanRepair's repair of id.
func (p *pg) repairObject(r *peerRun, id objid.ID, plan scrub.Repair) error {
	if plan.Pull >= 0 {
		if err := p.pullObject(r, plan.Pull, id); err != nil {
			return err
		}
	}
	for _, x := range plan.Push {
		if err := p.pushObject(r, x, id); err != nil {
			return err
		}
	}
	return nil
}

// pullObject replaces this OSD's copy of id with member from's.
func (p *pg) pullObject(r *peerRun, from int32, id objid.ID) error {
	c, done := p.await(waitKey{typ: wire.TypePGPush, from: from, object: id}, waitKey{typ: wire.TypePGAck, from: from, object: id})
	defer done()
	pull := wire.PGPull{PGInterval: p.intervalHeader(r), Objects: []objid.ID{id}}.Encode()
	if err := p.o.sendToOSD(from, msgr.Message{Type: wire.TypePGPull, Version: 1, Payload: pull}); err != nil {
		return err
	}
	ev, err := p.receive(r, c, scrubWait)
	if err != nil {
		return err
	}
	switch m := ev.msg.(type) {
	case wire.PGPush:
		return p.applyPush(m)
	case wire.PGAck:
		return fmt.Errorf("osd.%d cannot read %v either: errno %d", from, id, -m.Result)
	}
	return nil
}

// pushObject replaces member to's copy of id with this OSD's.
func (p *pg) pushObject(r *peerRun, to int32, id objid.ID) error {
	push, err := p.objectState(id)
	if err != nil {
		return err
	}
	push.PGInterval = p.intervalHeader(r)
	c, done := p.await(waitKey{typ: wire.TypePGAck, from: to, object: id})
	defer done()
	if err := p.o.sendToOSD(to, msgr.Message{Type: wire.TypePGPush, Version: 1, Payload: push.Encode()}); err != nil {
		return err
	}
	ev, err := p.receive(r, c, scrubWait)
	if err != nil {
		return err
	}
	if ack := ev.msg.(wire.PGAck); ack.Result != 0 {
		return fmt.Errorf("osd.%d could not take %v: errno %d", to, id, -ack.Result)
	}
	return nil
}

// scrubSnapIndex compares this OSD's snap index of the PG with the snap
// sets of its objects (snapindex.go), as part of a deep scrub. An entry
// missing or stale is reported as an inconsistency of its head (an
// undecodable key, of the PG's meta object); with repair, it is put
// right at once from the snap sets, which are authoritative (the index
// is derived from them), and not reported. Heads written while the check
// ran are left for the next scrub.
func (p *pg) scrubSnapIndex(repair bool, found map[objid.ID]scrub.Inconsistency) error {
	chk, _, err := p.checkSnapIndexHere()
	if err != nil {
		return fmt.Errorf("snap index check: %w", err)
	}
	if chk.empty() {
		return nil
	}
	self := []int32{p.o.cfg.ID}
	if repair {
		var t objectstore.Transaction
		chk.repairTxn(&t, p.id)
		if err := p.o.apply(&t); err != nil {
			return fmt.Errorf("snap index repair: %w", err)
		}
		p.o.log.Info("scrub: snap index repaired", "pg", p.id.String(), "added", len(chk.missing),
			"removed", len(chk.stale), "bad_keys", len(chk.bad))
		return nil
	}
	// An object already found inconsistent keeps its finding, with the
	// index's added to the reason (pg repair rewrites the index from the
	// snap sets before it repairs objects).
	note := func(id objid.ID, why string) {
		inc, ok := found[id]
		if !ok {
			found[id] = scrub.Inconsistency{Bad: self, Why: why}
			return
		}
		inc.Why += "; " + why
		found[id] = inc
	}
	for _, e := range chk.missing {
		note(e.Head(), fmt.Sprintf("snap index lacks snap %d of clone %d (its snap set has it)", e.Snap, e.Clone.Snap))
	}
	for _, e := range chk.stale {
		note(e.Head(), fmt.Sprintf("snap index has snap %d of clone %d, which its snap set does not", e.Snap, e.Clone.Snap))
	}
	if len(chk.bad) > 0 {
		note(pglog.MetaObject(p.id), fmt.Sprintf("snap index has %d keys that do not decode (first %q)", len(chk.bad), chk.bad[0]))
	}
	return nil
}

// intervalHeader names the PG in run r's interval, at the PG's epoch.
func (p *pg) intervalHeader(r *peerRun) wire.PGInterval {
	p.mu.Lock()
	defer p.mu.Unlock()
	return wire.PGInterval{PG: p.id, Epoch: p.epoch, IntervalStart: r.interval}
}

// finishScrub records the scrub's time and what it found.
func (p *pg) finishScrub(deep bool, found map[objid.ID]scrub.Inconsistency) error {
	now := p.o.cfg.Clock.Now().UnixNano()
	p.mu.Lock()
	p.info.LastScrub = now
	if deep {
		p.info.LastDeepScrub = now
	}
	p.inconsistent = found
	c, err := p.saveInfoLocked()
	p.mu.Unlock()
	if err != nil {
		return err
	}
	p.o.statsChanged()
	if len(found) > 0 {
		p.o.metrics.scrubErrors.Add(float64(len(found)))
		for id, inc := range found {
			p.o.log.Error("scrub: inconsistent object", "pg", p.id.String(), "object", id.String(), "bad", inc.Bad, "why", inc.Why)
		}
	}
	p.o.log.Info("scrub: done", "pg", p.id.String(), "deep", deep, "inconsistent", len(found))
	return c.Wait(p.o.ctx)
}

func (p *pg) setScrubbing(s string) {
	p.mu.Lock()
	p.scrubbing = s
	p.mu.Unlock()
	p.o.statsChanged()
}

func (p *pg) scrubbingState() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.scrubbing
}

// answerScrub sends the primary this member's scrub map.
func (p *pg) answerScrub(from msgr.Peer, m wire.ScrubRequest) {
	objs, err := p.scrubMap(m.Start, m.End, m.Deep)
	if err != nil {
		p.o.log.Error("scrub: cannot build a scrub map", "pg", p.id.String(), "err", err)
		return
	}
	p.reply(from, wire.TypeScrubMap, wire.ScrubMap{PGInterval: m.PGInterval, Token: m.Token, Objects: objs}.Encode())
	if m.Deep && m.End.IsMax() && p.o.cfg.ID != p.primaryID() {
		// The deep scrub's last chunk: a replica checks its own snap
		// index (the primary checks its own in scrubSnapIndex).
		if err := p.fixSnapIndexHere(); err != nil {
			p.o.log.Error("scrub: checking the snap index failed", "pg", p.id.String(), "err", err)
		}
	}
}

// primaryID returns the PG's primary.
func (p *pg) primaryID() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.primary
}

// repairFromReplica replaces the primary's unreadable copy of id with a
// replica's, and reports whether it could.
func (p *pg) repairFromReplica(id objid.ID, cause error) bool {
	p.mu.Lock()
	r, replicas, active := p.run, p.replicasLocked(), p.activated
	p.mu.Unlock()
	if r == nil || !active {
		return false
	}
	p.o.log.Warn("read: this copy is bad; fetching it from a replica", "pg", p.id.String(), "object", id.String(), "err", cause)
	for _, x := range replicas {
		if err := p.pullObject(r, x, id); err != nil {
			p.o.log.Warn("read: replica could not supply the object", "pg", p.id.String(), "object", id.String(), "osd", x, "err", err)
			continue
		}
		p.o.log.Info("read: repaired this copy from a replica", "pg", p.id.String(), "object", id.String(), "osd", x)
		p.o.metrics.readRepairs.Inc()
		return true
	}
	return false
}
