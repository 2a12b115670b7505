package nbd

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
)

// tlsExports is twoExports with TLS: required, or optional.
func tlsExports(t *testing.T, optional, clientCerts bool) (Config, *TestCerts) {
	cfg, _, _ := twoExports()
	certs := MakeCerts(t, t.TempDir())
	cfg.TLS, cfg.TLSOptional = certs.ServerConfig(clientCerts), optional
	return cfg, certs
}

// startTLS sends NBD_OPT_STARTTLS, wants its ack and makes the
// connection TLS.
func (c *client) startTLS(conf *tls.Config) {
	c.t.Helper()
	c.opt(proto.OptStartTLS, nil)
	c.want(proto.OptStartTLS, proto.RepAck)
	tc := tls.Client(c.c, conf)
	if err := tc.Handshake(); err != nil {
		c.t.Fatalf("TLS handshake: %v", err)
	}
	c.c = tc
}

// readWrite writes a block through the export and reads it back, with
// simple replies.
func (c *client) readWrite() {
	c.t.Helper()
	data := bytes.Repeat([]byte("tls!"), 1024)
	c.request(proto.Request{Type: proto.CmdWrite, Cookie: 1, Offset: 8192, Length: uint32(len(data))}, data)
	if cookie, errno := c.simple(); cookie != 1 || errno != 0 {
		c.t.Fatalf("write: cookie %d %v", cookie, errno)
	}
	c.request(proto.Request{Type: proto.CmdRead, Cookie: 2, Offset: 8192, Length: uint32(len(data))}, nil)
	if cookie, errno := c.simple(); cookie != 2 || errno != 0 || !bytes.Equal(c.read(len(data)), data) {
		c.t.Fatalf("read: cookie %d %v", cookie, errno)
	}
}

// closedAfterAlert fails unless the server closes the connection,
// after at most a TLS alert record (a failed handshake's).
func (c *client) closedAfterAlert() {
	c.t.Helper()
	b, err := io.ReadAll(c.c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("the connection is still open (read %x)", b)
	}
	if len(b) > 0 && (b[0] != 0x15 || len(b) > 7) { // type alert, version, length 2, level, description
		c.t.Fatalf("the server sent %x, not a TLS alert", b)
	}
}

// proto.md "TLS support", FORCEDTLS mode: STARTTLS is acked and the TLS
// handshake follows; the negotiation then goes on inside TLS (GO,
// structured replies, I/O); a second STARTTLS is NBD_REP_ERR_INVALID.
func TestStartTLSThenGo(t *testing.T) {
	cfg, certs := tlsExports(t, false, false)
	_, addr := serve(t, cfg)
	for _, structured := range []bool{false, true} {
		c := dial(t, addr)
		c.hello(proto.ClientFixedNewstyle | proto.ClientNoZeroes)
		c.startTLS(certs.ClientConfig(false))
		c.opt(proto.OptStartTLS, nil)
		c.want(proto.OptStartTLS, proto.RepErrInvalid)
		c.opt(proto.OptList, nil)
		c.want(proto.OptList, proto.RepServer)
		c.want(proto.OptList, proto.RepServer)
		c.want(proto.OptList, proto.RepAck)
		c.negotiateGo("disk", structured)
		if structured {
			data := bytes.Repeat([]byte("tls!"), 1024)
			c.request(proto.Request{Type: proto.CmdWrite, Cookie: 1, Offset: 8192, Length: uint32(len(data))}, data)
			if ch := c.chunk(); ch.typ != proto.ReplyNone || ch.cookie != 1 {
				t.Fatalf("write: %+v", ch)
			}
			c.request(proto.Request{Type: proto.CmdRead, Cookie: 2, Offset: 8192, Length: uint32(len(data))}, nil)
			if got, _ := c.structuredRead(2, 8192, len(data)); !bytes.Equal(got, data) {
				t.Fatal("read back other data")
			}
		} else {
			c.readWrite()
		}
		c.request(proto.Request{Type: proto.CmdDisc}, nil)
		c.closed()
	}
}

// FORCEDTLS: before STARTTLS every option but ABORT is
// NBD_REP_ERR_TLS_REQD, unknown ones too; NBD_OPT_EXPORT_NAME, which
// cannot be refused, closes the connection; STARTTLS with data is
// NBD_REP_ERR_INVALID.
func TestTLSRequiredRefusesPlainOptions(t *testing.T) {
	cfg, _ := tlsExports(t, false, false)
	_, addr := serve(t, cfg)
	c := dial(t, addr)
	c.hello(proto.ClientFixedNewstyle)
	for _, o := range []struct {
		opt  uint32
		data []byte
	}{
		{proto.OptList, nil}, {proto.OptGo, nameData("disk")}, {proto.OptInfo, nameData("disk")},
		{proto.OptStructuredReply, nil}, {proto.OptListMetaContext, metaData("disk")}, {1000, []byte("x")},
	} {
		c.opt(o.opt, o.data)
		if d := c.want(o.opt, proto.RepErrTLSReqd); !strings.Contains(string(d), "STARTTLS") {
			t.Errorf("option %d: message %q", o.opt, d)
		}
	}
	c.opt(proto.OptStartTLS, []byte("x"))
	c.want(proto.OptStartTLS, proto.RepErrInvalid)
	c.opt(proto.OptAbort, nil)
	c.want(proto.OptAbort, proto.RepAck)
	c.closed()

	c = dial(t, addr)
	c.hello(proto.ClientFixedNewstyle | proto.ClientNoZeroes)
	c.opt(proto.OptExportName, []byte("disk"))
	c.closed()
}

