package nbd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
)

// Block sizes advertised (NBD_INFO_BLOCK_SIZE): any byte-aligned request
// works, 4 KiB is preferred, MaxPayload the largest READ or WRITE.
const (
	minBlock       = 1
	preferredBlock = 4096
)

// metaContextID is the id of base:allocation on every connection.
const metaContextID = 1

// conn is one client connection.
type conn struct {
	s *Server
	// raw is the accepted connection; nc is what the connection's own
	// goroutines read and write: raw, or the TLS connection over it
	// after NBD_OPT_STARTTLS. Other goroutines (Shutdown) touch raw
	// only.
	raw net.Conn
	nc  net.Conn
	log *slog.Logger

	// Negotiated in the handshake.
	tls        bool // NBD_OPT_STARTTLS succeeded
	noZeroes   bool
	structured bool
	metaExport string // the export base:allocation was selected for
	metaSet    bool
	exp        *Export
	flags      uint16 // transmission flags

	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc

	wmu sync.Mutex // serialises replies

	smu     sync.Mutex
	stopped bool
}

func newConn(s *Server, nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	return &conn{s: s, raw: nc, nc: nc, log: s.log.With("remote", nc.RemoteAddr().String()), ctx: ctx, cancel: cancel}
}

// stop makes the connection read no more requests: Shutdown's first step.
func (c *conn) stop() {
	c.smu.Lock()
	c.stopped = true
	c.smu.Unlock()
	unblock(c.raw)
}

func (c *conn) isStopped() bool {
	c.smu.Lock()
	defer c.smu.Unlock()
	return c.stopped
}

// serve runs the connection to its end.
func (c *conn) serve() {
	defer c.cancel()
	defer func() { c.nc.Close() }() // the TLS connection's, after STARTTLS
	// The deadline covers the whole handshake, TLS's included.
	_ = c.raw.SetDeadline(time.Now().Add(c.s.cfg.HandshakeTimeout))
	if err := c.negotiate(); err != nil {
		if !errors.Is(err, errAbort) && !c.isStopped() {
			c.log.Info("nbd: handshake ended", "err", err)
		}
		return
	}
	// No deadline from here; a stop that came meanwhile set its own
	// after this, or is seen here.
	_ = c.raw.SetDeadline(time.Time{})
	if c.isStopped() {
		return
	}
	c.log = c.log.With("export", c.exp.Name)
	c.log.Debug("nbd: transmission", "structured", c.structured, "flags", c.flags)
	if err := c.transmit(); err != nil && !c.isStopped() {
		c.log.Info("nbd: connection closed", "err", err)
	}
}

// errAbort ends the handshake at the client's wish.
var errAbort = errors.New("nbd: client aborted")

func (c *conn) write(b []byte) error {
	_, err := c.nc.Write(b)
	return err
}

func (c *conn) reply(opt, typ uint32, data []byte) error {
	return c.write(proto.OptionReply(opt, typ, data))
}

// replyErr answers an option with an error reply carrying a message.
func (c *conn) replyErr(opt, typ uint32, format string, a ...any) error {
	return c.reply(opt, typ, []byte(fmt.Sprintf(format, a...)))
}

// negotiate runs the fixed newstyle handshake until the client picks an
// export (proto.md "Newstyle negotiation").
func (c *conn) negotiate() error {
	if err := c.write(proto.Greeting(proto.FlagFixedNewstyle | proto.FlagNoZeroes)); err != nil {
		return err
	}
	var b [proto.OptionHeaderLen]byte
	if _, err := io.ReadFull(c.nc, b[:4]); err != nil {
		return fmt.Errorf("client flags: %w", err)
	}
	cf, err := proto.ParseClientFlags(b[:4])
	if err != nil {
		return err
	}
	c.noZeroes = cf&proto.ClientNoZeroes != 0
	for {
		if _, err := io.ReadFull(c.nc, b[:]); err != nil {
			return fmt.Errorf("option: %w", err)
		}
		h, err := proto.ParseOption(b[:])
		if err != nil {
			return err
		}
		if h.Length > proto.MaxOptionLen {
			return fmt.Errorf("%w: option %d of %d bytes is over %d", proto.ErrProtocol, h.Option, h.Length, proto.MaxOptionLen)
		}
		data := make([]byte, h.Length)
		if _, err := io.ReadFull(c.nc, data); err != nil {
			return fmt.Errorf("option %d: %w", h.Option, err)
		}
		done, err := c.option(h.Option, data)
		if err != nil || done {
			return err
		}
	}
}

