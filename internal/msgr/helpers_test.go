package msgr_test

import (
	"encoding/binary"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
)

// recorder is a Dispatcher that keeps what it receives and lets tests wait
// for a condition without sleeping.
type recorder struct {
	mu      sync.Mutex
	msgs    map[auth.EntityName][]msgr.Message
	peers   map[auth.EntityName]msgr.Peer
	events  []msgr.Event
	changed chan struct{}
	onMsg   func(from msgr.Peer, msg msgr.Message) // optional, called before recording
}

func newRecorder() *recorder {
	return &recorder{
		msgs:    make(map[auth.EntityName][]msgr.Message),
		peers:   make(map[auth.EntityName]msgr.Peer),
		changed: make(chan struct{}),
	}
}

func (r *recorder) Dispatch(from msgr.Peer, msg msgr.Message) {
	if r.onMsg != nil {
		r.onMsg(from, msg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs[from.Name] = append(r.msgs[from.Name], msg)
	r.peers[from.Name] = from
	r.signalLocked()
}

func (r *recorder) HandleEvent(ev msgr.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	r.signalLocked()
}

func (r *recorder) signalLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// waitFor waits until cond (called with r.mu held) holds, failing the test
// after timeout of (virtual, under synctest) time.
func (r *recorder) waitFor(t *testing.T, timeout time.Duration, what string, cond func(r *recorder) bool) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		ok := cond(r)
		ch := r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

func (r *recorder) waitMsgs(t *testing.T, from auth.EntityName, n int, timeout time.Duration) []msgr.Message {
	t.Helper()
	r.waitFor(t, timeout, "messages from "+from.String(), func(r *recorder) bool { return len(r.msgs[from]) >= n })
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]msgr.Message(nil), r.msgs[from]...)
}

func (r *recorder) countEvents(kind msgr.EventKind) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ev := range r.events {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

func (r *recorder) lastEvent(kind msgr.EventKind) (msgr.Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.events) - 1; i >= 0; i-- {
		if r.events[i].Kind == kind {
			return r.events[i], true
		}
	}
	return msgr.Event{}, false
}

func (r *recorder) waitEvent(t *testing.T, kind msgr.EventKind, n int, timeout time.Duration) msgr.Event {
	t.Helper()
	r.waitFor(t, timeout, "event "+kind.String(), func(r *recorder) bool {
		c := 0
		for _, ev := range r.events {
			if ev.Kind == kind {
				c++
			}
		}
		return c >= n
	})
	ev, _ := r.lastEvent(kind)
	return ev
}

func name(s string) auth.EntityName {
	n, err := auth.ParseEntityName(s)
	if err != nil {
		panic(err) // test constants only
	}
	return n
}

// node is one messenger on a memnet host.
type node struct {
	m    *msgr.Messenger
	rec  *recorder
	name auth.EntityName
	addr string
	logs *logBuffer // warnings and errors the messenger logged
}

// logBuffer collects log output from many goroutines and lets tests wait
// for a line without sleeping.
type logBuffer struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{} // closed and replaced on every write
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return l.b.Write(p)
}

// waitFor waits until the log contains want, failing the test after
// timeout. The messenger logs why a connection closed after closing it,
// so a peer that sees the close must wait for the line.
func (l *logBuffer) waitFor(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		l.mu.Lock()
		if strings.Contains(l.b.String(), want) {
			l.mu.Unlock()
			return
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("log does not name %q after %v:\n%s", want, timeout, l.String())
		}
	}
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newNode starts a listening messenger named n at addr on net.
func newNode(t *testing.T, net *memnet.Network, n, addr string, seed uint64, tweak func(*msgr.Config)) *node {
	t.Helper()
	rec := newRecorder()
	logs := &logBuffer{}
	cfg := msgr.Config{
		Name:       name(n),
		Network:    net.Host(addr),
		Dispatcher: rec,
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Seed:       seed,
		ClientAuth: func(auth.EntityName) auth.ClientHandshake { return &auth.NoneClient{Name: name(n)} },
		ServerAuth: func() auth.ServerHandshake { return &auth.NoneServer{} },
	}
	if tweak != nil {
		tweak(&cfg)
	}
	m, err := msgr.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Listen(t.Context(), addr); err != nil {
		t.Fatal(err)
	}
	return &node{m: m, rec: rec, name: cfg.Name, addr: addr, logs: logs}
}

// numbered returns message i: its number in the payload, padded to size.
func numbered(i, size int) msgr.Message {
	p := make([]byte, max(size, 8))
	binary.LittleEndian.PutUint64(p, uint64(i))
	return msgr.Message{Type: 7, Version: 1, Payload: p}
}

func number(m msgr.Message) int { return int(binary.LittleEndian.Uint64(m.Payload)) }

// checkInOrder fails unless msgs are numbered 0..n-1 in order.
func checkInOrder(t *testing.T, msgs []msgr.Message, n int) {
	t.Helper()
	if len(msgs) != n {
		t.Fatalf("got %d messages, want %d", len(msgs), n)
	}
	for i, m := range msgs {
		if got := number(m); got != i {
			t.Fatalf("message %d is number %d: duplicated, lost or reordered", i, got)
		}
	}
}
