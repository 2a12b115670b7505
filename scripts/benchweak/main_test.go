package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A results directory as bench-weak.sh leaves it, two sizes of the three
// configurations: the summary counts reads by the OSDs' classes, the
// figures are drawn, and the table gives the weak configuration's ratios
// to the baseline.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("osds.txt", "0 ssd h0\n1 hdd h0\n2 hdd h1\n")
	for i, c := range []string{"all3", "one", "weak"} {
		for j, size := range []string{"4K", "64K"} {
			bytes := 4096 << (4 * j)
			for _, ph := range phases {
				mbps := float64(10 * (i + 1) * (j + 1))
				write(fmt.Sprintf("%s-%s-%s.json", c, size, ph), fmt.Sprintf(
					`{"op_size": %d, "ops": 100, "total_time_s": 2, "bandwidth_mb_s": %g, "iops": 50, "latency_s": {"avg": %g, "p50": 0.01, "p99": 0.05}}`,
					bytes, mbps, 0.02/float64(i+1)))
				if ph != "write" {
					write(fmt.Sprintf("%s-%s-%s.reads", c, size, ph), "0 30\n1 10\n2 0\n")
				}
			}
		}
	}
	var out bytes.Buffer
	if err := run(dir, "", "weak", "test", &out); err != nil {
		t.Fatal(err)
	}
	for _, f := range figures {
		if st, err := os.Stat(filepath.Join(dir, "weak-"+f.file+".png")); err != nil || st.Size() == 0 {
			t.Errorf("figure %s: %v", f.file, err)
		}
	}
	s, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Configs[2].Points[1].Phases["seq"]; got.ReadsSSD != 30 || got.ReadsHDD != 10 {
		t.Errorf("weak 64K seq reads: ssd %v hdd %v, want 30 and 10", got.ReadsSSD, got.ReadsHDD)
	}
	if s.Configs[0].Points[0].Size != "4K" || s.Configs[0].Points[1].Bytes != 65536 {
		t.Errorf("points not in size order: %+v", s.Configs[0].Points)
	}
	// weak writes 3x the MiB/s of all3 at each size, at a third of its latency.
	if !strings.Contains(out.String(), "| 4K | 0.33x | 3.00x | 3.00x | 3.00x |") {
		t.Errorf("table lacks the 4K ratios:\n%s", out.String())
	}
}
