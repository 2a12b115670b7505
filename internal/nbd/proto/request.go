package proto

import "encoding/binary"

// Request is a transmission request's header. A WRITE's Length bytes of
// data follow it on the wire.
type Request struct {
	Flags  uint16
	Type   uint16
	Cookie uint64 // the client's handle, echoed in the reply
	Offset uint64
	Length uint32
}

// ParseRequest decodes a request header (RequestLen bytes). Only the
// magic is checked here: the server answers bad commands, flags and
// ranges with an error reply, and ends the connection only when it has
// lost the framing (a bad magic).
func ParseRequest(b []byte) (Request, error) {
	if len(b) != RequestLen {
		return Request{}, protoErr("request header is %d bytes, want %d", len(b), RequestLen)
	}
	if m := binary.BigEndian.Uint32(b); m != RequestMagic {
		return Request{}, protoErr("request magic %#x, want %#x", m, RequestMagic)
	}
	return Request{
		Flags:  binary.BigEndian.Uint16(b[4:]),
		Type:   binary.BigEndian.Uint16(b[6:]),
		Cookie: binary.BigEndian.Uint64(b[8:]),
		Offset: binary.BigEndian.Uint64(b[16:]),
		Length: binary.BigEndian.Uint32(b[24:]),
	}, nil
}

// AppendRequest encodes a request header (for clients and tests).
func AppendRequest(b []byte, q Request) []byte {
	b = binary.BigEndian.AppendUint32(b, RequestMagic)
	b = binary.BigEndian.AppendUint16(b, q.Flags)
	b = binary.BigEndian.AppendUint16(b, q.Type)
	b = binary.BigEndian.AppendUint64(b, q.Cookie)
	b = binary.BigEndian.AppendUint64(b, q.Offset)
	return binary.BigEndian.AppendUint32(b, q.Length)
}

// AppendSimpleReply encodes a simple reply's header; a successful READ's
// data follows it.
func AppendSimpleReply(b []byte, cookie uint64, errno Errno) []byte {
	b = binary.BigEndian.AppendUint32(b, SimpleReplyMagic)
	b = binary.BigEndian.AppendUint32(b, uint32(errno))
	return binary.BigEndian.AppendUint64(b, cookie)
}

// AppendChunk encodes a structured reply chunk's header for a payload of
// length bytes.
func AppendChunk(b []byte, cookie uint64, flags, typ uint16, length uint32) []byte {
	b = binary.BigEndian.AppendUint32(b, StructuredReplyMagic)
	b = binary.BigEndian.AppendUint16(b, flags)
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint64(b, cookie)
	return binary.BigEndian.AppendUint32(b, length)
}

// ChunkHeaderLen is the size of a structured reply chunk's header.
const ChunkHeaderLen = 20

// AppendDataChunk encodes an OFFSET_DATA chunk's header and offset; the
// n bytes of data follow it.
func AppendDataChunk(b []byte, cookie uint64, flags uint16, off uint64, n int) []byte {
	b = AppendChunk(b, cookie, flags, ReplyOffsetData, uint32(8+n))
	return binary.BigEndian.AppendUint64(b, off)
}

// AppendHoleChunk encodes an OFFSET_HOLE chunk: n zero bytes at off.
func AppendHoleChunk(b []byte, cookie uint64, flags uint16, off uint64, n uint32) []byte {
	b = AppendChunk(b, cookie, flags, ReplyOffsetHole, 12)
	b = binary.BigEndian.AppendUint64(b, off)
	return binary.BigEndian.AppendUint32(b, n)
}

// AppendErrorChunk encodes an ERROR chunk with a message (cut to fit
// its 16-bit length).
func AppendErrorChunk(b []byte, cookie uint64, flags uint16, errno Errno, msg string) []byte {
	if len(msg) > MaxString {
		msg = msg[:MaxString]
	}
	b = AppendChunk(b, cookie, flags, ReplyError, uint32(6+len(msg)))
	b = binary.BigEndian.AppendUint32(b, uint32(errno))
	b = binary.BigEndian.AppendUint16(b, uint16(len(msg)))
	return append(b, msg...)
}

// Extent is one descriptor of a block status reply.
type Extent struct {
	Length uint32
	Flags  uint32
}

// AppendBlockStatusChunk encodes a BLOCK_STATUS chunk for meta context id.
func AppendBlockStatusChunk(b []byte, cookie uint64, flags uint16, id uint32, ext []Extent) []byte {
	b = AppendChunk(b, cookie, flags, ReplyBlockStatus, uint32(4+8*len(ext)))
	b = binary.BigEndian.AppendUint32(b, id)
	for _, e := range ext {
		b = binary.BigEndian.AppendUint32(b, e.Length)
		b = binary.BigEndian.AppendUint32(b, e.Flags)
	}
	return b
}
