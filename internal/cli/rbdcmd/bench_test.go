package rbdcmd

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
)

// rbd bench: writes then reads, plain and JSON; the counts add up and
// bad shapes are refused.
func TestRBDBench(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimRBD(t)
		s.Must("rbd", "create", "b", "--size", "4M", "--object-size", "1M")
		var r benchResult
		out := s.Must("rbd", "bench", "b", "--io-type", "write", "--io-size", "4K", "--io-total", "256K", "--io-pattern", "rand", "--format", "json")
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if r.Ops != 64 || r.IOType != "write" || r.Pattern != "rand" || r.IOThreads != 16 || r.OpsPerSec <= 0 || r.P99Usec < r.P50Usec || r.MaxUsec < r.P99Usec {
			t.Fatalf("write result %+v", r)
		}
		// Through the cache: the final flush is part of the run, so the
		// image has the data when the bench returns.
		s.Must("rbd", "create", "c", "--size", "4M", "--object-size", "1M")
		out = s.Must("rbd", "bench", "c", "--io-type", "write", "--io-size", "4K", "--io-total", "256K", "--cache", "--format", "json")
		if err := json.Unmarshal([]byte(out), &r); err != nil || !r.Cache || r.Ops != 64 {
			t.Fatalf("cached write result %+v %v", r, err)
		}
		var du struct {
			Images []struct {
				Used uint64 `json:"used_size"`
			} `json:"images"`
		}
		if err := json.Unmarshal([]byte(s.Must("rbd", "du", "c", "--format", "json")), &du); err != nil || len(du.Images) != 1 || du.Images[0].Used == 0 {
			t.Fatalf("after a cached bench, du %+v %v", du, err)
		}
		// 3 MiB sequential in 1 MiB calls on a 4 MiB image.
		out = s.Must("rbd", "bench", "b", "--io-type", "read", "--io-size", "1M", "--io-total", "3M", "--io-threads", "2")
		for _, want := range []string{"bench  type read io_size 1048576 io_threads 2 bytes 3145728 pattern seq\n", "SEC", "elapsed: ", " ops: 3 ", "p99 "} {
			if !strings.Contains(out, want) {
				t.Fatalf("plain output lacks %q:\n%s", want, out)
			}
		}
		for _, bad := range [][]string{
			{"--io-type", "trim"},
			{"--io-type", "read", "--io-pattern", "zigzag"},
			{"--io-type", "read", "--io-size", "8M"},
			{"--io-type", "read", "--io-threads", "0"},
		} {
			if _, err := s.Run(append([]string{"rbd", "bench", "b"}, bad...)...); err == nil || !strings.HasSuffix(err.Error(), "(EINVAL)") {
				t.Fatalf("bench %v: %v", bad, err)
			}
		}
	})
}
