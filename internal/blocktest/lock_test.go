package blocktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Two `cuttle nbd serve` processes on one image pass its exclusive lock
// back and forth: writes through one and then the other, in turn and at
// once, all land, each whole. Then the one holding the lock is killed
// with SIGKILL: once its header watch has timed out the other fences it
// (its instance in the OSD map's blocklist), breaks the lock and writes.
func TestTwoServersOneImage(t *testing.T) {
	needTools(t, "qemu-io", "nbdcopy")
	c := upCluster(t)
	// A dead holder is found once its watch times out: 8 s rather than
	// 30 (the client pings every 5 s). The OSDs apply it a little later.
	c.cli("config", "set", "osd", "osd_client_watch_timeout", "8s")
	for _, osd := range []string{"osd.0", "osd.1", "osd.2"} {
		c.waitFor(osd+" applying osd_client_watch_timeout 8s", func() bool {
			var opts []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			}
			out, err := c.try("--format", "json", "tell", osd, "config", "show")
			if err != nil || json.Unmarshal([]byte(out), &opts) != nil {
				return false
			}
			for _, o := range opts {
				if o.Name == "osd_client_watch_timeout" {
					return o.Value == "8s"
				}
			}
			return false
		})
	}
	const size = 8 * mib
	c.cli("rbd", "create", "shared", "--size", "8M", "--object-size", "1M")
	s1, s2 := c.serve("shared"), c.serve("shared")
	model := make([]byte, size)
	write := func(s *server, pattern byte, off, n int) {
		t.Helper()
		out := tool(t, "qemu-io", "-f", "raw", "-c", fmt.Sprintf("write -P 0x%02x %d %d", pattern, off, n), s.uri("shared"))
		if !strings.Contains(out, "wrote ") {
			t.Fatalf("qemu-io write: %s", out)
		}
		copy(model[off:off+n], bytes.Repeat([]byte{pattern}, n))
	}
	dir := t.TempDir()
	read := func(s *server) []byte {
		t.Helper()
		f := filepath.Join(dir, "read.raw")
		tool(t, "nbdcopy", s.uri("shared"), f)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	same := func(what string, got []byte) {
		t.Helper()
		if !bytes.Equal(got, model) {
			i := 0
			for i < len(got) && i < len(model) && got[i] == model[i] {
				i++
			}
			t.Fatalf("%s: the image differs from what was written, first at byte %d", what, i)
		}
	}

	// In turn: each write overlaps the last and straddles two objects.
	for i := range 8 {
		s := []*server{s1, s2}[i%2]
		write(s, byte(0x10+i), (i*640<<10)%(6*mib), 1536<<10)
	}
	same("after writes in turn, through server 1", read(s1))
	same("after writes in turn, through server 2", read(s2))

	// At once: each client writes 6 blocks of 1 MiB straddling two
	// objects, the same blocks as the other; each block ends up whole
	// from one of them.
	var wg sync.WaitGroup
	outs := make([]string, 2)
	errs := make([]error, 2)
	for k, s := range []*server{s1, s2} {
		wg.Go(func() {
			args := []string{"-f", "raw"}
			for i := range 6 {
				args = append(args, "-c", fmt.Sprintf("write -P 0x%02x %d %d", 0xa0+k*0x10+i, i*mib+512<<10, mib))
			}
			outs[k], errs[k] = toolErr("qemu-io", append(args, s.uri("shared"))...)
		})
	}
	wg.Wait()
	for k := range 2 {
		if errs[k] != nil || strings.Count(outs[k], "wrote ") != 6 {
			t.Fatalf("client %d: %v\n%s", k, errs[k], outs[k])
		}
	}
	got := read(s1)
	for i := range 6 {
		off := i*mib + 512<<10
		b := got[off : off+mib]
		p := b[0]
		if (p != byte(0xa0+i) && p != byte(0xb0+i)) || !bytes.Equal(b, bytes.Repeat([]byte{p}, mib)) {
			t.Fatalf("block %d, written at once through both servers, holds a mix (starts 0x%02x)", i, p)
		}
		copy(model[off:off+mib], b)
	}
	same("after writes at once, through server 2", read(s2))

	// Server 1 takes the lock (it writes), and dies holding it.
	write(s1, 0x77, 0, 64<<10)
	s1.kill()
	if bl := c.cli("osd", "blocklist", "ls"); strings.Contains(bl, "client.") {
		t.Fatalf("a blocklist before the fence:\n%s", bl)
	}
	write(s2, 0x88, 32<<10, 64<<10)
	same("after server 1 died", read(s2))
	// The one entry is the instance server 2 says it fenced.
	var bl []struct {
		Addr string `json:"addr"`
	}
	if err := json.Unmarshal([]byte(c.cli("--format", "json", "osd", "blocklist", "ls")), &bl); err != nil || len(bl) != 1 {
		t.Fatalf("blocklist after the fence: %+v %v", bl, err)
	}
	if log := s2.stderr.String(); !strings.Contains(log, "fenced the dead holder") || !strings.Contains(log, "instance="+bl[0].Addr) {
		t.Fatalf("server 2 did not log fencing %s:\n%s", bl[0].Addr, log)
	}
	s2.stop()
}
