package msgr_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr"
)

// countingDispatcher counts messages and signals every want of them.
type countingDispatcher struct {
	m    *msgr.Messenger // releases payloads if set
	n    atomic.Int64
	want int64
	done chan struct{}
}

func (d *countingDispatcher) Dispatch(_ msgr.Peer, m msgr.Message) {
	if d.m != nil {
		d.m.Release(m)
	}
	if d.n.Add(1)%d.want == 0 {
		d.done <- struct{}{}
	}
}
func (d *countingDispatcher) HandleEvent(msgr.Event) {}

// msgrStream sends rounds of count messages of size bytes from one
// messenger to another over loopback TCP.
type msgrStream struct {
	s    *msgr.Session
	recv *countingDispatcher
	msg  msgr.Message
}

func newMsgrStream(b *testing.B, count, size int) *msgrStream {
	recv := &countingDispatcher{want: int64(count), done: make(chan struct{})}
	m, addr := tcpNode(b, "osd.2", recv, nil, nil)
	recv.m = m
	send, _ := tcpNode(b, "osd.1", &countingDispatcher{want: 1, done: make(chan struct{})}, nil, nil)
	s, err := send.Connect(name("osd.2"), addr)
	if err != nil {
		b.Fatal(err)
	}
	return &msgrStream{s: s, recv: recv, msg: msgr.Message{Type: 1, Version: 1, Payload: make([]byte, size)}}
}

// round sends one round and returns its duration, until the receiver
// dispatched the last message.
func (st *msgrStream) round(b *testing.B) time.Duration {
	start := time.Now()
	for range st.recv.want {
		if err := st.s.Send(b.Context(), st.msg); err != nil {
			b.Fatal(err)
		}
	}
	<-st.recv.done
	return time.Since(start)
}

// tcpStream writes rounds of count buffers of size bytes over one plain
// loopback TCP stream: the ceiling for the messenger.
type tcpStream struct {
	c         net.Conn
	buf       []byte
	count     int
	roundDone chan error
}

func newTCPStream(b *testing.B, count, size int) *tcpStream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	st := &tcpStream{buf: make([]byte, size), count: count, roundDone: make(chan error)}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, size)
		for {
			for range count {
				if _, err := io.ReadFull(c, buf); err != nil {
					return
				}
			}
			st.roundDone <- nil
		}
	}()
	if st.c, err = net.Dial("tcp", ln.Addr().String()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.c.Close() })
	return st
}

func (st *tcpStream) round(b *testing.B) time.Duration {
	start := time.Now()
	for range st.count {
		if _, err := st.c.Write(st.buf); err != nil {
			b.Fatal(err)
		}
	}
	<-st.roundDone
	return time.Since(start)
}

