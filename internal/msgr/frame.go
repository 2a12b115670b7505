package msgr

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/cuttlestore/cuttle/internal/crc32c"
)

// Wire constants. MESSENGER.md documents the layout byte by byte.
const (
	// preambleMagic opens every connection, in both directions.
	preambleMagic = "CUTLMSGR"
	// protocolVersion is the version written after the magic.
	protocolVersion = 2
	// preambleLen is magic + version u16 + reserved u16.
	preambleLen = len(preambleMagic) + 4
	// headerLen is the fixed frame header.
	headerLen = 36
	// sigLen is the AES-GMAC tag that follows the payload of a signed
	// frame.
	sigLen = 16
)

// Frame kinds.
const (
	kindHello     = 1 // banner: name, nonce, expected peer
	kindAuth      = 2 // one auth handshake payload
	kindSession   = 3 // connector: session id, connect seq, in seq
	kindSessionOK = 4 // acceptor: in seq, reset
	kindMsg       = 5 // an application message
	kindAck       = 6 // explicit ack (ack field only)
	kindError     = 7 // refusal reason, sent before closing
	maxKind       = kindError
)

// Frame flags.
const (
	flagSigned   = 1 << 0 // a signature follows the payload
	flagAuthDone = 1 << 1 // the server's last auth payload
	knownFlags   = flagSigned | flagAuthDone
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// header is a decoded frame header.
type header struct {
	kind    uint8
	flags   uint8
	typ     uint16
	version uint16
	seq     uint64
	ack     uint64
	length  uint32
}

// frame is a decoded frame; payload is owned by the caller.
type frame struct {
	header
	payload []byte
	pieces  []uint32 // Message.PieceCRCs
}

// putHeader writes h into b[:headerLen]: payloadCRC is the crc32c of the
// payload, and the header's own crc32c covers it, so one check of each
// covers the frame. The payload crc is separate so that Send computes it
// on the caller's goroutine, off the writer's path.
func putHeader(b []byte, h *header, payloadCRC uint32) {
	b[0] = h.kind
	b[1] = h.flags
	binary.LittleEndian.PutUint16(b[2:], h.typ)
	binary.LittleEndian.PutUint16(b[4:], h.version)
	binary.LittleEndian.PutUint16(b[6:], 0)
	binary.LittleEndian.PutUint64(b[8:], h.seq)
	binary.LittleEndian.PutUint64(b[16:], h.ack)
	binary.LittleEndian.PutUint32(b[24:], h.length)
	binary.LittleEndian.PutUint32(b[28:], payloadCRC)
	binary.LittleEndian.PutUint32(b[32:], crc32.Checksum(b[:32], crcTable))
}

// parseHeader decodes and checks the fixed part of a header; the crc is
// checked once the payload is read.
func parseHeader(b []byte, max uint32) (header, error) {
	if got, want := crc32.Checksum(b[:32], crcTable), binary.LittleEndian.Uint32(b[32:]); got != want {
		return header{}, fmt.Errorf("%w: header crc32c %#08x, header says %#08x", ErrCorrupt, got, want)
	}
	h := header{
		kind:    b[0],
		flags:   b[1],
		typ:     binary.LittleEndian.Uint16(b[2:]),
		version: binary.LittleEndian.Uint16(b[4:]),
		seq:     binary.LittleEndian.Uint64(b[8:]),
		ack:     binary.LittleEndian.Uint64(b[16:]),
		length:  binary.LittleEndian.Uint32(b[24:]),
	}
	switch {
	case h.kind == 0 || h.kind > maxKind:
		return h, fmt.Errorf("%w: unknown frame kind %d", ErrProtocol, h.kind)
	case h.flags&^knownFlags != 0:
		return h, fmt.Errorf("%w: unknown frame flags %#x", ErrProtocol, h.flags)
	case binary.LittleEndian.Uint16(b[6:]) != 0:
		return h, fmt.Errorf("%w: reserved header bytes set", ErrProtocol)
	case h.length > max:
		return h, fmt.Errorf("%w: %d-byte payload, limit %d", ErrFrameTooLarge, h.length, max)
	}
	return h, nil
}

// signer signs the frames of one direction of one connection with
// AES-128-GMAC, which runs at several GB/s where HMAC-SHA256 managed about
// one: every payload is signed, so its cost is paid per byte moved. The
// key is derived from the connection's session key; the nonce is the
// direction and the frame's index among the signed frames of that
// direction, so no two frames signed under one key share a nonce (a frame
// retransmitted after a reconnect goes out under the new connection's
// key). The tag authenticates the header (encrypted as the GCM plaintext,
// which is discarded) and the payload (the additional data).
type signer struct {
	gcm   cipher.AEAD
	dir   byte
	count uint64
	buf   []byte // scratch for the sealed header and tag
}

// Directions, in the nonce: frames the dialer sends and frames the
// acceptor sends.
const (
	dirFromDialer   = 1
	dirFromAcceptor = 2
)

// signKeyInfo separates the frame-signing key from other uses of the
// session key.
const signKeyInfo = "cuttle msgr frame gmac v1"

func newSigner(key []byte, dir byte) *signer {
	if key == nil {
		return nil
	}
	k := sha256.Sum256(append([]byte(signKeyInfo), key...))
	block, err := aes.NewCipher(k[:16])
	if err != nil {
		panic(err) // a 16-byte key is always valid
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		panic(err) // the standard nonce and tag sizes are always valid
	}
	return &signer{gcm: gcm, dir: dir}
}

// sign appends the signature of hdr and payload, the next frame of its
// direction, to dst.
func (s *signer) sign(dst, hdr, payload []byte) []byte {
	var nonce [12]byte
	nonce[0] = s.dir
	binary.LittleEndian.PutUint64(nonce[4:], s.count)
	s.count++
	s.buf = s.gcm.Seal(s.buf[:0], nonce[:], hdr, payload)
	return append(dst, s.buf[len(s.buf)-sigLen:]...)
}

// frameReader decodes frames from a stream. It is not safe for concurrent
// use.
type frameReader struct {
	r   *bufio.Reader
	max uint32  // payload limit
	sig *signer // nil until the session is signed
	hdr [headerLen]byte
	tmp [sigLen]byte
	own []byte // scratch for recomputed signatures
	// alloc returns payload buffers; nil means make.
	alloc func(n int) []byte
}

// read decodes the next frame. At a clean end of stream between frames it
// returns io.EOF; every other error means the stream is unusable.
func (fr *frameReader) read() (frame, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return frame{}, streamErr(err, "header")
	}
	h, err := parseHeader(fr.hdr[:], fr.max)
	if err != nil {
		return frame{}, err
	}
	f := frame{header: h}
	if h.length > 0 {
		if fr.alloc != nil {
			f.payload = fr.alloc(int(h.length))
		} else {
			f.payload = make([]byte, h.length)
		}
		crc, pieces, err := readChecked(fr.r, f.payload)
		f.pieces = pieces
		if err != nil {
			return frame{}, err
		}
		if want := binary.LittleEndian.Uint32(fr.hdr[28:]); crc != want {
			return frame{}, fmt.Errorf("%w: payload crc32c %#08x, header says %#08x (kind %d, seq %d)",
				ErrCorrupt, crc, want, h.kind, h.seq)
		}
	} else if binary.LittleEndian.Uint32(fr.hdr[28:]) != 0 {
		return frame{}, fmt.Errorf("%w: empty payload with a nonzero crc", ErrCorrupt)
	}
	return f, fr.verify(&f)
}

