package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrProtocol is the class of every decoding failure.
var ErrProtocol = errors.New("nbd: protocol error")

func protoErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, a...)...)
}

// Greeting is the server's newstyle greeting: NBDMAGIC, IHAVEOPT and the
// handshake flags (18 bytes).
func Greeting(flags uint16) []byte {
	b := binary.BigEndian.AppendUint64(nil, Magic)
	b = binary.BigEndian.AppendUint64(b, OptMagic)
	return binary.BigEndian.AppendUint16(b, flags)
}

// ParseClientFlags decodes the client's 4-byte flags, which must be known
// ones and include fixed newstyle (this server speaks no other).
func ParseClientFlags(b []byte) (uint32, error) {
	if len(b) != 4 {
		return 0, protoErr("client flags are %d bytes, want 4", len(b))
	}
	f := binary.BigEndian.Uint32(b)
	if f&^(ClientFixedNewstyle|ClientNoZeroes) != 0 {
		return 0, protoErr("unknown client flags %#x", f)
	}
	if f&ClientFixedNewstyle == 0 {
		return 0, protoErr("client does not speak fixed newstyle (flags %#x)", f)
	}
	return f, nil
}

// OptionHeader is the fixed start of an option.
type OptionHeader struct {
	Option uint32
	Length uint32 // of the data that follows
}

// ParseOption decodes an option header (OptionHeaderLen bytes).
func ParseOption(b []byte) (OptionHeader, error) {
	if len(b) != OptionHeaderLen {
		return OptionHeader{}, protoErr("option header is %d bytes, want %d", len(b), OptionHeaderLen)
	}
	if m := binary.BigEndian.Uint64(b); m != OptMagic {
		return OptionHeader{}, protoErr("option magic %#x, want %#x", m, OptMagic)
	}
	return OptionHeader{Option: binary.BigEndian.Uint32(b[8:]), Length: binary.BigEndian.Uint32(b[12:])}, nil
}

// reader takes big-endian fields off a payload.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = protoErr("%s: %d bytes left, want %d", what, len(r.b), n)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u16(what string) uint16 {
	if v := r.take(2, what); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}

func (r *reader) u32(what string) uint32 {
	if v := r.take(4, what); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

// str reads a 32-bit length and that many bytes.
func (r *reader) str(what string) string {
	n := r.u32(what + " length")
	if r.err == nil && n > MaxString {
		r.err = protoErr("%s of %d bytes is over %d", what, n, MaxString)
		return ""
	}
	return string(r.take(int(n), what))
}

func (r *reader) end(what string) error {
	if r.err == nil && len(r.b) != 0 {
		r.err = protoErr("%s: %d bytes too many", what, len(r.b))
	}
	return r.err
}

// InfoRequest is the data of NBD_OPT_INFO and NBD_OPT_GO: an export name
// and the information asked for.
type InfoRequest struct {
	Name  string
	Infos []uint16
}

// ParseInfoRequest decodes the data of NBD_OPT_INFO or NBD_OPT_GO.
func ParseInfoRequest(b []byte) (InfoRequest, error) {
	r := reader{b: b}
	var q InfoRequest
	q.Name = r.str("export name")
	n := r.u16("information request count")
	for i := 0; i < int(n) && r.err == nil; i++ {
		q.Infos = append(q.Infos, r.u16("information request"))
	}
	return q, r.end("info request")
}

// MetaContextRequest is the data of NBD_OPT_LIST_META_CONTEXT and
// NBD_OPT_SET_META_CONTEXT.
type MetaContextRequest struct {
	Export  string
	Queries []string
}

// ParseMetaContextRequest decodes the data of NBD_OPT_LIST_META_CONTEXT or
// NBD_OPT_SET_META_CONTEXT.
func ParseMetaContextRequest(b []byte) (MetaContextRequest, error) {
	r := reader{b: b}
	var q MetaContextRequest
	q.Export = r.str("export name")
	n := r.u32("query count")
	for i := 0; i < int(n) && r.err == nil; i++ {
		q.Queries = append(q.Queries, r.str("query"))
	}
	return q, r.end("meta context request")
}

// OptionReply encodes an option reply of type typ to option opt.
func OptionReply(opt, typ uint32, data []byte) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 20+len(data)), RepMagic)
	b = binary.BigEndian.AppendUint32(b, opt)
	b = binary.BigEndian.AppendUint32(b, typ)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// ServerData is the data of an NBD_REP_SERVER reply: a name and an
// optional description.
func ServerData(name, description string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(name)))
	b = append(b, name...)
	return append(b, description...)
}

// InfoExportData is the data of NBD_REP_INFO with NBD_INFO_EXPORT.
func InfoExportData(size uint64, flags uint16) []byte {
	b := binary.BigEndian.AppendUint16(nil, InfoExport)
	b = binary.BigEndian.AppendUint64(b, size)
	return binary.BigEndian.AppendUint16(b, flags)
}

// InfoStringData is the data of NBD_REP_INFO with NBD_INFO_NAME or
// NBD_INFO_DESCRIPTION.
func InfoStringData(info uint16, s string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, info), s...)
}

// InfoBlockSizeData is the data of NBD_REP_INFO with NBD_INFO_BLOCK_SIZE.
func InfoBlockSizeData(minimum, preferred, maximum uint32) []byte {
	b := binary.BigEndian.AppendUint16(nil, InfoBlockSize)
	b = binary.BigEndian.AppendUint32(b, minimum)
	b = binary.BigEndian.AppendUint32(b, preferred)
	return binary.BigEndian.AppendUint32(b, maximum)
}

// MetaContextData is the data of NBD_REP_META_CONTEXT.
func MetaContextData(id uint32, name string) []byte {
	return append(binary.BigEndian.AppendUint32(nil, id), name...)
}

// ExportNameReply is the server's answer to NBD_OPT_EXPORT_NAME: size,
// transmission flags and, unless the client set NO_ZEROES, 124 zeros.
func ExportNameReply(size uint64, flags uint16, noZeroes bool) []byte {
	b := binary.BigEndian.AppendUint64(nil, size)
	b = binary.BigEndian.AppendUint16(b, flags)
	if !noZeroes {
		b = append(b, make([]byte, 124)...)
	}
	return b
}
