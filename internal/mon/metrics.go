package mon

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// monMetrics are the monitor's Prometheus series.
type monMetrics struct {
	commands *prometheus.CounterVec // by command prefix and result code
	leader   prometheus.Gauge
	term     prometheus.Gauge
	applied  prometheus.Gauge
	repeats  prometheus.Counter
}

func newMonMetrics(reg prometheus.Registerer) *monMetrics {
	mm := &monMetrics{
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuttle_mon_commands_total",
			Help: "Commands the monitor answered, by command and result (0 or an errno such as 13 for refused)."}, []string{"command", "result"}),
		leader:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "cuttle_mon_leader", Help: "1 while this monitor leads the quorum."}),
		term:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "cuttle_mon_term", Help: "The Raft term this monitor knows."}),
		applied: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cuttle_mon_applied_index", Help: "The last Raft entry this monitor applied."}),
		repeats: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuttle_mon_repeated_commands_total",
			Help: "Committed copies of client commands already applied or no longer awaited, answered without applying them again."}),
	}
	if reg != nil {
		reg.MustRegister(mm.commands, mm.leader, mm.term, mm.applied, mm.repeats)
	}
	return mm
}

// command counts one answered command; commands no service knows are
// counted as "unknown" so clients cannot grow the label set.
func (mm *monMetrics) command(prefix string, known bool, code int32) {
	if !known {
		prefix = "unknown"
	}
	mm.commands.WithLabelValues(prefix, strconv.Itoa(int(code))).Inc()
}