// readChunk is how much payload is read before its crc is updated: small
// enough to stay in cache, large enough for few syscalls. Checking as the
// bytes arrive keeps the socket draining while the crc is computed.
const readChunk = 256 << 10

// readChecked fills p from r and returns its crc32c, and for a payload
// of at least minPieced bytes the crc32c of each whole crc32c.PieceLen
// piece (Message.PieceCRCs), from which the payload's is folded.
func readChecked(r io.Reader, p []byte) (uint32, []uint32, error) {
	var crc uint32
	var pieces []uint32
	if len(p) >= minPieced {
		pieces = make([]uint32, 0, len(p)/crc32c.PieceLen)
	}
	for off := 0; off < len(p); {
		end := min(off+readChunk, len(p))
		if _, err := io.ReadFull(r, p[off:end]); err != nil {
			return 0, nil, streamErr(err, "payload")
		}
		if pieces == nil {
			crc = crc32.Update(crc, crcTable, p[off:end])
			off = end
			continue
		}
		for ; off+crc32c.PieceLen <= end; off += crc32c.PieceLen {
			c := crc32.Checksum(p[off:off+crc32c.PieceLen], crcTable)
			pieces = append(pieces, c)
			crc = crc32c.CombinePiece(crc, c)
		}
		crc = crc32.Update(crc, crcTable, p[off:end]) // a last partial piece
		off = end
	}
	return crc, pieces, nil
}