// option answers one option; done says the transmission phase begins.
func (c *conn) option(opt uint32, data []byte) (done bool, err error) {
	if opt == proto.OptStartTLS {
		return false, c.startTLS(data)
	}
	if c.s.cfg.TLS != nil && !c.s.cfg.TLSOptional && !c.tls {
		// FORCEDTLS: nothing but STARTTLS and ABORT before TLS.
		switch opt {
		case proto.OptAbort:
		case proto.OptExportName:
			// It has no error reply: close.
			return false, errors.New("NBD_OPT_EXPORT_NAME before NBD_OPT_STARTTLS, and this server requires TLS")
		default:
			return false, c.replyErr(opt, proto.RepErrTLSReqd, "this server requires TLS: send NBD_OPT_STARTTLS first")
		}
	}
	switch opt {
	case proto.OptExportName:
		e, ok := c.s.export(string(data))
		if !ok {
			// The protocol has no error reply here: close.
			return false, fmt.Errorf("no export %q", data)
		}
		c.choose(e)
		return true, c.write(proto.ExportNameReply(e.Backend.Size(), c.flags, c.noZeroes))
	case proto.OptAbort:
		_ = c.reply(opt, proto.RepAck, nil)
		return false, errAbort
	case proto.OptList:
		if len(data) != 0 {
			return false, c.replyErr(opt, proto.RepErrInvalid, "NBD_OPT_LIST takes no data")
		}
		for _, e := range c.s.cfg.Exports {
			if err := c.reply(opt, proto.RepServer, proto.ServerData(e.Name, e.Description)); err != nil {
				return false, err
			}
		}
		return false, c.reply(opt, proto.RepAck, nil)
	case proto.OptInfo, proto.OptGo:
		return c.infoGo(opt, data)
	case proto.OptStructuredReply:
		if len(data) != 0 {
			return false, c.replyErr(opt, proto.RepErrInvalid, "NBD_OPT_STRUCTURED_REPLY takes no data")
		}
		c.structured = true
		return false, c.reply(opt, proto.RepAck, nil)
	case proto.OptListMetaContext, proto.OptSetMetaContext:
		return false, c.metaContext(opt, data)
	}
	return false, c.replyErr(opt, proto.RepErrUnsup, "option %d is not supported", opt)
}

func (c *conn) infoGo(opt uint32, data []byte) (bool, error) {
	q, err := proto.ParseInfoRequest(data)
	if err != nil {
		return false, c.replyErr(opt, proto.RepErrInvalid, "%v", err)
	}
	e, ok := c.s.export(q.Name)
	if !ok {
		return false, c.replyErr(opt, proto.RepErrUnknown, "no export %q", q.Name)
	}
	flags := c.transmissionFlags(e)
	if err := c.reply(opt, proto.RepInfo, proto.InfoExportData(e.Backend.Size(), flags)); err != nil {
		return false, err
	}
	sent := map[uint16]bool{proto.InfoExport: true}
	for _, info := range append(q.Infos, proto.InfoBlockSize) {
		if sent[info] {
			continue
		}
		sent[info] = true
		var d []byte
		switch info {
		case proto.InfoName:
			d = proto.InfoStringData(info, e.Name)
		case proto.InfoDescription:
			if e.Description == "" {
				continue
			}
			d = proto.InfoStringData(info, e.Description)
		case proto.InfoBlockSize:
			d = proto.InfoBlockSizeData(minBlock, preferredBlock, proto.MaxPayload)
		default:
			continue // unknown information requests are ignored
		}
		if err := c.reply(opt, proto.RepInfo, d); err != nil {
			return false, err
		}
	}
	if err := c.reply(opt, proto.RepAck, nil); err != nil {
		return false, err
	}
	if opt == proto.OptInfo {
		return false, nil
	}
	c.choose(e)
	return true, nil
}

