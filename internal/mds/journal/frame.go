package journal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// frameMagic starts every frame ("CJE1" little-endian); zeros (a hole)
// are never a frame.
const frameMagic = 0x31454a43

// frameHeaderLen is the bytes before a frame's payload: magic u32,
// generation u64, length u32, crc u32.
const frameHeaderLen = 20

// MaxEntry is the largest payload of an entry.
const MaxEntry = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frameCRC is the CRC32C of a frame at stream position pos: over pos,
// the generation, the length and the payload.
func frameCRC(pos, gen uint64, payload []byte) uint32 {
	var head [20]byte
	binary.LittleEndian.PutUint64(head[0:], pos)
	binary.LittleEndian.PutUint64(head[8:], gen)
	binary.LittleEndian.PutUint32(head[16:], uint32(len(payload)))
	return crc32.Update(crc32.Checksum(head[:], castagnoli), castagnoli, payload)
}

// AppendFrame appends to b the frame of payload written by generation gen
// at stream position pos.
func AppendFrame(b []byte, pos, gen uint64, payload []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, frameMagic)
	b = binary.LittleEndian.AppendUint64(b, gen)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, frameCRC(pos, gen, payload))
	return append(b, payload...)
}

// FrameLen is the bytes of the frame of a payload of n bytes.
func FrameLen(n int) uint64 { return frameHeaderLen + uint64(n) }

// frameHead is a decoded frame header.
type frameHead struct {
	gen    uint64
	length uint32
	crc    uint32
}

// decodeFrameHead decodes the first frameHeaderLen bytes of b; b must hold
// them. It fails on a bad magic (zeros: nothing written) or a length
// above MaxEntry.
func decodeFrameHead(b []byte) (frameHead, error) {
	if m := binary.LittleEndian.Uint32(b); m != frameMagic {
		if m == 0 {
			return frameHead{}, errNoFrame
		}
		return frameHead{}, fmt.Errorf("bad magic %#x", m)
	}
	h := frameHead{gen: binary.LittleEndian.Uint64(b[4:]), length: binary.LittleEndian.Uint32(b[12:]), crc: binary.LittleEndian.Uint32(b[16:])}
	if h.length > MaxEntry {
		return frameHead{}, fmt.Errorf("length %d above the %d limit", h.length, MaxEntry)
	}
	return h, nil
}

// errNoFrame: the bytes where a frame would start are zeros.
var errNoFrame = fmt.Errorf("no frame (zeros)")

// DecodeFrame decodes the frame at the start of b, which was read at
// stream position pos: its generation, its payload (a slice of b) and its
// length in b. It fails if b does not hold a whole valid frame there.
func DecodeFrame(b []byte, pos uint64) (gen uint64, payload []byte, n int, err error) {
	if len(b) < frameHeaderLen {
		return 0, nil, 0, fmt.Errorf("%d bytes, shorter than a frame header", len(b))
	}
	h, err := decodeFrameHead(b)
	if err != nil {
		return 0, nil, 0, err
	}
	end := frameHeaderLen + int(h.length)
	if len(b) < end {
		return 0, nil, 0, fmt.Errorf("length %d runs past the %d bytes read", h.length, len(b)-frameHeaderLen)
	}
	payload = b[frameHeaderLen:end]
	if c := frameCRC(pos, h.gen, payload); c != h.crc {
		return 0, nil, 0, fmt.Errorf("crc32c %#08x, the frame says %#08x", c, h.crc)
	}
	return h.gen, payload, end, nil
}
