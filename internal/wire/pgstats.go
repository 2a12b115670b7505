package wire

import (
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/osdmap"
)

// PG statistics: each OSD reports, for every PG it is the acting primary
// of, its state and usage to the monitors (the "pg report" command, whose
// "report" argument is a PGStatsReport encoded), which keep the newest
// report of each PG for "cuttle status", "pg stat|dump|query" and the
// health checks.

// PGStat is one PG as its primary sees it.
type PGStat struct {
	PG                osdmap.PG `json:"-"`
	State             string    `json:"state"` // Ceph's spelling: "active+clean", "down", "peering", ...
	Up                []int32   `json:"up"`
	Acting            []int32   `json:"acting"`
	Primary           int32     `json:"acting_primary"`
	ReportedEpoch     uint64    `json:"reported_epoch"`
	SameIntervalSince uint64    `json:"same_interval_since"`
	LastEpochStarted  uint64    `json:"last_epoch_started"`
	LastUpdate        string    `json:"last_update"`
	LogEntries        int64     `json:"log_size"`
	Objects           int64     `json:"num_objects"`
	Bytes             int64     `json:"num_bytes"`
	// Degraded counts object copies that should exist and do not (yet):
	// missing on a member, or a member missing from the acting set.
	Degraded int64 `json:"num_objects_degraded"`
	// Misplaced counts copies on OSDs other than those CRUSH chose (the
	// acting set differs from the up set).
	Misplaced int64 `json:"num_objects_misplaced"`
	// Unfound counts objects no reachable OSD holds.
	Unfound int64 `json:"num_objects_unfound"`
	// BlockedBy lists the down OSDs a down PG waits for; DownReason says
	// why.
	BlockedBy  []int32 `json:"blocked_by,omitempty"`
	DownReason string  `json:"down_reason,omitempty"`
	// LastScrub and LastDeepScrub are when the last scrubs finished (zero:
	// never); Inconsistent names the objects the last scrub found
	// damaged.
	LastScrub     time.Time `json:"last_scrub_stamp"`
	LastDeepScrub time.Time `json:"last_deep_scrub_stamp"`
	Inconsistent  []string  `json:"inconsistent_objects,omitempty"`
	// ReplicaLag is, for a pool in ack primary mode, how far each
	// replica is behind what the primary answered (report version 2).
	ReplicaLag []ReplicaLag `json:"replica_lag,omitempty"`
}

// ReplicaLag is one replica's replication lag behind its primary in a
// pool in ack primary mode (docs/OSD.md, "Acknowledging on the
// primary").
type ReplicaLag struct {
	OSD int32 `json:"osd"`
	// Acked is the newest write of the interval the replica committed
	// ("" for none yet).
	Acked string `json:"acked_version,omitempty"`
	// Writes and Bytes are the writes the primary answered, and their
	// data, that the replica has yet to commit.
	Writes int64 `json:"writes_behind"`
	Bytes  int64 `json:"bytes_behind"`
}

// PGStatsReport is what one OSD reports: its PGs (those it is primary
// of) and its store's usage.
type PGStatsReport struct {
	OSD   int32
	Epoch uint64
	PGs   []PGStat
	// Store usage in bytes (osd df).
	Total, Used, Available uint64
	// Load is how busy the OSD is (its disk, its host's CPU and memory,
	// in percent, rounded to internal/loadstat's Step): what the
	// monitors publish in the OSD map for clients with read_policy
	// score.
	Load osdmap.Load
}

// Limits that keep a hostile report from costing memory.
const (
	maxReportPGs    = 1 << 20
	maxStatString   = 4 << 10
	maxStatOSDs     = 1 << 10
	maxInconsistent = 1 << 12
)

// Encode encodes r: version 1 carries the PGs; version 2 appends, for
// each PG in the same order, its replica lags (a count, then each lag's
// OSD, acked version, writes and bytes), which a version 1 decoder skips;
// version 3 appends the load (disk, CPU, memory: u8 percent each), which
// older decoders skip and an older report decodes without (idle).
func (r PGStatsReport) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(3, 1)
	e.Int32(r.OSD)
	e.Uvarint(r.Epoch)
	e.Uvarint(r.Total)
	e.Uvarint(r.Used)
	e.Uvarint(r.Available)
	e.Uvarint(uint64(len(r.PGs)))
	for _, s := range r.PGs {
		s.encode(&e)
	}
	for _, s := range r.PGs {
		e.Uvarint(uint64(len(s.ReplicaLag)))
		for _, l := range s.ReplicaLag {
			e.Int32(l.OSD)
			e.String(l.Acked)
			e.Varint(l.Writes)
			e.Varint(l.Bytes)
		}
	}
	e.Uint8(r.Load.Disk)
	e.Uint8(r.Load.CPU)
	e.Uint8(r.Load.Memory)
	e.End(mk)
	return e.Data()
}

