package osd

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Admin commands, as `cuttle tell osd.N COMMAND` sends them (Ceph's
// `ceph tell osd.N` and admin socket): each answers a JSON document for
// tools and the same as text for people. They need osd caps of '*'.
//
//	status               id, address, epoch, PG counts by state
//	dump_ops_in_flight   every client op not yet answered, oldest first
//	dump_pgs             every PG: state, acting set, versions, statistics
//	dump_objectstore_kv_stats  the store's metadata database: levels,
//	                     log, flushes, compactions (Ceph's admin socket
//	                     command of that name)
//	dump_recovery_reservations  recovery's slots: the PGs this primary
//	                     recovers or queues (local), the primaries this
//	                     OSD receives pushes from or queues (remote),
//	                     as Ceph's command of that name (reservations.go)
//	config show          every option the OSD reads: the value in effect,
//	                     where it came from, its default (options.go)

// OpInFlight describes a client op the OSD has not finished.
type OpInFlight struct {
	Client string    `json:"client"`
	Tid    uint64    `json:"tid"`
	PG     string    `json:"pg"`
	Object string    `json:"object"`
	Ops    []string  `json:"ops"`
	Since  time.Time `json:"since"`
	Age    float64   `json:"age_seconds"`
	State  string    `json:"state"`
}

// PGStatus describes one PG as this OSD holds it.
type PGStatus struct {
	PG                string  `json:"pgid"`
	State             string  `json:"state"`
	Role              string  `json:"role"`
	Acting            []int32 `json:"acting"`
	Primary           int32   `json:"acting_primary"`
	Epoch             uint64  `json:"epoch"`
	SameIntervalSince uint64  `json:"same_interval_since"`
	LastUpdate        string  `json:"last_update"`
	LogEntries        int     `json:"log_entries"`
	Objects           int64   `json:"num_objects"`
	Bytes             int64   `json:"num_bytes"`
	WritesInFlight    int     `json:"writes_in_flight"`
	Waiting           int     `json:"waiting"`
	LastEpochStarted  uint64  `json:"last_epoch_started"`
	// DownReason and BlockedBy say why a down PG waits, and for whom.
	DownReason string  `json:"down_reason,omitempty"`
	BlockedBy  []int32 `json:"blocked_by,omitempty"`
	// PeeringStep says what an inactive PG's peering is doing.
	PeeringStep string `json:"peering_step,omitempty"`
	// Unfound counts the objects peering found no copy of; Missing the
	// object copies members lack (recovery's work left).
	Unfound int   `json:"num_objects_unfound,omitempty"`
	Missing int64 `json:"num_missing_copies,omitempty"`
	// When the last scrubs finished, and what the last one found.
	LastScrub     time.Time `json:"last_scrub_stamp"`
	LastDeepScrub time.Time `json:"last_deep_scrub_stamp"`
	Inconsistent  []string  `json:"inconsistent_objects,omitempty"`
	// PurgedSnaps are the removed snapshots the PG has trimmed (its
	// info's, Ceph's purged_snaps), as "[1~3,7~1]".
	PurgedSnaps string `json:"purged_snaps"`
	// Ack is the pool's ack mode; ReplicaLag, on a primary of a pool in
	// ack primary mode, how far each replica is behind what it answered
	// (acklag.go).
	Ack        string            `json:"ack"`
	ReplicaLag []wire.ReplicaLag `json:"replica_lag,omitempty"`
}

// track records r as in flight until done is called.
func (o *OSD) track(r *request) (done func()) {
	r.since = o.cfg.Clock.Now()
	r.setState("queued")
	o.inflightMu.Lock()
	o.inflight[r] = struct{}{}
	o.inflightMu.Unlock()
	return func() {
		o.inflightMu.Lock()
		delete(o.inflight, r)
		o.inflightMu.Unlock()
		o.trafficLen.Add(uint64(r.bytesOut))
		o.metrics.opDone(r, o.cfg.Clock.Since(r.since))
	}
}

// Traffic returns the messages the OSD has received and the bytes they
// carried plus the data its replies returned: the average says whether
// its work is small ops or large transfers (the daemon's procs.Governor).
func (o *OSD) Traffic() (msgs, bytes uint64) {
	return o.msgsIn.Load(), o.trafficLen.Load()
}

// OpsInFlight returns the client ops not yet answered, oldest first.
func (o *OSD) OpsInFlight() []OpInFlight {
	now := o.cfg.Clock.Now()
	o.inflightMu.Lock()
	out := make([]OpInFlight, 0, len(o.inflight))
	for r := range o.inflight {
		names := make([]string, len(r.op.Ops))
		for i := range r.op.Ops {
			names[i] = r.op.Ops[i].Code.String()
		}
		out = append(out, OpInFlight{Client: r.from.Name.String(), Tid: r.op.Req.Tid, PG: r.op.PG.String(),
			Object: r.op.Object.Name, Ops: names, Since: r.since, Age: now.Sub(r.since).Seconds(), State: r.getState()})
	}
	o.inflightMu.Unlock()
	slices.SortFunc(out, func(a, b OpInFlight) int { return a.Since.Compare(b.Since) })
	return out
}

// PGs returns the status of every PG this OSD holds, by PG id.
func (o *OSD) PGs() []PGStatus {
	o.mu.Lock()
	pgs := make([]*pg, 0, len(o.pgs))
	for _, p := range o.pgs {
		pgs = append(pgs, p)
	}
	o.mu.Unlock()
	out := make([]PGStatus, 0, len(pgs))
	for _, p := range pgs {
		out = append(out, p.status())
	}
	slices.SortFunc(out, func(a, b PGStatus) int { return strings.Compare(a.PG, b.PG) })
	return out
}

func (p *pg) status() PGStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	waiting := len(p.parked) + p.queue.Waiting()
	return PGStatus{PG: p.id.String(), State: p.stateLocked(), Role: p.roleLocked(), Acting: slices.Clone(p.acting),
		Primary: p.primary, Epoch: p.epoch, SameIntervalSince: p.info.SameIntervalSince,
		LastUpdate: p.info.LastUpdate.String(), LogEntries: p.log.Len(), Objects: p.info.Stats.Objects,
		Bytes: p.info.Stats.Bytes, WritesInFlight: len(p.writes), Waiting: waiting,
		LastEpochStarted: p.info.LastEpochStarted, DownReason: p.down, BlockedBy: slices.Clone(p.blockedBy), PeeringStep: p.peeringStepLocked(),
		LastScrub: unixTime(p.info.LastScrub), LastDeepScrub: unixTime(p.info.LastDeepScrub), Inconsistent: p.inconsistentLocked(),
		Unfound: len(p.unfound), Missing: p.missingCopies, PurgedSnaps: p.info.PurgedSnaps.String(),
		Ack: p.pool.Ack.String(), ReplicaLag: p.replicaLagLocked()}
}