// BenchmarkBandwidth4MiB sends 4 MiB messages one way through the
// messenger and the same bytes through a plain TCP stream, alternating
// rounds of each so that load from elsewhere on the machine hits both
// alike. It reports both rates and their ratio (msgr/tcp, over all
// rounds), the median of the per-round ratios (less swayed by bursts of
// load) and the process CPU time per byte of the messenger over that of
// TCP (cpu-msgr/tcp, Linux only), which bounds the ratio when the machine
// has no idle core.
func BenchmarkBandwidth4MiB(b *testing.B) {
	const size, perRound = 4 << 20, 16
	rounds := max(b.N/perRound, 1)
	ms := newMsgrStream(b, perRound, size)
	ts := newTCPStream(b, perRound, size)
	ms.round(b) // warm up: handshake, first allocations
	ts.round(b)
	var mt, tt, mcpu, tcpu time.Duration
	ratios := make([]float64, 0, rounds)
	for range rounds {
		c0 := processCPU()
		m := ms.round(b)
		c1 := processCPU()
		t := ts.round(b)
		c2 := processCPU()
		mt, tt = mt+m, tt+t
		mcpu, tcpu = mcpu+c1-c0, tcpu+c2-c1
		ratios = append(ratios, t.Seconds()/m.Seconds())
	}
	slices.Sort(ratios)
	mb := float64(rounds*perRound) * size / 1e6
	b.ReportMetric(mb/mt.Seconds(), "msgr-MB/s")
	b.ReportMetric(mb/tt.Seconds(), "tcp-MB/s")
	b.ReportMetric(tt.Seconds()/mt.Seconds(), "msgr/tcp")
	b.ReportMetric(ratios[len(ratios)/2], "median-msgr/tcp")
	if tcpu > 0 {
		b.ReportMetric(mcpu.Seconds()/tcpu.Seconds(), "cpu-msgr/tcp")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkSmall128 sends 128-byte messages one way on one connection.
func BenchmarkSmall128(b *testing.B) {
	n := max(b.N, 1)
	ms := newMsgrStream(b, n, 128)
	d := ms.round(b)
	b.ReportMetric(float64(n)/d.Seconds(), "msgs/s")
}

// echoDispatcher answers every request with a reply of size bytes
// carrying the request's first 8 bytes (its id), like an OSD answering
// a small read.
type echoDispatcher struct {
	m    *msgr.Messenger
	size int
}

func (d *echoDispatcher) Dispatch(from msgr.Peer, m msgr.Message) {
	reply := make([]byte, d.size)
	copy(reply, m.Payload[:8])
	d.m.Release(m)
	from.Session.Send(context.Background(), msgr.Message{Type: 2, Version: 1, Payload: reply})
}
func (d *echoDispatcher) HandleEvent(msgr.Event) {}

// waiterDispatcher hands each reply to the worker waiting for its id,
// like the client library completing an op.
type waiterDispatcher struct {
	waiters []chan struct{}
}

func (d *waiterDispatcher) Dispatch(_ msgr.Peer, m msgr.Message) {
	d.waiters[binary.LittleEndian.Uint64(m.Payload)] <- struct{}{}
}
func (d *waiterDispatcher) HandleEvent(msgr.Event) {}

// msgrRoundTrips runs rounds of round trips from a client messenger to
// a server one over loopback TCP: workers request concurrently on one
// session, each waiting for its reply before the next request.
type msgrRoundTrips struct {
	s       *msgr.Session
	replies *waiterDispatcher
	workers int
}

func newMsgrRoundTrips(b *testing.B, workers, size int) *msgrRoundTrips {
	echo := &echoDispatcher{size: size}
	srv, addr := tcpNode(b, "osd.0", echo, nil, nil)
	echo.m = srv
	wd := &waiterDispatcher{}
	for range workers {
		wd.waiters = append(wd.waiters, make(chan struct{}, 1))
	}
	cli, _ := tcpNode(b, "client.bench", wd, nil, nil)
	s, err := cli.Connect(name("osd.0"), addr)
	if err != nil {
		b.Fatal(err)
	}
	return &msgrRoundTrips{s: s, replies: wd, workers: workers}
}

// round makes perWorker round trips from each worker and returns the
// time it took.
func (rt *msgrRoundTrips) round(b *testing.B, perWorker int) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	for w := range rt.workers {
		wg.Go(func() {
			for range perWorker {
				req := make([]byte, 128)
				binary.LittleEndian.PutUint64(req, uint64(w))
				if err := rt.s.Send(b.Context(), msgr.Message{Type: 1, Version: 1, Payload: req}); err != nil {
					b.Error(err)
					return
				}
				<-rt.replies.waiters[w]
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// tcpRoundTrips is the floor: the same round trips on one plain TCP
// connection per worker, the reply read by the goroutine that asked.
type tcpRoundTrips struct {
	conns []net.Conn
	size  int
}

func newTCPRoundTrips(b *testing.B, workers, size int) *tcpRoundTrips {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, reply := make([]byte, 128), make([]byte, size)
				for {
					if _, err := io.ReadFull(c, req); err != nil {
						return
					}
					copy(reply, req[:8])
					if _, err := c.Write(reply); err != nil {
						return
					}
				}
			}()
		}
	}()
	rt := &tcpRoundTrips{size: size}
	for range workers {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		rt.conns = append(rt.conns, c)
	}
	return rt
}

func (rt *tcpRoundTrips) round(b *testing.B, perWorker int) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range rt.conns {
		wg.Go(func() {
			req, reply := make([]byte, 128), make([]byte, rt.size)
			for range perWorker {
				if _, err := c.Write(req); err != nil {
					b.Error(err)
					return
				}
				if _, err := io.ReadFull(c, reply); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkRoundTrip4KiB measures what a small read costs the messenger:
// 16 workers each send a 128-byte request and wait for a 4 KiB reply, on
// one session between two messengers, against the same exchanges on one
// plain TCP connection per worker (no framing, acks or handoffs between
// goroutines), alternating rounds of each. It reports both rates, their
// ratio and the process CPU time per round trip of each (Linux only).
func BenchmarkRoundTrip4KiB(b *testing.B) {
	const workers, perWorker, size = 16, 256, 4096
	perRound := workers * perWorker
	rounds := max(b.N/perRound, 1)
	ms := newMsgrRoundTrips(b, workers, size)
	ts := newTCPRoundTrips(b, workers, size)
	ms.round(b, perWorker) // warm up
	ts.round(b, perWorker)
	var mt, tt, mcpu, tcpu time.Duration
	for range rounds {
		c0 := processCPU()
		mt += ms.round(b, perWorker)
		c1 := processCPU()
		tt += ts.round(b, perWorker)
		c2 := processCPU()
		mcpu, tcpu = mcpu+c1-c0, tcpu+c2-c1
	}
	n := float64(rounds * perRound)
	b.ReportMetric(n/mt.Seconds(), "msgr-rt/s")
	b.ReportMetric(n/tt.Seconds(), "tcp-rt/s")
	b.ReportMetric(tt.Seconds()/mt.Seconds(), "msgr/tcp")
	if tcpu > 0 {
		b.ReportMetric(float64(mcpu.Microseconds())/n, "cpu-µs/msgr-rt")
		b.ReportMetric(float64(tcpu.Microseconds())/n, "cpu-µs/tcp-rt")
	}
	b.ReportMetric(0, "ns/op")
}
