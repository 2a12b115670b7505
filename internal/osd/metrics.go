package osd

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// osdMetrics are the OSD's Prometheus series: client ops by kind and
// result with their latency and bytes, the ops in flight, and per-PG
// series (state, objects, bytes, log length) collected at scrape time.
type osdMetrics struct {
	ops     *prometheus.CounterVec   // kind, result
	latency *prometheus.HistogramVec // kind
	// The series of successful ops, looked up once: finding a series by
	// its labels allocated five times per op, a tenth of a 4 KiB read's
	// allocations.
	readsOK, writesOK         prometheus.Counter
	readLatency, writeLatency prometheus.Observer
	bytesIn                   prometheus.Counter
	bytesOut                  prometheus.Counter
	// Scrub and repair (scrub.go).
	scrubs      *prometheus.CounterVec // kind: light or deep
	scrubErrors prometheus.Counter
	readRepairs prometheus.Counter
	// Recovery behind client I/O (missing.go).
	recoveredObjects   prometheus.Counter
	priorityRecoveries prometheus.Counter
	// Snap trimming (snaptrim.go): the snap index keys the trimmer read
	// to find its work, and the trims it ran.
	snapTrimPasses    prometheus.Counter
	snapTrimIndexKeys prometheus.Counter
	snapTrims         prometheus.Counter
	snapIndexRepairs  prometheus.Counter
	// Balanced reads on a replica (replread.go), by result.
	replicaReads *prometheus.CounterVec // result: served or refused
	// Idle watermarks this primary sent its replicas (replread.go).
	idleWatermarks prometheus.Counter
}

func newOSDMetrics(reg prometheus.Registerer, o *OSD) *osdMetrics {
	om := &osdMetrics{
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuttle_osd_ops_total",
			Help: "Client ops answered, by kind (read or write) and result (0 or an errno)."}, []string{"kind", "result"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cuttle_osd_op_latency_seconds",
			Help:    "Time from an op's arrival to its last reply (committed, for writes), by kind.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18)}, []string{"kind"}),
		bytesIn: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_osd_op_in_bytes_total",
			Help: "Bytes of data clients sent in ops."}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_osd_op_out_bytes_total",
			Help: "Bytes of data returned to clients."}),
		scrubs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuttle_osd_scrubs_total",
			Help: "PG scrubs finished on this primary, by kind (light or deep)."}, []string{"kind"}),
		scrubErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_osd_scrub_inconsistent_objects_total",
			Help: "Inconsistent objects found by scrubs on this primary."}),
		readRepairs: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_osd_read_repairs_total",
			Help: "Client reads that met a bad copy here and were answered after repairing it from a replica."}),
		recoveredObjects: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_osd_recovered_objects_total",
			Help: "Object copies this primary pushed to members that lacked them after the PG went active."}),
		priorityRecoveries: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_osd_priority_recoveries_total",
			Help: "Objects recovered ahead of the queue because a client wrote to them."}),
		snapTrimPasses: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_osd_snap_trim_passes_total",
			Help: "PGs the snap trimmer took up because their pool removed snapshots they had not purged."}),
		snapTrimIndexKeys: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_osd_snap_trim_index_keys_total",
			Help: "Snap index keys the snap trimmer read to find the clones of removed snapshots."}),
		snapIndexRepairs: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_osd_snap_index_repairs_total",
			Help: "Snap index entries a replica's deep scrub found wrong (missing, stale or undecodable) and rebuilt from its snap sets."}),
		snapTrims: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_osd_snap_trims_total",
			Help: "Objects the snap trimmer queued a trim of."}),
		replicaReads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuttle_osd_replica_reads_total",
			Help: "Balanced reads (read_policy balance or score) sent to this OSD as a replica: served, or refused as not current here (the client reads at the primary)."}, []string{"result"}),
		idleWatermarks: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_osd_idle_watermarks_total",
			Help: "Idle watermarks this primary sent (one per PG going quiet after writes): each lets replicas serve the PG's last write."}),
	}
	om.readsOK, om.writesOK = om.ops.WithLabelValues("read", "0"), om.ops.WithLabelValues("write", "0")
	om.readLatency, om.writeLatency = om.latency.WithLabelValues("read"), om.latency.WithLabelValues("write")
	if reg != nil {
		reg.MustRegister(om.ops, om.latency, om.bytesIn, om.bytesOut, om.scrubs, om.scrubErrors, om.readRepairs,
			om.recoveredObjects, om.priorityRecoveries, om.snapTrimPasses, om.snapTrimIndexKeys, om.snapTrims, om.snapIndexRepairs, om.replicaReads, om.idleWatermarks, pgCollector{o}, reservationCollector{o},
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cuttle_osd_ops_in_flight", Help: "Client ops not yet answered."},
				func() float64 {
					o.inflightMu.Lock()
					defer o.inflightMu.Unlock()
					return float64(len(o.inflight))
				}),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cuttle_osd_map_epoch", Help: "The OSD map epoch the OSD has activated."},
				func() float64 { return float64(o.Epoch()) }))
	}
	return om
}

