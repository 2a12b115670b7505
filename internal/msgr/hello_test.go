package msgr

import (
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/auth"
)

// A version 1 hello (before the port) still decodes: its sender
// listens on no port that the acceptor knows of.
func TestHelloVersion1(t *testing.T) {
	var e encoding.Encoder
	m := e.Begin(1, 1)
	for _, s := range []string{"client", "x"} {
		e.String(s)
	}
	e.Uint64(5)
	e.String("")
	e.String("")
	e.End(m)
	h, err := decodeHello(e.Data())
	if err != nil || h.Nonce != 5 || h.Port != 0 || h.Name != (auth.EntityName{Type: "client", ID: "x"}) {
		t.Fatalf("version 1 hello: %+v, %v", h, err)
	}
}