// stateLocked names the PG's state as Ceph operators know them: peering
// on a primary until its members agree (recovery.go), down when an
// earlier interval's OSDs that may hold writes are all down, then active when it
// serves I/O; recovering or backfilling (or waiting to) while members
// lack objects (missing.go); undersized and degraded when
// fewer OSDs act than the pool's size, and only "peered" (not active)
// below min_size; stray when this OSD no longer acts for it. A replica
// reports what its acting set implies. An active PG adds what scrub is
// doing ("+scrubbing", "+scrubbing+deep", "+repair") and "+inconsistent"
// when the last scrub found damage.
func (p *pg) stateLocked() string {
	s := p.baseStateLocked()
	if !p.isPrimaryLocked() || !p.activated {
		return s
	}
	scrubbing, repair := strings.CutSuffix(p.scrubbing, "+repair")
	if scrubbing != "" {
		s += "+" + scrubbing
	}
	if len(p.inconsistent) > 0 {
		s += "+inconsistent"
	}
	if repair {
		s += "+repair"
	}
	return s
}

func (p *pg) baseStateLocked() string {
	switch {
	case !slices.Contains(p.acting, p.o.cfg.ID):
		return "stray"
	case p.isPrimaryLocked() && p.down != "":
		return "down"
	case p.isPrimaryLocked() && !p.activated && len(p.unfound) > 0:
		return "incomplete"
	case p.isPrimaryLocked() && !p.activated && p.recovering != "":
		return "peering+" + p.recovering + "+degraded"
	case p.isPrimaryLocked() && !p.activated && p.info.LastEpochStarted == 0:
		return "creating+peering" // never active yet: a new PG
	case p.isPrimaryLocked() && !p.activated:
		return "peering"
	case len(p.acting) < max(p.pool.MinSize, 1):
		return "undersized+degraded+peered"
	}
	s := "active"
	if p.recovering != "" {
		rec := p.recovering
		if p.backfillTooFullLocked() {
			rec = "backfill_toofull"
		}
		s += "+" + rec
	}
	if len(p.acting) < p.pool.Size {
		s += "+undersized"
	}
	if p.degradedLocked() > 0 || len(p.acting) < p.pool.Size {
		s += "+degraded"
	}
	if len(p.up) > 0 && !slices.Equal(p.up, p.acting) {
		s += "+remapped"
	}
	if s == "active" {
		return "active+clean"
	}
	return s
}

func (p *pg) roleLocked() string {
	switch {
	case p.isPrimaryLocked():
		return "primary"
	case slices.Contains(p.acting, p.o.cfg.ID):
		return "replica"
	}
	return "stray"
}

// status is the answer to the status command.
type status struct {
	ID       int32          `json:"id"`
	Addr     string         `json:"addr"`
	Epoch    uint64         `json:"epoch"`
	PGs      int            `json:"num_pgs"`
	ByState  map[string]int `json:"pgs_by_state"`
	InFlight int            `json:"ops_in_flight"`
	// Recovering counts the PGs holding one of the OSD's recovery slots;
	// RecoveryMaxPGs is how many there are (osd_max_backfills).
	Recovering     int `json:"recovering_pgs"`
	RecoveryMaxPGs int `json:"recovery_max_pgs"`
}

