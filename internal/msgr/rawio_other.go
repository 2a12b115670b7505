//go:build !linux

package msgr

import "net"

// rawSocket is Linux-only; elsewhere connections use net.Conn's calls.
type rawSocket struct{}

func newRawSocket(net.Conn) *rawSocket { return nil }

func (*rawSocket) Read([]byte) (int, error) { panic("msgr: rawSocket outside Linux") }

func (*rawSocket) writev([][]byte) error { panic("msgr: rawSocket outside Linux") }
