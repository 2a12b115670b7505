package launcher

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestPIDFileRoundTrip(t *testing.T) {
	p := procID{PID: 4242, Start: 987654321, Boot: "8b5921ec-5522-437c-9787-ae7a68969f4f"}
	got, err := parsePIDFile(p.marshal())
	if err != nil || got != p {
		t.Fatalf("parse(marshal(%+v)) = %+v, %v", p, got, err)
	}
	// A later version's extra lines do not matter; the boot id may be
	// empty where the system has none.
	got, err = parsePIDFile([]byte("cuttle-pid 1\npid 7\nstart 9\nboot \nexe /bin/cuttle\n"))
	if err != nil || got != (procID{PID: 7, Start: 9}) {
		t.Fatalf("with extra lines: %+v, %v", got, err)
	}
}

func TestPIDFileRejects(t *testing.T) {
	for _, text := range []string{
		"",
		"12345\n",
		"cuttle-pid 2\npid 1\nstart 1\n",
		"cuttle-pid 1\npid 1\n",
		"cuttle-pid 1\nstart 1\n",
		"cuttle-pid 1\npid 0\nstart 1\n",
		"cuttle-pid 1\npid -3\nstart 1\n",
		"cuttle-pid 1\npid x\nstart 1\n",
		"cuttle-pid 1\npid 1\nstart -1\n",
		"cuttle-pid 1\npid 1\npid 2\nstart 1\n",
		"cuttle-pid 1\npid 1\nstart 1\n" + strings.Repeat("x", maxPIDFileSize),
	} {
		if p, err := parsePIDFile([]byte(text)); !errors.Is(err, errBadPIDFile) {
			t.Errorf("parse %q = %+v, %v; want errBadPIDFile", text, p, err)
		}
	}
}

func FuzzParsePIDFile(f *testing.F) {
	f.Add(procID{PID: 1, Start: 2, Boot: "b"}.marshal())
	f.Add([]byte("cuttle-pid 1\npid 99999999999999999999\nstart 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePIDFile(b)
		if err != nil {
			return
		}
		if p.PID <= 0 {
			t.Fatalf("accepted pid %d", p.PID)
		}
		if q, err := parsePIDFile(p.marshal()); err != nil || q.PID != p.PID || q.Start != p.Start {
			t.Fatalf("round trip of %+v: %+v, %v", p, q, err)
		}
	})
}

// The identity rule: the same pid is the same process only with the same
// start time in the same boot, and not once it has exited.
func TestRunningIdentity(t *testing.T) {
	rec := procID{PID: 10, Start: 500, Boot: "boot-1"}
	for _, tc := range []struct {
		name              string
		now               procState
		boot              string
		running, released bool
	}{
		{"same process", procState{Exists: true, Start: 500, Threads: 9}, "boot-1", true, false},
		{"no such pid", procState{}, "boot-1", false, true},
		{"pid reused by a later process", procState{Exists: true, Start: 501}, "boot-1", false, true},
		{"pid reused after a reboot", procState{Exists: true, Start: 500}, "boot-2", false, true},
		{"exited, not reaped", procState{Exists: true, Start: 500, Zombie: true, Threads: 1}, "boot-1", false, true},
		// The main thread has exited, others still hold the sockets.
		{"exiting", procState{Exists: true, Start: 500, Zombie: true, Threads: 4}, "boot-1", false, false},
	} {
		if got := running(rec, tc.now, tc.boot); got != tc.running {
			t.Errorf("%s: running = %v, want %v", tc.name, got, tc.running)
		}
		if got := released(rec, tc.now, tc.boot); got != tc.released {
			t.Errorf("%s: released = %v, want %v", tc.name, got, tc.released)
		}
	}
}

func TestAliveSelf(t *testing.T) {
	self, err := identify(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !alive(self) {
		t.Fatalf("this process (%+v) is not alive", self)
	}
	if self.Start == 0 {
		t.Skip("no process start times on this system")
	}
	reused := self
	reused.Start++
	if alive(reused) {
		t.Errorf("a record with another start time (%+v) counts as this process", reused)
	}
}
