package nbd

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
)

// The server's own cost per request: 4 KiB reads and writes, 16 in
// flight on one connection over loopback TCP, against an export in
// memory (so the cluster is not what is measured).
func BenchmarkRequests4K(b *testing.B) {
	for _, tc := range []struct {
		name       string
		cmd        uint16
		structured bool
	}{{"read", proto.CmdRead, false}, {"read-structured", proto.CmdRead, true}, {"write", proto.CmdWrite, false}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg, _, _ := twoExports()
			_, addr := serve(b, cfg)
			c := dial(b, addr)
			c.goTo("disk", tc.structured)
			payload := make([]byte, 4096)
			payload[0] = 1
			// The replies are read as they come; the server keeps 16 in
			// flight and the socket buffers the rest.
			replies := make(chan struct{})
			go func() {
				defer close(replies)
				for i := 0; i < b.N; i++ {
					if tc.structured {
						for c.chunk().flags&proto.ReplyFlagDone == 0 {
						}
					} else if _, errno := c.simple(); errno == 0 && tc.cmd == proto.CmdRead {
						c.read(4096)
					}
				}
			}()
			b.SetBytes(4096)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := proto.Request{Type: tc.cmd, Cookie: uint64(i), Offset: uint64(i%200) * 4096, Length: 4096}
				if tc.cmd == proto.CmdWrite {
					c.request(q, payload)
				} else {
					c.request(q, nil)
				}
			}
			<-replies
		})
	}
}