// SELECTIVETLS with no TLS-only export (--tls optional): a client that
// does not upgrade is served, and so is one that does. What was
// negotiated before STARTTLS is forgotten: structured replies must be
// asked for again inside TLS.
func TestTLSOptional(t *testing.T) {
	cfg, certs := tlsExports(t, true, false)
	_, addr := serve(t, cfg)
	plain := dial(t, addr)
	plain.goTo("disk", true)
	plain.request(proto.Request{Type: proto.CmdFlush, Cookie: 5}, nil)
	if ch := plain.chunk(); ch.typ != proto.ReplyNone || ch.cookie != 5 {
		t.Fatalf("plain flush: %+v", ch)
	}

	c := dial(t, addr)
	c.hello(proto.ClientFixedNewstyle | proto.ClientNoZeroes)
	c.opt(proto.OptStructuredReply, nil)
	c.want(proto.OptStructuredReply, proto.RepAck)
	c.startTLS(certs.ClientConfig(false))
	c.opt(proto.OptSetMetaContext, metaData("disk", proto.BaseAllocation))
	c.want(proto.OptSetMetaContext, proto.RepErrInvalid) // structured replies are gone
	if flags := c.negotiateGo("disk", false); flags&proto.TransSendDF != 0 {
		t.Fatalf("flags %#x: structured replies survived STARTTLS", flags)
	}
	c.readWrite()
}

// A server without TLS answers STARTTLS NBD_REP_ERR_POLICY and never
// NBD_REP_ERR_TLS_REQD.
func TestStartTLSWithoutTLS(t *testing.T) {
	cfg, _, _ := twoExports()
	_, addr := serve(t, cfg)
	c := dial(t, addr)
	c.hello(proto.ClientFixedNewstyle)
	c.opt(proto.OptStartTLS, nil)
	c.want(proto.OptStartTLS, proto.RepErrPolicy)
	c.opt(proto.OptList, nil)
	c.want(proto.OptList, proto.RepServer)
}

// refused says whether the server refuses a TLS client of conf: the
// handshake fails or, in TLS 1.3 where the client finishes first, the
// connection closes before the reply to the next option.
func refused(t *testing.T, addr string, conf *tls.Config) error {
	c := dial(t, addr)
	c.hello(proto.ClientFixedNewstyle)
	c.opt(proto.OptStartTLS, nil)
	c.want(proto.OptStartTLS, proto.RepAck)
	tc := tls.Client(c.c, conf)
	if err := tc.Handshake(); err != nil {
		return err
	}
	if _, err := tc.Write(optBytes(proto.OptList, nil)); err != nil {
		return err
	}
	if _, err := io.ReadFull(tc, make([]byte, 20)); err != nil {
		return err
	}
	return nil
}

// With client certificates required (--tls-ca), a client with a
// certificate the CA signed is served; one without a certificate, or
// with another CA's, is refused; the server goes on serving.
func TestTLSClientCertificates(t *testing.T) {
	cfg, certs := tlsExports(t, false, true)
	_, addr := serve(t, cfg)
	other := MakeCerts(t, t.TempDir())
	stranger := certs.ClientConfig(false)
	stranger.Certificates = []tls.Certificate{other.Client}
	for name, conf := range map[string]*tls.Config{"no certificate": certs.ClientConfig(false), "another CA's": stranger} {
		if err := refused(t, addr, conf); err == nil {
			t.Errorf("a client with %s certificate was served", name)
		}
	}
	// A server certificate of a CA the client does not trust: the client
	// refuses.
	if err := refused(t, addr, other.ClientConfig(true)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a server of an unknown CA: %v", err)
	}
	c := dial(t, addr)
	c.hello(proto.ClientFixedNewstyle | proto.ClientNoZeroes)
	c.startTLS(certs.ClientConfig(true))
	c.negotiateGo("disk", false)
	c.readWrite()
}

