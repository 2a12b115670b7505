package osdmap

import (
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/crush"
)

// PoolType says how a pool keeps its data. The values are Ceph's.
type PoolType uint8

// Pool types.
const (
	// PoolReplicated pools keep whole copies; their OSD lists shift left
	// when an OSD is missing.
	PoolReplicated PoolType = 1
	// PoolErasure pools keep shards whose position matters; a missing OSD
	// leaves a hole (crush.ItemNone).
	PoolErasure PoolType = 3
)

func (t PoolType) String() string {
	switch t {
	case PoolReplicated:
		return "replicated"
	case PoolErasure:
		return "erasure"
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// ParsePoolType parses "replicated" or "erasure".
func ParsePoolType(s string) (PoolType, error) {
	switch s {
	case "replicated":
		return PoolReplicated, nil
	case "erasure":
		return PoolErasure, nil
	}
	return 0, fmt.Errorf("osdmap: unknown pool type %q", s)
}

// PoolFlags are a pool's flags. The bit values are Ceph's (pg_pool_t).
type PoolFlags uint64

// Pool flags.
const (
	// PoolHashPSPool hashes the placement seed with the pool id so that
	// pools do not overlap; without it the pool id is added (legacy).
	PoolHashPSPool      PoolFlags = 1 << 0
	PoolFull            PoolFlags = 1 << 1
	PoolECOverwrites    PoolFlags = 1 << 2
	PoolNoDelete        PoolFlags = 1 << 4
	PoolNoPGChange      PoolFlags = 1 << 5
	PoolNoSizeChange    PoolFlags = 1 << 6
	PoolNoScrub         PoolFlags = 1 << 8
	PoolNoDeepScrub     PoolFlags = 1 << 9
	PoolSelfManagedSnap PoolFlags = 1 << 13
	PoolSnaps           PoolFlags = 1 << 14
	PoolCreating        PoolFlags = 1 << 15
	PoolBulk            PoolFlags = 1 << 17
)

var poolFlagNames = []struct {
	f    PoolFlags
	name string
}{
	{PoolHashPSPool, "hashpspool"}, {PoolFull, "full"}, {PoolECOverwrites, "ec_overwrites"},
	{PoolNoDelete, "nodelete"}, {PoolNoPGChange, "nopgchange"}, {PoolNoSizeChange, "nosizechange"},
	{PoolNoScrub, "noscrub"}, {PoolNoDeepScrub, "nodeep-scrub"}, {PoolSelfManagedSnap, "selfmanaged_snaps"},
	{PoolSnaps, "pool_snaps"}, {PoolCreating, "creating"}, {PoolBulk, "bulk"},
}

// String lists the flags by Ceph's names, comma-separated; unnamed bits
// print in hex.
func (f PoolFlags) String() string {
	var names []string
	for _, n := range poolFlagNames {
		if f&n.f != 0 {
			names = append(names, n.name)
			f &^= n.f
		}
	}
	if f != 0 {
		names = append(names, fmt.Sprintf("%#x", uint64(f)))
	}
	return strings.Join(names, ",")
}

// Limits that keep a map, and the memory a hostile encoding can claim,
// bounded.
const (
	// MaxPoolSize bounds a pool's size and the length of every OSD list
	// (pg_temp, pg_upmap, pg_upmap_items).
	MaxPoolSize = 64
	// MaxPGNum bounds pg_num, so that masks fit in 31 bits as in Ceph.
	MaxPGNum = 1 << 31
	// MaxOSDs bounds max_osd.
	MaxOSDs = 1 << 20
	// MaxNameLen bounds pool names and OSD addresses.
	MaxNameLen = 256
)

// Pool is one pool's settings (the part of Ceph's pg_pool_t that
// placement uses).
type Pool struct {
	ID   int64 // >= 0
	Name string
	Type PoolType
	// Size is the number of replicas, or of shards (k+m) for erasure pools.
	Size    int
	MinSize int // replicas needed to serve I/O; 1 <= MinSize <= Size
	// CrushRule is the id of the CRUSH rule the pool maps with.
	CrushRule int32
	// PGNum is the number of placement groups; objects hash into them.
	PGNum uint32
	// PGPNum is the number of placement seeds given to CRUSH
	// (1 <= PGPNum <= PGNum); while it lags PGNum, split PGs stay with
	// their parents.
	PGPNum uint32
	// PGNumTarget and PGPNumTarget are where pg_num and pgp_num are
	// headed (Ceph's pg_num_target, pgp_num_target): the operator sets
	// them and the monitors' leader steps the current values toward
	// them (internal/mon/osdmon/pgstep.go). 0 means the value is at its
	// target; Target returns the effective ones.
	PGNumTarget  uint32
	PGPNumTarget uint32
	Flags        PoolFlags
	// PGNumPending, when not 0, is the pg_num a merge lowers PGNum to
	// next (Ceph's pg_num_pending), set at epoch PendingSince; the PGs
	// that merge take no writes meanwhile. LastMerge records the last
	// merge step (merge.go).
	PGNumPending uint32
	PendingSince Epoch
	LastMerge    PoolMerge
	// LastChange is the epoch that last changed the pool.
	LastChange Epoch

	// SnapSeq is the newest snapshot id the pool gave out (or burnt on
	// a removal, as Ceph does); 0 before the first. snaps.go.
	SnapSeq uint64
	// Snaps are the pool snapshots, by id (pool-snaps mode only).
	Snaps []PoolSnap
	// RemovedSnaps are the snapshot ids removed in either mode: the
	// OSDs trim clones that only they needed.
	RemovedSnaps SnapIntervals

	// The autoscaler's settings (autoscale.go; Ceph's pool options of
	// the same names): its mode, the size the operator expects the pool
	// to reach (in bytes of one copy, or as a share of its CRUSH root's
	// capacity; the ratio wins when both are set), and the factor its
	// ideal PG count is multiplied by (0 means 1: Bias).
	AutoscaleMode   AutoscaleMode
	TargetSizeBytes uint64
	TargetSizeRatio float64
	AutoscaleBias   float64

	// Ack is when the primary answers a client's write (ack.go): once
	// every member committed it (AckAll, the default) or once the
	// primary did (AckPrimary).
	Ack AckMode
	// ReadPolicy is where the pool's clients send reads (readpolicy.go):
	// to the primary (ReadPrimary, the default) or to a replica chosen
	// at random or by score.
	ReadPolicy ReadPolicy
}

// Targets returns where pg_num and pgp_num are headed: the targets, or
// the current values where none is pending.
func (p *Pool) Targets() (pgNum, pgpNum uint32) {
	pgNum, pgpNum = p.PGNum, p.PGPNum
	if p.PGNumTarget != 0 {
		pgNum = p.PGNumTarget
	}
	if p.PGPNumTarget != 0 {
		pgpNum = p.PGPNumTarget
	}
	return pgNum, pgpNum
}

// SetTargets sets where pg_num and pgp_num are headed, storing 0 for a
// target the current value already has (the canonical form Equal and
// the codec rely on).
func (p *Pool) SetTargets(pgNum, pgpNum uint32) {
	p.PGNumTarget, p.PGPNumTarget = pgNum, pgpNum
	if pgNum == p.PGNum {
		p.PGNumTarget = 0
	}
	if pgpNum == p.PGPNum {
		p.PGPNumTarget = 0
	}
}

// PGNumMask returns the mask that StableMod uses with PGNum.
func (p *Pool) PGNumMask() uint32 { return PGMask(p.PGNum) }

// PGPNumMask returns the mask that StableMod uses with PGPNum.
func (p *Pool) PGPNumMask() uint32 { return PGMask(p.PGPNum) }

// CanShiftOSDs reports whether the pool's OSD lists may be compacted when
// an OSD is missing (replicated pools), rather than keep a hole in its
// position (erasure pools).
func (p *Pool) CanShiftOSDs() bool { return p.Type == PoolReplicated }

// HashToPG returns the PG an object hash falls into.
func (p *Pool) HashToPG(hash uint32) PG {
	return PG{Pool: p.ID, Seed: StableMod(hash, p.PGNum, p.PGNumMask())}
}

// RawPGToPG reduces a raw PG's seed modulo pg_num (raw_pg_to_pg).
func (p *Pool) RawPGToPG(pg PG) PG {
	pg.Seed = StableMod(pg.Seed, p.PGNum, p.PGNumMask())
	return pg
}

// RawPGToPPS returns the placement seed CRUSH maps pg with (Ceph's
// raw_pg_to_pps): the seed reduced modulo pgp_num, hashed with the pool id
// when the pool has PoolHashPSPool, else plus the pool id.
func (p *Pool) RawPGToPPS(pg PG) uint32 {
	ps := StableMod(pg.Seed, p.PGPNum, p.PGPNumMask())
	if p.Flags&PoolHashPSPool != 0 {
		return crush.Hash2(ps, uint32(pg.Pool))
	}
	return ps + uint32(pg.Pool)
}

// String formats the pool like Ceph's "ceph osd pool ls detail".
func (p *Pool) String() string {
	s := fmt.Sprintf("pool %d '%s' %s size %d min_size %d crush_rule %d object_hash rjenkins pg_num %d pgp_num %d last_change %d flags %s",
		p.ID, p.Name, p.Type, p.Size, p.MinSize, p.CrushRule, p.PGNum, p.PGPNum, p.LastChange, p.Flags)
	if p.PGNumTarget != 0 {
		s += fmt.Sprintf(" pg_num_target %d", p.PGNumTarget)
	}
	if p.PGPNumTarget != 0 {
		s += fmt.Sprintf(" pgp_num_target %d", p.PGPNumTarget)
	}
	if p.PGNumPending != 0 {
		s += fmt.Sprintf(" pg_num_pending %d", p.PGNumPending)
	}
	if p.SnapSeq > 0 {
		s += fmt.Sprintf(" snap_seq %d", p.SnapSeq)
	}
	for _, sn := range p.Snaps {
		s += fmt.Sprintf("\n\tsnap %d '%s' %s", sn.ID, sn.Name, sn.Created.Format("2006-01-02T15:04:05.000000Z"))
	}
	s += p.autoscaleString()
	if p.Ack != AckAll {
		s += " ack " + p.Ack.String()
	}
	if p.ReadPolicy != ReadPrimary {
		s += " read_policy " + p.ReadPolicy.String()
	}
	if len(p.RemovedSnaps) > 0 {
		s += "\n\tremoved_snaps " + p.RemovedSnaps.String()
	}
	return s
}

// validate checks what a pool must satisfy on its own.
func (p *Pool) validate() error {
	switch {
	case p.ID < 0:
		return fmt.Errorf("pool %d: negative id", p.ID)
	case p.Name == "" || len(p.Name) > MaxNameLen:
		return fmt.Errorf("pool %d: name must have 1 to %d bytes", p.ID, MaxNameLen)
	case p.Type != PoolReplicated && p.Type != PoolErasure:
		return fmt.Errorf("pool %d: unknown type %d", p.ID, p.Type)
	case p.Size < 1 || p.Size > MaxPoolSize:
		return fmt.Errorf("pool %d: size %d out of [1, %d]", p.ID, p.Size, MaxPoolSize)
	case p.MinSize < 1 || p.MinSize > p.Size:
		return fmt.Errorf("pool %d: min_size %d out of [1, size %d]", p.ID, p.MinSize, p.Size)
	case p.PGNum < 1 || p.PGNum > MaxPGNum:
		return fmt.Errorf("pool %d: pg_num %d out of [1, %d]", p.ID, p.PGNum, uint32(MaxPGNum))
	case p.PGPNum < 1 || p.PGPNum > p.PGNum:
		return fmt.Errorf("pool %d: pgp_num %d out of [1, pg_num %d]", p.ID, p.PGPNum, p.PGNum)
	case p.PGNumTarget > MaxPGNum:
		return fmt.Errorf("pool %d: pg_num_target %d above %d", p.ID, p.PGNumTarget, uint32(MaxPGNum))
	case func() bool { n, pn := p.Targets(); return pn > n }():
		n, pn := p.Targets()
		return fmt.Errorf("pool %d: pgp_num_target %d above pg_num_target %d", p.ID, pn, n)
	case p.CrushRule < 0:
		return fmt.Errorf("pool %d: negative crush rule %d", p.ID, p.CrushRule)
	}
	if err := p.validateAutoscale(); err != nil {
		return err
	}
	if err := p.validateMerge(); err != nil {
		return err
	}
	if err := p.validateAck(); err != nil {
		return err
	}
	if err := p.validateReadPolicy(); err != nil {
		return err
	}
	return p.validateSnaps()
}
