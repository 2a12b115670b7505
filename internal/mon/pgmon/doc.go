// Package pgmon is the monitors' PG statistics service (the PG map of
// Ceph's PGMonitor and mgr), named "pgmap": the newest state and usage of
// every placement group, as its acting primary reports it with "pg
// report", and the usage of every OSD's store. It answers "pg stat", "pg
// dump", "pg query", "pg ls" and "pg ls-by-osd", the space of the cluster,
// its pools and its OSDs ("df", "osd df": df.go), adds the data section to
// "status", and raises the PG health checks (PG_AVAILABILITY,
// PG_DEGRADED, PG_DAMAGED, OBJECT_MISPLACED, OBJECT_UNFOUND) and the
// fullness checks (OSD_FULL, OSD_BACKFILLFULL, OSD_NEARFULL, POOL_FULL).
//
// It also decides the OSDs' fullness (fullness.go): its Tick compares
// each OSD's stored usage under the map's ratios with the state bits the
// map holds and, only when they differ, returns "osd full-states" for the
// driver to send to osdmon, which owns the map. That is the one way the
// service reaches osdmon: a command, as an operator would send.
//
// It owns the stored statistics, the states it derives from them and the
// current OSD map (a PG without a report is "unknown"; one whose reporter
// is down or no longer its primary is "stale+..."), and the recovery
// progress shown by "status". It does not know how OSDs compute their
// statistics (internal/osd does) nor how the OSD map changes (osdmon does:
// the service reads the applied map through Config.Map). It implements
// moncmd.Service and never sees Raft or the network.
//
// # Reports and determinism
//
// Prepare decodes a report, drops the PGs that the current map no longer
// has and those older than what is stored, and proposes only what
// differs, so that a steady cluster puts nothing through Raft. Apply
// checks the same against the state and the map as applied at that point
// of the log (every monitor applies the OSD map's proposals and these in
// the same order, so every monitor reads the same map), stamps each
// changed PG with the entry's time and drops the statistics of PGs and
// OSDs the map no longer has. Derived states are computed when read,
// never stored.
//
// A report replaces a PG's statistics when the PG's reported epoch is at
// least the stored one: an OSD that lost the PG to a newer primary can no
// longer overwrite what the new primary reported.
//
// The recovery progress (samples of the objects left to recover as
// reports apply) is kept in memory only: it serves "status" and does not
// take part in the replicated state.
//
// # Store layout
//
// Under the service name "pgmap":
//
//	pg/POOL.SEED  record of one PG (the key spells the PG as "1.1f")
//	osd/ID        record of one OSD's store usage
//
// A record is
//
//	envelope v1 { updated varint (Unix ns, 0: none), report bytes }
//
// where report is a wire.PGStatsReport encoding: for a PG, the reporting
// OSD, the PG's reported epoch and exactly that PG; for an OSD, its id
// and usage and no PGs. updated is the time of the last applied report
// that changed the record. A proposal is
//
//	envelope v1 { op u8 (1: report), report bytes }
//
// holding the PGs that changed and the reporter's usage.
//
// # Concurrency
//
// A Service is not safe for concurrent use: the monitor's driver calls it
// from one goroutine at a time, as moncmd.Service requires, and the map
// function is called on that goroutine too.
//
// Start reading at Service (service.go), then report.go and view.go.
package pgmon
