package pgmon

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// pgEntry is the stored statistics of one PG.
type pgEntry struct {
	stat     wire.PGStat
	reporter int32     // the OSD that reported it
	updated  time.Time // when an applied report last changed it
}

// osdEntry is the stored usage of one OSD's store, in bytes.
type osdEntry struct {
	total, used, avail uint64
	load               osdmap.Load // as reported (loads.go)
	updated            time.Time
}

// state is what the service replicates: the PGs' and OSDs' records.
type state struct {
	pgs  map[osdmap.PG]pgEntry
	osds map[int32]osdEntry
	// version counts changes, for the view cache only (not stored).
	version uint64
}

func newState() state {
	return state{pgs: map[osdmap.PG]pgEntry{}, osds: map[int32]osdEntry{}}
}

// left is the number of object copies left to recover: degraded and
// misplaced ones.
func (st *state) left() int64 {
	var n int64
	for _, e := range st.pgs {
		n += max(e.stat.Degraded, 0) + max(e.stat.Misplaced, 0)
	}
	return n
}

// Keys of the store (see the package documentation).
const (
	pgPrefix  = "pg/"
	osdPrefix = "osd/"
)

func pgKey(pg osdmap.PG) []byte { return []byte(pgPrefix + pg.String()) }

func osdKey(id int32) []byte { return []byte(osdPrefix + strconv.Itoa(int(id))) }

// encode returns the record of a PG.
func (e pgEntry) encode() []byte {
	r := wire.PGStatsReport{OSD: e.reporter, Epoch: e.stat.ReportedEpoch, PGs: []wire.PGStat{e.stat}}
	return encodeRecord(e.updated, r)
}

// encode returns the record of an OSD.
func (e osdEntry) encode(id int32) []byte {
	r := wire.PGStatsReport{OSD: id, Total: e.total, Used: e.used, Available: e.avail, Load: e.load}
	return encodeRecord(e.updated, r)
}

// maxRecord bounds the report inside a record or proposal; the monitor
// store and Raft entries bound them too.
const maxRecord = 64 << 20

func encodeRecord(updated time.Time, r wire.PGStatsReport) []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	var ns int64
	if !updated.IsZero() {
		ns = updated.UnixNano()
	}
	e.Varint(ns)
	e.Bytes(r.Encode())
	e.End(m)
	return e.Data()
}

func decodeRecord(b []byte) (time.Time, wire.PGStatsReport, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	ns := d.Varint()
	raw := d.Bytes(maxRecord)
	d.End()
	if err := d.Finish(); err != nil {
		return time.Time{}, wire.PGStatsReport{}, fmt.Errorf("pgmon: record: %w", err)
	}
	r, err := wire.DecodePGStatsReport(raw)
	if err != nil {
		return time.Time{}, wire.PGStatsReport{}, fmt.Errorf("pgmon: record: %w", err)
	}
	var t time.Time
	if ns != 0 {
		t = time.Unix(0, ns).UTC()
	}
	return t, r, nil
}

// load adds the record stored under key.
func (st *state) load(key string, v []byte) error {
	t, r, err := decodeRecord(v)
	if err != nil {
		return fmt.Errorf("key %q: %w", key, err)
	}
	switch {
	case strings.HasPrefix(key, pgPrefix):
		pg, err := osdmap.ParsePG(key[len(pgPrefix):])
		if err != nil || len(r.PGs) != 1 || r.PGs[0].PG != pg {
			return fmt.Errorf("key %q: %w: not the record of that PG", key, encoding.ErrCorrupt)
		}
		st.pgs[pg] = pgEntry{stat: r.PGs[0], reporter: r.OSD, updated: t}
	case strings.HasPrefix(key, osdPrefix):
		id, err := strconv.ParseInt(key[len(osdPrefix):], 10, 32)
		if err != nil || int32(id) != r.OSD || len(r.PGs) != 0 {
			return fmt.Errorf("key %q: %w: not the record of that OSD", key, encoding.ErrCorrupt)
		}
		st.osds[r.OSD] = osdEntry{total: r.Total, used: r.Used, avail: r.Available, load: r.Load, updated: t}
	default:
		return fmt.Errorf("key %q: %w: unknown key", key, encoding.ErrCorrupt)
	}
	return nil
}

// op is what a proposal does.
type op uint8

const opReport op = 1

// proposal is one change of the statistics: a report holding the PGs
// that changed and the reporter's usage.
type proposal struct {
	op     op
	report wire.PGStatsReport
}

func (p proposal) encode() []byte {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	e.Uint8(uint8(p.op))
	e.Bytes(p.report.Encode())
	e.End(m)
	return e.Data()
}

// decodeProposal reads what encode wrote; hostile input gives an error.
func decodeProposal(b []byte) (proposal, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	p := proposal{op: op(d.Uint8())}
	raw := d.Bytes(maxRecord)
	if d.Err() == nil && p.op != opReport {
		d.Fail(fmt.Errorf("%w: op %d", encoding.ErrCorrupt, p.op))
	}
	d.End()
	if err := d.Finish(); err != nil {
		return proposal{}, fmt.Errorf("pgmon: proposal: %w", err)
	}
	r, err := wire.DecodePGStatsReport(raw)
	if err != nil {
		return proposal{}, fmt.Errorf("pgmon: proposal: %w", err)
	}
	p.report = r
	return p, nil
}
