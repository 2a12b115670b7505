package osd

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Finished ops count by kind and result, successes through the series
// looked up once and failures by their errno, and every op's latency
// counts under its kind.
func TestOpMetrics(t *testing.T) {
	om := newOSDMetrics(nil, nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(om.ops, om.latency)
	for _, r := range []*request{{}, {}, {write: true}, {result: -2}, {write: true, result: -16}} {
		om.opDone(r, time.Millisecond)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += " " + l.GetName() + "=" + l.GetValue()
			}
			if h := m.GetHistogram(); h != nil {
				got[key] = float64(h.GetSampleCount())
			} else {
				got[key] = m.GetCounter().GetValue()
			}
		}
	}
	want := map[string]float64{
		"cuttle_osd_ops_total kind=read result=0":   2,
		"cuttle_osd_ops_total kind=read result=2":   1,
		"cuttle_osd_ops_total kind=write result=0":  1,
		"cuttle_osd_ops_total kind=write result=16": 1,
		"cuttle_osd_op_latency_seconds kind=read":   3,
		"cuttle_osd_op_latency_seconds kind=write":  2,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
