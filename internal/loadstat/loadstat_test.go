package loadstat

import (
	"testing"
	"testing/fstest"
	"time"

	"github.com/cuttlestore/cuttle/osdmap"
)

func TestParse(t *testing.T) {
	stat := []byte("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\nintr 1\n")
	c, err := parseCPU(stat)
	if err != nil || c != (cpuTimes{total: 1000, idle: 850}) {
		t.Fatalf("parseCPU = %+v, %v", c, err)
	}
	if _, err := parseCPU([]byte("intr 1\n")); err == nil {
		t.Error("a /proc/stat without a cpu line parsed")
	}
	if _, err := parseCPU([]byte("cpu 1 x 3 4 5\n")); err == nil {
		t.Error("a bad cpu field parsed")
	}
	mem := []byte("MemTotal:       16000000 kB\nMemFree:  1000 kB\nMemAvailable:    4000000 kB\n")
	if pct, err := parseMem(mem); err != nil || pct != 75 {
		t.Fatalf("parseMem = %v, %v", pct, err)
	}
	for _, bad := range []string{"MemTotal: 10 kB\n", "MemAvailable: 10 kB\n", "MemTotal: 10 kB\nMemAvailable: 20 kB\n"} {
		if _, err := parseMem([]byte(bad)); err == nil {
			t.Errorf("parseMem(%q) accepted", bad)
		}
	}
}

func TestArithmetic(t *testing.T) {
	for _, c := range []struct {
		prev, cur cpuTimes
		want      float64
	}{
		{cpuTimes{1000, 850}, cpuTimes{2000, 1350}, 50},
		{cpuTimes{1000, 850}, cpuTimes{1000, 850}, 0}, // no time passed
		{cpuTimes{1000, 850}, cpuTimes{900, 800}, 0},  // counters went back (a new boot)
	} {
		if got := cpuBusy(c.prev, c.cur); got != c.want {
			t.Errorf("cpuBusy(%v, %v) = %v, want %v", c.prev, c.cur, got, c.want)
		}
	}
	if got := diskBusy(time.Second, 1500*time.Millisecond, 2*time.Second); got != 25 {
		t.Errorf("diskBusy = %v, want 25", got)
	}
	if got := diskBusy(0, 5*time.Second, time.Second); got != 100 {
		t.Errorf("a queue deeper than the interval: %v, want 100", got)
	}
	for in, want := range map[float64]uint8{0: 0, 4.9: 0, 5: 10, 44: 40, 96: 100, 130: 100, -3: 0} {
		if got := round(in); got != want {
			t.Errorf("round(%v) = %d, want %d", in, got, want)
		}
	}
}

// A Sampler reports the loads between its calls, rounded to Step.
func TestSampler(t *testing.T) {
	proc := fstest.MapFS{
		"stat":    {Data: []byte("cpu 100 0 50 800 50 0 0 0\n")},
		"meminfo": {Data: []byte("MemTotal: 1000 kB\nMemAvailable: 380 kB\n")},
	}
	now := time.Unix(100, 0)
	var busy time.Duration
	s := New(proc, func() time.Duration { return busy }, func() time.Time { return now })
	if got := s.Sample(); got != (osdmap.Load{Memory: 60}) {
		t.Fatalf("first sample %v, want memory only", got)
	}
	proc["stat"] = &fstest.MapFile{Data: []byte("cpu 400 0 150 1100 50 0 0 0\n")} // 700 more, 400 busy
	now = now.Add(10 * time.Second)
	busy = 8 * time.Second
	if got := s.Sample(); got != (osdmap.Load{Disk: 80, CPU: 60, Memory: 60}) {
		t.Fatalf("second sample %v", got)
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	delete(proc, "meminfo")
	if got := s.Sample(); got.Memory != 0 || s.Err() == nil {
		t.Fatalf("without meminfo: %v, err %v", got, s.Err())
	}
}
