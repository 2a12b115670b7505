package wire

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/osdmap"
)

func sampleReport() PGStatsReport {
	return PGStatsReport{OSD: 3, Epoch: 42, Total: 10 << 30, Used: 1 << 30, Available: 9 << 30, Load: osdmap.Load{Disk: 40, CPU: 10, Memory: 70}, PGs: []PGStat{
		{PG: osdmap.PG{Pool: 1, Seed: 7}, State: "active+clean", Up: []int32{3, 1, 2}, Acting: []int32{3, 1, 2}, Primary: 3,
			ReportedEpoch: 42, SameIntervalSince: 40, LastEpochStarted: 40, LastUpdate: "40'17", LogEntries: 17,
			Objects: 5, Bytes: 5 << 20, LastScrub: time.Unix(1700000000, 5).UTC(),
			ReplicaLag: []ReplicaLag{{OSD: 1, Acked: "40'15", Writes: 2, Bytes: 8192}, {OSD: 2, Writes: 17, Bytes: 1 << 20}}},
		{PG: osdmap.PG{Pool: 2, Seed: 0}, State: "down", Acting: []int32{3}, Primary: 3, Degraded: 4, Misplaced: 1,
			Unfound: 2, BlockedBy: []int32{0, 1}, DownReason: "waiting", Inconsistent: []string{"1:obj"}},
	}}
}

func TestPGStatsReportRoundTrip(t *testing.T) {
	r := sampleReport()
	got, err := DecodePGStatsReport(r.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
	}
	empty, err := DecodePGStatsReport(PGStatsReport{OSD: 1}.Encode())
	if err != nil || empty.OSD != 1 || len(empty.PGs) != 0 {
		t.Fatalf("empty report: %+v, %v", empty, err)
	}
}

func TestPGStatsReportBadInput(t *testing.T) {
	good := sampleReport().Encode()
	for i := range len(good) - 1 {
		if _, err := DecodePGStatsReport(good[:i]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", i)
		}
	}
	neg := sampleReport()
	neg.OSD = -1
	if _, err := DecodePGStatsReport(neg.Encode()); err == nil {
		t.Fatal("negative OSD id accepted")
	}
	if _, err := DecodePGStatsReport(append(bytes.Clone(good), 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func FuzzPGStatsReport(f *testing.F) {
	f.Add(sampleReport().Encode())
	f.Add(PGStatsReport{}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodePGStatsReport(b)
		if err != nil {
			return
		}
		again, err := DecodePGStatsReport(r.Encode())
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("%+v does not survive re-encoding: %+v, %v", r, again, err)
		}
	})
}

// A version 2 report (before loads) decodes idle; a load above 100% is
// refused.
func TestPGStatsReportLoadVersions(t *testing.T) {
	r := PGStatsReport{OSD: 2, Epoch: 9, Load: osdmap.Load{Disk: 30, CPU: 100, Memory: 0}}
	b := r.Encode()
	if b[0] != 3 || b[1] != 1 {
		t.Fatalf("report version %d compat %d, want 3 and 1", b[0], b[1])
	}
	old := append([]byte(nil), b[:len(b)-3]...)
	old[0] = 2
	binary.LittleEndian.PutUint32(old[2:], binary.LittleEndian.Uint32(old[2:])-3)
	got, err := DecodePGStatsReport(old)
	if err != nil || got.Load != (osdmap.Load{}) || got.OSD != 2 {
		t.Fatalf("version 2 report: %+v %v", got, err)
	}
	bad := append([]byte(nil), b...)
	bad[len(bad)-1] = 101
	if _, err := DecodePGStatsReport(bad); err == nil {
		t.Fatal("a memory load of 101% decoded")
	}
}
