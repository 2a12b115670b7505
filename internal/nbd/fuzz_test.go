package nbd

import (
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
)

// optBytes encodes an option as a client sends it.
func optBytes(opt uint32, data []byte) []byte {
	b := binary.BigEndian.AppendUint64(nil, proto.OptMagic)
	b = binary.BigEndian.AppendUint32(b, opt)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// Any bytes a client sends — handshake and requests — end in replies or
// a closed connection, never a panic or a hang: the server serves the
// bytes over a pipe and returns once the client hangs up.
func FuzzServe(f *testing.F) {
	flags := binary.BigEndian.AppendUint32(nil, proto.ClientFixedNewstyle|proto.ClientNoZeroes)
	simple := append(append([]byte{}, flags...), optBytes(proto.OptGo, nameData("disk", proto.InfoBlockSize))...)
	for _, q := range []proto.Request{
		{Type: proto.CmdWrite, Cookie: 1, Offset: 10, Length: 4},
		{Type: proto.CmdRead, Cookie: 2, Offset: 8, Length: 8},
		{Type: proto.CmdTrim, Cookie: 3, Length: 4096},
		{Type: proto.CmdFlush, Cookie: 4},
	} {
		simple = proto.AppendRequest(simple, q)
		if q.Type == proto.CmdWrite {
			simple = append(simple, "data"...)
		}
	}
	f.Add(simple)
	structured := append(append([]byte{}, flags...), optBytes(proto.OptStructuredReply, nil)...)
	structured = append(structured, optBytes(proto.OptSetMetaContext, metaData("disk", proto.BaseAllocation))...)
	structured = append(structured, optBytes(proto.OptList, nil)...)
	structured = append(structured, optBytes(proto.OptGo, nameData(""))...)
	structured = proto.AppendRequest(structured, proto.Request{Type: proto.CmdBlockStatus, Cookie: 1, Length: 1 << 20})
	structured = proto.AppendRequest(structured, proto.Request{Type: proto.CmdRead, Flags: proto.CmdFlagDF, Cookie: 2, Length: 1 << 16})
	structured = proto.AppendRequest(structured, proto.Request{Type: proto.CmdWriteZeroes, Flags: proto.CmdFlagNoHole, Cookie: 3, Length: 100})
	structured = proto.AppendRequest(structured, proto.Request{Type: proto.CmdDisc})
	f.Add(structured)
	f.Add(append(append([]byte{}, flags...), optBytes(proto.OptExportName, []byte("ro"))...))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, _, _ := twoExports()
		cfg.Logger = slog.New(slog.DiscardHandler)
		s, err := NewServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		server, client := net.Pipe()
		c := newConn(s, server)
		done := make(chan struct{})
		go func() { c.serve(); close(done) }()
		go func() { _, _ = io.Copy(io.Discard, client) }()
		_, _ = client.Write(b)
		client.Close()
		<-done
	})
}

// The same with TLS required: the options before STARTTLS, and whatever
// bytes follow its ack (the TLS handshake's), end in replies or a closed
// connection, never a panic or a hang.
func FuzzServeTLS(f *testing.F) {
	certs := MakeCerts(f, f.TempDir())
	flags := binary.BigEndian.AppendUint32(nil, proto.ClientFixedNewstyle|proto.ClientNoZeroes)
	f.Add(append(append(append([]byte{}, flags...), optBytes(proto.OptList, nil)...), optBytes(proto.OptExportName, nil)...))
	starttls := append(append([]byte{}, flags...), optBytes(proto.OptStartTLS, nil)...)
	f.Add(append(append([]byte{}, starttls...), 0x16, 3, 1, 0, 0x2f, 1, 0, 0, 0x2b, 3, 3))
	f.Add(append(append([]byte{}, starttls...), optBytes(proto.OptStartTLS, nil)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, _, _ := twoExports()
		cfg.Logger = slog.New(slog.DiscardHandler)
		cfg.TLS = certs.ServerConfig(true)
		s, err := NewServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		server, client := net.Pipe()
		c := newConn(s, server)
		done := make(chan struct{})
		go func() { c.serve(); close(done) }()
		go func() { _, _ = io.Copy(io.Discard, client) }()
		_, _ = client.Write(b)
		client.Close()
		<-done
	})
}
