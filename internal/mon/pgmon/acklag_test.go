package pgmon

import (
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// A primary of a pool in ack primary mode reports how far each replica
// lags; "pg query" shows it, in its text and JSON, and a change of the
// lag alone is a change of the PG.
func TestQueryShowsReplicationLag(t *testing.T) {
	tm := newTestMon(t)
	tm.reportAll(tm.clean)
	r := tm.withPGs(tm.clean)
	pg := r.PGs[0].PG
	r.PGs[0].ReplicaLag = []wire.ReplicaLag{{OSD: 7, Acked: "3'1", Writes: 1, Bytes: 4096}, {OSD: 8, Writes: 2, Bytes: 8192}}
	if p, _ := tm.prepare(r); p == nil {
		t.Fatal("a changed replica lag made no proposal")
	}
	must(t, tm.report(r))
	text := must(t, tm.run("pg query", "pgid", pg.String())).Text
	for _, want := range []string{"osd.7: 1 writes (4.0 KiB) behind, acked 3'1", "osd.8: 2 writes (8.0 KiB) behind, acked -"} {
		if !strings.Contains(text, want) {
			t.Errorf("pg query text lacks %q:\n%s", want, text)
		}
	}
	v := tm.query(pg.String())
	if len(v.ReplicaLag) != 2 || v.ReplicaLag[1] != (wire.ReplicaLag{OSD: 8, Writes: 2, Bytes: 8192}) {
		t.Errorf("pg query JSON lag %+v", v.ReplicaLag)
	}
}
