package blocktest

import (
	"testing"
)

const mib = 1 << 20

// fio writes 32 MiB of crc32c-checked blocks through a `cuttle nbd serve`
// process while osd.1 is killed with SIGKILL (a quarter in) and started
// again; then reads every block back and verifies it while osd.2 is
// killed (a quarter in) and started again, and again until one
// verification ran whole after osd.2 was back. No block is lost, torn or
// misplaced: fio exits 0 every time.
func TestFioVerifyAcrossOSDKills(t *testing.T) {
	needTools(t, "fio")
	c := upCluster(t)
	const size = 32 * mib
	c.cli("rbd", "create", "fio", "--size", "32M", "--object-size", "1M")
	srv := c.serve("fio")

	// killAt starts fio and kills osd once a quarter is done; it returns
	// the fio run and the restart's result.
	killAt := func(osd string, verifyOnly bool, done func(fioProgress) int64) (*fioRun, <-chan error) {
		t.Helper()
		f := startFio(t, fioArgs(srv.uri("fio"), size, 41, verifyOnly)...)
		at, running := f.until(func(p fioProgress) bool { return done(p) >= size/4 })
		if !running {
			f.wait()
			t.Fatalf("fio ended before a quarter was done (%+v)", at)
		}
		c.kill(osd)
		t.Logf("killed %s after %d KiB", osd, done(at)>>10)
		return f, c.restartAsync()
	}

	written := func(p fioProgress) int64 { return p.Written }
	f, restarted := killAt("osd.1", false, written)
	if end := f.wait(); end.Written != size {
		t.Fatalf("fio wrote %d bytes, want %d\n%s", end.Written, size, f.out.String())
	}
	select {
	case err := <-restarted:
		t.Logf("osd.1 was back before fio's writes ended (%v)", err)
		restarted = closedWith(err)
	default:
		t.Log("fio's writes ended before osd.1 was back")
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}

	read := func(p fioProgress) int64 { return p.Read }
	f, restarted = killAt("osd.2", true, read)
	passes, back := 0, false
	for {
		end := f.wait()
		passes++
		if end.Read != size {
			t.Fatalf("verification %d read %d bytes, want %d\n%s", passes, end.Read, size, f.out.String())
		}
		if back {
			break
		}
		select {
		case err := <-restarted:
			if err != nil {
				t.Fatal(err)
			}
			back = true // one more pass, whole after the restart
		default:
		}
		f = startFio(t, fioArgs(srv.uri("fio"), size, 41, true)...)
	}
	t.Logf("%d verifications of 32 MiB, the first from before osd.2 was killed, the last after it was back", passes)
	srv.stop()
}

// closedWith returns a channel that yields err.
func closedWith(err error) <-chan error {
	ch := make(chan error, 1)
	ch <- err
	return ch
}