// opDone counts a finished op.
func (om *osdMetrics) opDone(r *request, took time.Duration) {
	kind, ok, latency := "read", om.readsOK, om.readLatency
	if r.write {
		kind, ok, latency = "write", om.writesOK, om.writeLatency
	}
	if r.result == 0 {
		ok.Inc()
	} else {
		om.ops.WithLabelValues(kind, strconv.Itoa(int(-r.result))).Inc()
	}
	latency.Observe(took.Seconds())
	om.bytesIn.Add(float64(r.bytesIn))
	om.bytesOut.Add(float64(r.bytesOut))
}

// pgCollector reports every PG's state and statistics when scraped.
type pgCollector struct{ o *OSD }

var (
	pgObjectsDesc = prometheus.NewDesc("cuttle_osd_pg_objects", "Objects in the PG, by PG and this OSD's role.", []string{"pg", "role"}, nil)
	pgBytesDesc   = prometheus.NewDesc("cuttle_osd_pg_bytes", "Logical bytes of the PG's objects.", []string{"pg", "role"}, nil)
	pgLogDesc     = prometheus.NewDesc("cuttle_osd_pg_log_entries", "Entries in the PG log.", []string{"pg", "role"}, nil)
	pgStateDesc   = prometheus.NewDesc("cuttle_osd_pgs", "PGs this OSD holds, by state and role.", []string{"state", "role"}, nil)
	// The replication lag of the PGs this OSD is primary of in pools in
	// ack primary mode (acklag.go).
	pgLagWritesDesc = prometheus.NewDesc("cuttle_osd_pg_replication_lag_writes",
		"Writes this primary answered (pool in ack primary mode) that the replica has yet to commit, by PG and replica.", []string{"pg", "replica"}, nil)
	pgLagBytesDesc = prometheus.NewDesc("cuttle_osd_pg_replication_lag_bytes",
		"Bytes of data of the writes this primary answered that the replica has yet to commit, by PG and replica.", []string{"pg", "replica"}, nil)
)

func (pgCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- pgObjectsDesc
	ch <- pgBytesDesc
	ch <- pgLogDesc
	ch <- pgStateDesc
	ch <- pgLagWritesDesc
	ch <- pgLagBytesDesc
}

func (c pgCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[[2]string]int{}
	for _, p := range c.o.PGs() {
		ch <- prometheus.MustNewConstMetric(pgObjectsDesc, prometheus.GaugeValue, float64(p.Objects), p.PG, p.Role)
		ch <- prometheus.MustNewConstMetric(pgBytesDesc, prometheus.GaugeValue, float64(p.Bytes), p.PG, p.Role)
		ch <- prometheus.MustNewConstMetric(pgLogDesc, prometheus.GaugeValue, float64(p.LogEntries), p.PG, p.Role)
		counts[[2]string{p.State, p.Role}]++
		for _, l := range p.ReplicaLag {
			replica := "osd." + strconv.Itoa(int(l.OSD))
			ch <- prometheus.MustNewConstMetric(pgLagWritesDesc, prometheus.GaugeValue, float64(l.Writes), p.PG, replica)
			ch <- prometheus.MustNewConstMetric(pgLagBytesDesc, prometheus.GaugeValue, float64(l.Bytes), p.PG, replica)
		}
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(pgStateDesc, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
}
