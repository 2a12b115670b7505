package nbd

import (
	"testing"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
)

// The server's own cost per request: 4 KiB reads and writes, 16 in
// flight on one connection over loopback TCP (and over TLS), against an
// export in memory (so the cluster is not what is measured).
func BenchmarkRequests4K(b *testing.B) {
	for _, tc := range []struct {
		name       string
		cmd        uint16
		structured bool
		tls        bool
	}{
		{"read", proto.CmdRead, false, false}, {"read-structured", proto.CmdRead, true, false}, {"write", proto.CmdWrite, false, false},
		{"read-tls", proto.CmdRead, false, true}, {"write-tls", proto.CmdWrite, false, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg, _, _ := twoExports()
			var certs *TestCerts
			if tc.tls {
				certs = MakeCerts(b, b.TempDir())
				cfg.TLS = certs.ServerConfig(false)
			}
			_, addr := serve(b, cfg)
			c := dial(b, addr)
			if tc.tls {
				c.hello(proto.ClientFixedNewstyle | proto.ClientNoZeroes)
				c.startTLS(certs.ClientConfig(false))
				c.negotiateGo("disk", tc.structured)
			} else {
				c.goTo("disk", tc.structured)
			}
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