// choose enters the transmission phase on export e.
func (c *conn) choose(e *Export) {
	c.exp = e
	c.flags = c.transmissionFlags(e)
	if c.metaSet && c.metaExport != e.Name && !(c.metaExport == "" && e == &c.s.cfg.Exports[0]) {
		c.metaSet = false // selected for another export
	}
}

func (c *conn) transmissionFlags(e *Export) uint16 {
	f := proto.TransHasFlags | proto.TransSendFlush | proto.TransSendFUA | proto.TransCanMultiConn
	if e.Backend.ReadOnly() {
		f |= proto.TransReadOnly
	} else {
		f |= proto.TransSendTrim | proto.TransSendWriteZeroes
	}
	if c.structured {
		f |= proto.TransSendDF
	}
	return f
}

func (c *conn) metaContext(opt uint32, data []byte) error {
	if !c.structured {
		return c.replyErr(opt, proto.RepErrInvalid, "meta contexts need structured replies first")
	}
	q, err := proto.ParseMetaContextRequest(data)
	if err != nil {
		return c.replyErr(opt, proto.RepErrInvalid, "%v", err)
	}
	if _, ok := c.s.export(q.Export); !ok {
		return c.replyErr(opt, proto.RepErrUnknown, "no export %q", q.Export)
	}
	match := false
	for _, s := range q.Queries {
		if s == proto.BaseAllocation || (opt == proto.OptListMetaContext && s == "base:") {
			match = true
		}
	}
	if opt == proto.OptListMetaContext && len(q.Queries) == 0 {
		match = true // list them all
	}
	if opt == proto.OptSetMetaContext {
		c.metaSet, c.metaExport = match, q.Export
	}
	if match {
		id := uint32(0) // LIST may answer any id
		if opt == proto.OptSetMetaContext {
			id = metaContextID
		}
		if err := c.reply(opt, proto.RepMetaContext, proto.MetaContextData(id, proto.BaseAllocation)); err != nil {
			return err
		}
	}
	return c.reply(opt, proto.RepAck, nil)
}

// startTLS answers NBD_OPT_STARTTLS: an ack, then the TLS handshake as
// the server, under the handshake's deadline. The negotiation starts
// again inside TLS: what was negotiated before it (structured replies,
// meta contexts) is forgotten, as an attacker could have chosen it. A
// failed TLS handshake ends the connection (after the ack it is too late
// to go on without TLS).
func (c *conn) startTLS(data []byte) error {
	opt := proto.OptStartTLS
	switch {
	case c.s.cfg.TLS == nil:
		return c.replyErr(opt, proto.RepErrPolicy, "TLS is not configured on this server")
	case c.tls:
		return c.replyErr(opt, proto.RepErrInvalid, "TLS is already negotiated")
	case len(data) != 0:
		return c.replyErr(opt, proto.RepErrInvalid, "NBD_OPT_STARTTLS takes no data")
	}
	if err := c.reply(opt, proto.RepAck, nil); err != nil {
		return err
	}
	tc := tls.Server(c.raw, c.s.cfg.TLS)
	if err := tc.HandshakeContext(c.ctx); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	c.nc, c.tls = tc, true
	c.structured, c.metaSet, c.metaExport = false, false, ""
	c.log.Debug("nbd: TLS", "version", tls.VersionName(tc.ConnectionState().Version))
	return nil
}