// minPieced is the payload size from which readChecked keeps piece
// checksums: large object data, which the OSD stores with them.
const minPieced = 64 << 10

// verify reads and checks the signature of f when the session is signed.
func (fr *frameReader) verify(f *frame) error {
	signed := f.flags&flagSigned != 0
	switch {
	case fr.sig == nil && signed:
		return fmt.Errorf("%w: signed frame on an unsigned session", ErrBadSignature)
	case fr.sig == nil:
		return nil
	case !signed:
		return fmt.Errorf("%w: unsigned frame (kind %d, seq %d) on a signed session",
			ErrBadSignature, f.kind, f.seq)
	}
	if _, err := io.ReadFull(fr.r, fr.tmp[:]); err != nil {
		return streamErr(err, "signature")
	}
	fr.own = fr.sig.sign(fr.own[:0], fr.hdr[:], f.payload)
	if subtle.ConstantTimeCompare(fr.own, fr.tmp[:]) != 1 {
		return fmt.Errorf("%w: kind %d, seq %d", ErrBadSignature, f.kind, f.seq)
	}
	return nil
}

// streamErr classifies a read error: EOF before a frame is a clean end,
// EOF inside one is truncation.
func streamErr(err error, what string) error {
	switch {
	case errors.Is(err, io.EOF) && what == "header":
		return io.EOF
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: stream ended in the %s", ErrTruncated, what)
	}
	return fmt.Errorf("msgr: read %s: %w", what, err)
}

// appendFrame appends a whole frame (header, payload, signature) to dst.
// The writer loop uses it for small frames; large payloads go out by
// reference (see batch).
func appendFrame(dst []byte, h *header, payload []byte, sig *signer) []byte {
	return appendFrameCRC(dst, h, crc32.Checksum(payload, crcTable), sig, payload)
}

// appendFrameCRC is appendFrame for a payload on the wire made of payload
// and then tail (Message.Tail), its crc32c computed already.
func appendFrameCRC(dst []byte, h *header, crc uint32, sig *signer, payload []byte, tail ...[]byte) []byte {
	h.length = uint32(len(payload))
	for _, b := range tail {
		h.length += uint32(len(b))
	}
	if sig != nil {
		h.flags |= flagSigned
	}
	n := len(dst)
	dst = append(dst, make([]byte, headerLen)...)
	putHeader(dst[n:], h, crc)
	dst = append(dst, payload...)
	for _, b := range tail {
		dst = append(dst, b...)
	}
	if sig != nil {
		dst = sig.sign(dst, dst[n:n+headerLen], dst[n+headerLen:])
	}
	return dst
}

// preamble returns the bytes that open a connection.
func preamble() []byte {
	b := make([]byte, preambleLen)
	copy(b, preambleMagic)
	binary.LittleEndian.PutUint16(b[len(preambleMagic):], protocolVersion)
	return b
}

// readPreamble reads and checks the peer's preamble.
func readPreamble(r io.Reader) error {
	var b [preambleLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return streamErr(err, "preamble")
	}
	return checkPreamble(b[:])
}

func checkPreamble(b []byte) error {
	if string(b[:len(preambleMagic)]) != preambleMagic {
		return fmt.Errorf("%w: bad magic %q", ErrProtocol, b[:len(preambleMagic)])
	}
	v := binary.LittleEndian.Uint16(b[len(preambleMagic):])
	if v != protocolVersion || binary.LittleEndian.Uint16(b[len(preambleMagic)+2:]) != 0 {
		return fmt.Errorf("%w: peer speaks protocol %d, this side %d", ErrProtocol, v, protocolVersion)
	}
	return nil
}
