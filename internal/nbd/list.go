package nbd

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
)

// ListedExport is what a server says of one of its exports.
type ListedExport struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Size        uint64 `json:"size"`
	ReadOnly    bool   `json:"read_only"`
	MultiConn   bool   `json:"multi_conn"`
}

// ErrTLSRequired is a server's NBD_REP_ERR_TLS_REQD: it speaks only TLS.
var ErrTLSRequired = errors.New("nbd: the server requires TLS")

// ErrNoTLS is a refused NBD_OPT_STARTTLS: the server does not offer TLS.
var ErrNoTLS = errors.New("nbd: the server does not offer TLS")

// List asks the NBD server at addr (network "tcp" or "unix") for its
// exports (NBD_OPT_LIST, then NBD_OPT_INFO of each) and ends the
// handshake with NBD_OPT_ABORT. With tlsConf it sends NBD_OPT_STARTTLS
// first and asks the rest over TLS; a server that refuses is ErrNoTLS
// (never a fall back to plain text).
func List(ctx context.Context, network, addr string, tlsConf *tls.Config) ([]ListedExport, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("nbd: %w", err)
	}
	c := &listClient{nc: nc, tls: tlsConf}
	defer func() { c.nc.Close() }() // after STARTTLS, the TLS connection's
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	} else {
		_ = nc.SetDeadline(time.Now().Add(time.Minute))
	}
	return c.list(ctx)
}

type listClient struct {
	nc  net.Conn
	tls *tls.Config
}

func (c *listClient) read(n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(c.nc, b)
	return b, err
}

func (c *listClient) opt(opt uint32, data []byte) error {
	b := binary.BigEndian.AppendUint64(nil, proto.OptMagic)
	b = binary.BigEndian.AppendUint32(b, opt)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	_, err := c.nc.Write(append(b, data...))
	return err
}

// reply reads one option reply to opt; an error reply is an error.
func (c *listClient) reply(opt uint32) (uint32, []byte, error) {
	hb, err := c.read(proto.OptionReplyHeaderLen)
	if err != nil {
		return 0, nil, err
	}
	h, err := proto.ParseOptionReply(hb)
	if err != nil {
		return 0, nil, err
	}
	if h.Length > proto.MaxOptionLen {
		return 0, nil, fmt.Errorf("%w: option reply of %d bytes", proto.ErrProtocol, h.Length)
	}
	data, err := c.read(int(h.Length))
	if err != nil {
		return 0, nil, err
	}
	if h.Option != opt {
		return 0, nil, fmt.Errorf("%w: reply to option %d, want %d", proto.ErrProtocol, h.Option, opt)
	}
	if h.Type == proto.RepErrTLSReqd {
		return 0, nil, fmt.Errorf("%w (option %d: %s)", ErrTLSRequired, opt, data)
	}
	if h.Type&(1<<31) != 0 {
		return 0, nil, fmt.Errorf("nbd: option %d refused: error %#x: %s", opt, h.Type, data)
	}
	return h.Type, data, nil
}

// startTLS upgrades the connection: NBD_OPT_STARTTLS, its ack, then the
// TLS handshake as the client.
func (c *listClient) startTLS(ctx context.Context) error {
	if err := c.opt(proto.OptStartTLS, nil); err != nil {
		return fmt.Errorf("nbd: %w", err)
	}
	hb, err := c.read(proto.OptionReplyHeaderLen)
	if err != nil {
		return fmt.Errorf("nbd: STARTTLS: %w", err)
	}
	h, err := proto.ParseOptionReply(hb)
	if err != nil {
		return err
	}
	if h.Option != proto.OptStartTLS || h.Length > proto.MaxOptionLen {
		return fmt.Errorf("%w: reply to option %d of %d bytes, want STARTTLS's", proto.ErrProtocol, h.Option, h.Length)
	}
	msg, err := c.read(int(h.Length))
	if err != nil {
		return fmt.Errorf("nbd: STARTTLS: %w", err)
	}
	if h.Type != proto.RepAck {
		return fmt.Errorf("%w (reply %#x: %s)", ErrNoTLS, h.Type, msg)
	}
	tc := tls.Client(c.nc, c.tls)
	if err := tc.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("nbd: TLS handshake: %w", err)
	}
	c.nc = tc
	return nil
}

func (c *listClient) list(ctx context.Context) ([]ListedExport, error) {
	g, err := c.read(18)
	if err != nil {
		return nil, fmt.Errorf("nbd: greeting: %w", err)
	}
	flags, err := proto.ParseGreeting(g)
	if err != nil {
		return nil, err
	}
	cf := proto.ClientFixedNewstyle
	if flags&proto.FlagNoZeroes != 0 {
		cf |= proto.ClientNoZeroes
	}
	if _, err := c.nc.Write(binary.BigEndian.AppendUint32(nil, cf)); err != nil {
		return nil, fmt.Errorf("nbd: %w", err)
	}
	if c.tls != nil {
		if err := c.startTLS(ctx); err != nil {
			return nil, err
		}
	}
	if err := c.opt(proto.OptList, nil); err != nil {
		return nil, fmt.Errorf("nbd: %w", err)
	}
	var out []ListedExport
	for {
		typ, data, err := c.reply(proto.OptList)
		if errors.Is(err, ErrTLSRequired) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("nbd: list: %w", err)
		}
		if typ == proto.RepAck {
			break
		}
		if typ != proto.RepServer {
			continue
		}
		name, desc, err := proto.ParseServerData(data)
		if err != nil {
			return nil, err
		}
		out = append(out, ListedExport{Name: name, Description: desc})
	}
	for i := range out {
		q := binary.BigEndian.AppendUint32(nil, uint32(len(out[i].Name)))
		q = append(q, out[i].Name...)
		q = binary.BigEndian.AppendUint16(q, 1)
		q = binary.BigEndian.AppendUint16(q, proto.InfoDescription)
		if err := c.opt(proto.OptInfo, q); err != nil {
			return nil, fmt.Errorf("nbd: %w", err)
		}
		var in proto.Info
		for {
			typ, data, err := c.reply(proto.OptInfo)
			if err != nil {
				return nil, fmt.Errorf("nbd: info of %q: %w", out[i].Name, err)
			}
			if typ == proto.RepAck {
				break
			}
			if typ == proto.RepInfo {
				if err := proto.ParseInfo(data, &in); err != nil {
					return nil, err
				}
			}
		}
		out[i].Size, out[i].ReadOnly, out[i].MultiConn = in.Size, in.Flags&proto.TransReadOnly != 0, in.Flags&proto.TransCanMultiConn != 0
		if in.Description != "" {
			out[i].Description = in.Description
		}
	}
	_ = c.opt(proto.OptAbort, nil)
	return out, nil
}