// Bytes that are not TLS after the ack of STARTTLS, or a client that
// starts no handshake, close that connection only (the latter when the
// handshake's deadline passes); the server serves the next client.
func TestTLSGarbageAndStall(t *testing.T) {
	cfg, certs := tlsExports(t, false, false)
	cfg.HandshakeTimeout = 500 * time.Millisecond
	_, addr := serve(t, cfg)
	for _, garbage := range [][]byte{[]byte("GET / HTTP/1.1\r\n\r\n"), bytes.Repeat([]byte{0x16, 3, 1, 0xff, 0xff}, 100), optBytes(proto.OptList, nil)} {
		c := dial(t, addr)
		c.hello(proto.ClientFixedNewstyle)
		c.opt(proto.OptStartTLS, nil)
		c.want(proto.OptStartTLS, proto.RepAck)
		c.send(garbage)
		c.closedAfterAlert()
	}
	stall := dial(t, addr)
	stall.hello(proto.ClientFixedNewstyle)
	stall.opt(proto.OptStartTLS, nil)
	stall.want(proto.OptStartTLS, proto.RepAck)
	stall.closed() // once the handshake's deadline passes

	c := dial(t, addr)
	c.hello(proto.ClientFixedNewstyle | proto.ClientNoZeroes)
	c.startTLS(certs.ClientConfig(false))
	c.negotiateGo("disk", false)
	c.readWrite()
}

// List with TLS lists a server that requires it; without, it is
// ErrTLSRequired; with TLS against a server without it, ErrNoTLS.
func TestListTLS(t *testing.T) {
	cfg, certs := tlsExports(t, false, true)
	_, addr := serve(t, cfg)
	ctx := context.Background()
	got, err := List(ctx, "tcp", addr, certs.ClientConfig(true))
	if err != nil || len(got) != 2 || got[0].Name != "disk" || got[0].Size != 1<<20 || !got[1].ReadOnly {
		t.Fatalf("List over TLS = %+v, %v", got, err)
	}
	if _, err := List(ctx, "tcp", addr, nil); !errors.Is(err, ErrTLSRequired) {
		t.Fatalf("List without TLS: %v", err)
	}
	plainCfg, _, _ := twoExports()
	_, plain := serve(t, plainCfg)
	if _, err := List(ctx, "tcp", plain, certs.ClientConfig(true)); !errors.Is(err, ErrNoTLS) {
		t.Fatalf("List with TLS of a server without: %v", err)
	}
}

// ServerTLS and ClientTLS load the PEM files, and name what is missing.
func TestLoadTLSFiles(t *testing.T) {
	certs := MakeCerts(t, t.TempDir())
	f := func(name string) string { return certs.Dir + "/" + name }
	srv, err := ServerTLS(f("server-cert.pem"), f("server-key.pem"), f("ca-cert.pem"))
	if err != nil || srv.ClientAuth != tls.RequireAndVerifyClientCert || len(srv.Certificates) != 1 {
		t.Fatalf("ServerTLS = %+v, %v", srv, err)
	}
	cl, err := ClientTLS(f("ca-cert.pem"), f("client-cert.pem"), f("client-key.pem"), "localhost")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, _ := twoExports()
	cfg.TLS = srv
	_, addr := serve(t, cfg)
	if got, err := List(context.Background(), "tcp", addr, cl); err != nil || len(got) != 2 {
		t.Fatalf("List with the loaded files = %+v, %v", got, err)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{func() error { _, err := ServerTLS(f("nope.pem"), f("server-key.pem"), ""); return err }(), "(ENOENT)"},
		{func() error { _, err := ServerTLS(f("server-cert.pem"), f("client-key.pem"), ""); return err }(), "(EINVAL)"},
		{func() error { _, err := ServerTLS(f("server-cert.pem"), "", ""); return err }(), "(EINVAL)"},
		{func() error {
			_, err := ServerTLS(f("server-cert.pem"), f("server-key.pem"), f("server-key.pem"))
			return err
		}(), "no PEM certificate"},
		{func() error { _, err := ClientTLS("", f("client-cert.pem"), "", "x"); return err }(), "(EINVAL)"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%v; want %q", tc.err, tc.want)
		}
	}
	if _, err := NewServer(Config{Exports: cfg.Exports, TLSOptional: true}); err == nil {
		t.Error("TLS optional without TLS was accepted")
	}
}

// Shutdown of a TLS connection in transmission: the request in flight
// is answered, then the connection closes.
func TestShutdownTLS(t *testing.T) {
	g := &gated{memBackend: newMem(1 << 20), release: make(chan struct{}), entered: make(chan struct{}, 1)}
	certs := MakeCerts(t, t.TempDir())
	s, addr := serve(t, Config{Exports: []Export{{Name: "g", Backend: g}}, TLS: certs.ServerConfig(false)})
	c := dial(t, addr)
	c.hello(proto.ClientFixedNewstyle | proto.ClientNoZeroes)
	c.startTLS(certs.ClientConfig(false))
	c.negotiateGo("g", false)
	c.request(proto.Request{Type: proto.CmdRead, Cookie: 7, Length: 8}, nil)
	<-g.entered
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	close(g.release)
	if cookie, errno := c.simple(); cookie != 7 || errno != 0 {
		t.Fatalf("the read in flight: cookie %d %v", cookie, errno)
	}
	c.read(8)
	c.closed()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
