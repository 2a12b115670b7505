package proto

import "encoding/binary"

// The decoders a client needs for the server's side of the handshake
// (cuttle nbd ls speaks it).

// OptionReplyHeaderLen is the size of an option reply's header.
const OptionReplyHeaderLen = 20

// OptionReplyHeader is the fixed start of an option reply.
type OptionReplyHeader struct {
	Option, Type uint32
	Length       uint32 // of the data that follows
}

// ParseOptionReply decodes an option reply's header.
func ParseOptionReply(b []byte) (OptionReplyHeader, error) {
	if len(b) != OptionReplyHeaderLen {
		return OptionReplyHeader{}, protoErr("option reply header is %d bytes, want %d", len(b), OptionReplyHeaderLen)
	}
	if m := binary.BigEndian.Uint64(b); m != RepMagic {
		return OptionReplyHeader{}, protoErr("option reply magic %#x, want %#x", m, RepMagic)
	}
	return OptionReplyHeader{Option: binary.BigEndian.Uint32(b[8:]), Type: binary.BigEndian.Uint32(b[12:]), Length: binary.BigEndian.Uint32(b[16:])}, nil
}

// ParseGreeting decodes the server's newstyle greeting (18 bytes) and
// returns its handshake flags.
func ParseGreeting(b []byte) (uint16, error) {
	if len(b) != 18 {
		return 0, protoErr("greeting is %d bytes, want 18", len(b))
	}
	if binary.BigEndian.Uint64(b) != Magic || binary.BigEndian.Uint64(b[8:]) != OptMagic {
		return 0, protoErr("not a newstyle NBD server (greeting %x)", b)
	}
	f := binary.BigEndian.Uint16(b[16:])
	if f&FlagFixedNewstyle == 0 {
		return 0, protoErr("the server does not speak fixed newstyle (flags %#x)", f)
	}
	return f, nil
}

// ParseServerData decodes an NBD_REP_SERVER reply's data.
func ParseServerData(b []byte) (name, description string, err error) {
	r := reader{b: b}
	name = r.str("export name")
	if r.err != nil {
		return "", "", r.err
	}
	return name, string(r.b), nil
}

// Info is the content of the NBD_REP_INFO replies a client got.
type Info struct {
	Size        uint64
	Flags       uint16
	Name        string
	Description string
	// MinBlock, PreferredBlock and MaxBlock are 0 if not sent.
	MinBlock, PreferredBlock, MaxBlock uint32
}

// ParseInfo adds one NBD_REP_INFO reply's data to in; unknown types
// are ignored, as the protocol asks.
func ParseInfo(b []byte, in *Info) error {
	r := reader{b: b}
	typ := r.u16("information type")
	switch typ {
	case InfoExport:
		if v := r.take(8, "export size"); v != nil {
			in.Size = binary.BigEndian.Uint64(v)
		}
		in.Flags = r.u16("transmission flags")
	case InfoName, InfoDescription:
		if len(r.b) > MaxString {
			return protoErr("information %d of %d bytes is over %d", typ, len(r.b), MaxString)
		}
		s := string(r.b)
		r.b = nil
		if typ == InfoName {
			in.Name = s
		} else {
			in.Description = s
		}
	case InfoBlockSize:
		in.MinBlock, in.PreferredBlock, in.MaxBlock = r.u32("minimum block size"), r.u32("preferred block size"), r.u32("maximum block size")
	default:
		return r.err
	}
	return r.end("information")
}
