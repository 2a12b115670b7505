//go:build linux

package msgr

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// A write larger than the socket buffers completes across many partial
// writev calls and waits for room in the poller between them; the
// reader sees every byte in order, then EOF.
func TestRawSocketLargeWritevAndEOF(t *testing.T) {
	client, server := tcpPair(t)
	w, r := newRawSocket(client), newRawSocket(server)
	if w == nil || r == nil {
		t.Fatal("no raw socket for a TCP connection")
	}
	var bufs [][]byte
	var want []byte
	for i := range 600 { // 600 pieces of up to 64 KiB, some empty
		b := bytes.Repeat([]byte{byte(i)}, (i*7919)%(64<<10))
		bufs = append(bufs, b)
		want = append(want, b...)
	}
	errc := make(chan error, 1)
	go func() {
		err := w.writev(bufs)
		client.(*net.TCPConn).CloseWrite()
		errc <- err
	}()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("writev: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want %d (or contents differ)", len(got), len(want))
	}
	for _, v := range w.iov[:cap(w.iov)] {
		if v.Base != nil {
			t.Fatal("writev kept a reference to a written buffer")
		}
	}
}

// Reads honour deadlines as net.Conn's do, and report a closed socket.
func TestRawSocketDeadlineAndClose(t *testing.T) {
	client, server := tcpPair(t)
	r := newRawSocket(server)
	server.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want a deadline error", err)
	}
	server.SetReadDeadline(time.Time{})
	client.Close()
	if _, err := r.Read(make([]byte, 10)); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want EOF", err)
	}
	server.Close()
	if err := r.writev([][]byte{[]byte("x")}); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write on a closed socket: %v, want net.ErrClosed", err)
	}
}

// The raw path is only for kernel sockets.
func TestRawSocketNotForPipes(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if newRawSocket(a) != nil {
		t.Fatal("raw socket for an in-memory pipe")
	}
}

// Reads and writes allocate nothing of their own.
func TestRawSocketAllocs(t *testing.T) {
	client, server := tcpPair(t)
	w, r := newRawSocket(client), newRawSocket(server)
	msg := [][]byte{[]byte("ping")}
	buf := make([]byte, 16)
	allocs := testing.AllocsPerRun(100, func() {
		if err := w.writev(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(r, buf[:4]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per write and read, want 0", allocs)
	}
}
