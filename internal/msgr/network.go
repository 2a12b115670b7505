package msgr

import (
	"context"
	"net"
)

// Network is what the messenger dials and listens on. TCP is the real one;
// memnet provides an in-memory one with injected faults.
type Network interface {
	// Listen announces on addr.
	Listen(addr string) (net.Listener, error)
	// Dial connects to addr, giving up when ctx is done.
	Dial(ctx context.Context, addr string) (net.Conn, error)
}

// TCP is the Network of real daemons: TCP with Nagle off (Go's default)
// and keepalives as the dialer sets them.
type TCP struct {
	// Dialer dials; its zero value is fine.
	Dialer net.Dialer
	// ListenConfig listens; its zero value is fine.
	ListenConfig net.ListenConfig
}

// Listen listens on a TCP address ("host:port"; port 0 picks one).
func (t *TCP) Listen(addr string) (net.Listener, error) {
	return t.ListenConfig.Listen(context.Background(), "tcp", addr)
}

// Dial connects to a TCP address.
func (t *TCP) Dial(ctx context.Context, addr string) (net.Conn, error) {
	return t.Dialer.DialContext(ctx, "tcp", addr)
}
