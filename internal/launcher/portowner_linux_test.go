package launcher

import (
	"net"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestListeningInodes(t *testing.T) {
	table := []byte(`  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1D4C 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0 100 0 0 10 0
   1: 00000000:1D4D 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 222 1 0 100 0 0 10 0
   2: 0100007F:1D4C 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 333 1 0 100 0 0 10 0
   3: 0200007F:1D4C 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 444 1 0 100 0 0 10 0
`)
	lo := net.ParseIP("127.0.0.1")
	if got := listeningInodes(table, lo, 7500); !slices.Equal(got, []string{"111"}) {
		t.Errorf("127.0.0.1:7500: %v", got) // not the connection (333), not 127.0.0.2 (444)
	}
	if got := listeningInodes(table, lo, 7501); !slices.Equal(got, []string{"222"}) {
		t.Errorf("127.0.0.1:7501 (wildcard listener): %v", got)
	}
	if got := listeningInodes(table, lo, 7502); len(got) != 0 {
		t.Errorf("7502: %v", got)
	}
}

// The process holding a port is found, and told apart from a Cuttle
// daemon: this test binary is "another program" with its command line.
func TestListenerPID(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	if pid := listenerPID(addr); pid != os.Getpid() {
		t.Fatalf("listenerPID(%s) = %d, want this process %d", addr, pid, os.Getpid())
	}
	if got := portUser(addr, t.TempDir()); !strings.HasPrefix(got, "another program (pid ") || !strings.Contains(got, os.Args[0]) {
		t.Errorf("portUser: %q", got)
	}
	l.Close()
	if pid := listenerPID(addr); pid != 0 {
		t.Errorf("after close: pid %d", pid)
	}
	if got := portUser(addr, t.TempDir()); got != "another program" {
		t.Errorf("portUser of a free port: %q", got)
	}
}