func (s PGStat) encode(e *encoding.Encoder) {
	e.Varint(s.PG.Pool)
	e.Uint32(s.PG.Seed)
	e.String(s.State)
	encodeOSDs(e, s.Up)
	encodeOSDs(e, s.Acting)
	e.Int32(s.Primary)
	e.Uvarint(s.ReportedEpoch)
	e.Uvarint(s.SameIntervalSince)
	e.Uvarint(s.LastEpochStarted)
	e.String(s.LastUpdate)
	e.Varint(s.LogEntries)
	e.Varint(s.Objects)
	e.Varint(s.Bytes)
	e.Varint(s.Degraded)
	e.Varint(s.Misplaced)
	e.Varint(s.Unfound)
	encodeOSDs(e, s.BlockedBy)
	e.String(s.DownReason)
	e.Varint(stamp(s.LastScrub))
	e.Varint(stamp(s.LastDeepScrub))
	e.Uvarint(uint64(len(s.Inconsistent)))
	for _, o := range s.Inconsistent {
		e.String(o)
	}
}

// stamp is t in Unix nanoseconds, 0 for the zero time.
func stamp(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func unstamp(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func encodeOSDs(e *encoding.Encoder, ids []int32) {
	e.Uvarint(uint64(len(ids)))
	for _, id := range ids {
		e.Int32(id)
	}
}

func decodeOSDs(d *encoding.Decoder) []int32 {
	n := d.Count(4)
	if n > maxStatOSDs {
		d.Fail(fmt.Errorf("%w: %d OSDs in a PG stat", encoding.ErrCorrupt, n))
	}
	if n == 0 || d.Err() != nil {
		return nil
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = d.Int32()
	}
	return out
}

// DecodePGStatsReport decodes a PGStatsReport.
func DecodePGStatsReport(b []byte) (PGStatsReport, error) {
	d := encoding.NewDecoder(b)
	version := d.Begin(3)
	r := PGStatsReport{OSD: d.Int32(), Epoch: d.Uvarint(), Total: d.Uvarint(), Used: d.Uvarint(), Available: d.Uvarint()}
	n := d.Count(8)
	if n > maxReportPGs {
		d.Fail(fmt.Errorf("%w: %d PGs in a report", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		r.PGs = append(r.PGs, decodePGStat(d))
	}
	for i := 0; version >= 2 && i < len(r.PGs) && d.Err() == nil; i++ {
		k := d.Count(4)
		if k > maxStatOSDs {
			d.Fail(fmt.Errorf("%w: %d replica lags in a PG stat", encoding.ErrCorrupt, k))
		}
		for j := 0; j < k && d.Err() == nil; j++ {
			r.PGs[i].ReplicaLag = append(r.PGs[i].ReplicaLag, ReplicaLag{OSD: d.Int32(), Acked: d.String(maxStatString),
				Writes: d.Varint(), Bytes: d.Varint()})
		}
	}
	if version >= 3 && d.Err() == nil {
		r.Load = osdmap.Load{Disk: d.Uint8(), CPU: d.Uint8(), Memory: d.Uint8()}
		if r.Load.Disk > 100 || r.Load.CPU > 100 || r.Load.Memory > 100 {
			d.Fail(fmt.Errorf("%w: load %v above 100%%", encoding.ErrCorrupt, r.Load))
		}
	}
	d.End()
	if err := d.Finish(); err != nil {
		return PGStatsReport{}, fmt.Errorf("wire: pg stats report: %w", err)
	}
	if r.OSD < 0 {
		return PGStatsReport{}, fmt.Errorf("wire: pg stats report from osd.%d", r.OSD)
	}
	for _, s := range r.PGs {
		if s.PG.Pool < 0 {
			return PGStatsReport{}, fmt.Errorf("wire: pg stats report: pg %v", s.PG)
		}
	}
	return r, nil
}

func decodePGStat(d *encoding.Decoder) PGStat {
	s := PGStat{PG: osdmap.PG{Pool: d.Varint(), Seed: d.Uint32()}, State: d.String(maxStatString),
		Up: decodeOSDs(d), Acting: decodeOSDs(d), Primary: d.Int32(), ReportedEpoch: d.Uvarint(),
		SameIntervalSince: d.Uvarint(), LastEpochStarted: d.Uvarint(), LastUpdate: d.String(maxStatString),
		LogEntries: d.Varint(), Objects: d.Varint(), Bytes: d.Varint(), Degraded: d.Varint(),
		Misplaced: d.Varint(), Unfound: d.Varint(), BlockedBy: decodeOSDs(d), DownReason: d.String(maxStatString),
		LastScrub: unstamp(d.Varint()), LastDeepScrub: unstamp(d.Varint())}
	n := d.Count(1)
	if n > maxInconsistent {
		d.Fail(fmt.Errorf("%w: %d inconsistent objects in a PG stat", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		s.Inconsistent = append(s.Inconsistent, d.String(maxStatString))
	}
	return s
}