// Command answers an admin command (see the list above).
func (o *OSD) Command(cmd wire.Command) wire.Reply {
	prefix := cmd.Prefix
	switch prefix {
	case "pg scrub", "pg deep-scrub", "pg repair":
		return o.requestScrub(cmd)
	case "pg mark_unfound_lost":
		return o.markUnfoundLost(cmd)
	case "status":
		st := status{ID: o.cfg.ID, Addr: o.addr, Epoch: o.Epoch(), ByState: map[string]int{}}
		for _, p := range o.PGs() {
			st.PGs++
			st.ByState[p.State]++
		}
		o.inflightMu.Lock()
		st.InFlight = len(o.inflight)
		o.inflightMu.Unlock()
		st.Recovering, st.RecoveryMaxPGs = o.res.localState()
		text := fmt.Sprintf("osd.%d at %s, epoch %d, %d pgs %v, %d ops in flight\n", st.ID, st.Addr, st.Epoch, st.PGs, st.ByState, st.InFlight)
		return jsonReply(st, text)
	case "dump_ops_in_flight":
		ops := o.OpsInFlight()
		var b strings.Builder
		fmt.Fprintf(&b, "%d ops in flight\n", len(ops))
		for _, op := range ops {
			fmt.Fprintf(&b, "%8.3fs  %-12s %s:%d pg %s %s %v\n", op.Age, op.State, op.Client, op.Tid, op.PG, op.Object, op.Ops)
		}
		return jsonReply(map[string]any{"num_ops": len(ops), "ops": ops}, b.String())
	case "dump_pgs":
		pgs := o.PGs()
		var b strings.Builder
		fmt.Fprintf(&b, "%-8s %-20s %-8s %-12s %-10s %8s %12s\n", "PG", "STATE", "ROLE", "ACTING", "LAST", "OBJECTS", "BYTES")
		for _, p := range pgs {
			fmt.Fprintf(&b, "%-8s %-20s %-8s %-12s %-10s %8d %12d\n", p.PG, p.State, p.Role, fmt.Sprint(p.Acting), p.LastUpdate, p.Objects, p.Bytes)
		}
		return jsonReply(pgs, b.String())
	case "dump_objectstore_kv_stats":
		return o.kvStats()
	case "config show":
		return o.configShow()
	case "dump_recovery_reservations":
		return o.recoveryReservations()
	}
	return wire.Errorf(wire.EINVAL, "unknown command %q (status, dump_ops_in_flight, dump_pgs, dump_objectstore_kv_stats, dump_recovery_reservations, config show, pg scrub|deep-scrub|repair|mark_unfound_lost)", prefix)
}

// kvStats answers dump_objectstore_kv_stats: the state of the store's
// metadata database, as the database reports it.
func (o *OSD) kvStats() wire.Reply {
	kr, ok := o.cfg.Store.(objectstore.KVReporter)
	if !ok {
		return wire.Errorf(wire.ENOTSUP, "this OSD's object store keeps no key-value database")
	}
	st, err := kr.KVStats(o.ctx)
	if err != nil {
		return wire.Errorf(wire.EIO, "object store: %v", err)
	}
	return jsonReply(st, st.Report)
}

func jsonReply(v any, text string) wire.Reply {
	data, err := json.Marshal(v)
	if err != nil {
		return wire.Errorf(wire.EINVAL, "encoding the reply: %v", err)
	}
	return wire.Reply{Data: data, Text: text}
}

// handleCommand answers an admin command sent over the messenger, to
// peers whose caps allow everything on the osd service.
func (o *OSD) handleCommand(from msgr.Peer, m wire.MonCommand) {
	var r wire.Reply
	cc, err := o.checker(from)
	if err == nil {
		err = cc.Check(auth.Request{Service: "osd", Access: auth.AccessRead | auth.AccessWrite | auth.AccessExec})
	}
	if err != nil {
		r = wire.Errorf(wire.EACCES, "tell osd.%d %s: %v", o.cfg.ID, m.Cmd.Prefix, err)
	} else {
		r = o.Command(m.Cmd)
	}
	reply := wire.MonCommandReply{Tid: m.Tid, Reply: r}
	if err := from.Session.Send(o.ctx, msgr.Message{Type: wire.TypeDaemonCommandReply, Version: 1, Payload: reply.Encode()}); err != nil {
		o.log.Debug("command reply not sent", "to", from.Name.String(), "err", err)
	}
}

// peeringStepLocked is what peering is doing, while the PG is not active.
func (p *pg) peeringStepLocked() string {
	if p.activated || !p.isPrimaryLocked() {
		return ""
	}
	return p.peerStep
}
