// Package encoding is Cuttle's versioned binary encoding, used by every
// on-disk and on-wire structure (maps, messages, object-store records).
//
// It owns the byte format only: fixed-width integers, varints,
// length-prefixed byte strings, and the envelope that makes a structure
// versioned and skippable. It knows nothing about the structures encoded with
// it; each package writes its own Encode/Decode methods on top of an [Encoder]
// and a [Decoder]. It imports only the standard library.
//
// # Format
//
// All fixed-width integers are little-endian. Bool is one byte, 0 or 1.
// Uvarint and Varint are the encoding/binary varints (Varint is zig-zag).
// Bytes and String are a uvarint length followed by that many bytes.
//
// A structure is wrapped in an envelope, as Ceph's ENCODE_START does:
//
//	version u8   the version the encoder wrote
//	compat  u8   the oldest decoder version that can read it (compat <= version)
//	length  u32  the number of body bytes that follow
//	body
//
// A decoder that supports versions up to S reads any envelope with
// compat <= S. Newer encoders may only append fields to the body, so an older
// decoder reads the fields it knows and skips the rest with [Decoder.End];
// a newer decoder checks the version before reading appended fields. A change
// that older decoders cannot handle raises compat.
//
// # Hostile input
//
// Decoding never panics on bad input and never allocates more than the input
// could justify: [Decoder.Bytes] and [Decoder.String] take a maximum length,
// and [Decoder.Count] rejects an element count that cannot fit in the bytes
// left in the current envelope. Reads cannot pass the end of the envelope
// being decoded. Errors are sticky: after the first one every read returns a
// zero value, so a decode method can read all its fields and check
// [Decoder.Err] once at the end. Errors match the sentinels [ErrTruncated],
// [ErrUnsupportedVersion] and [ErrCorrupt] with [errors.Is]:
//
//   - ErrTruncated: the input ended before the value did (a read past the end
//     of the buffer, or an envelope longer than the bytes left).
//   - ErrUnsupportedVersion: an envelope's compat is newer than the decoder.
//   - ErrCorrupt: the bytes are present but wrong: a read past the end of the
//     enclosing envelope, an overlong varint, a bool that is not 0 or 1, a
//     length or count out of bounds, or trailing bytes after the value.
//
// # Concurrency
//
// An Encoder or a Decoder is not safe for concurrent use; use one per
// goroutine. A Decoder never modifies its input buffer and returns copies, so
// several Decoders may read the same buffer at once.
//
// Start with the package example, then [Encoder.Begin] and [Decoder.Begin].
package encoding

import "errors"

// Errors returned by Decoder, possibly wrapped with context such as the
// offset; test for them with errors.Is.
var (
	// ErrTruncated means the input ended before the value did.
	ErrTruncated = errors.New("encoding: truncated input")
	// ErrUnsupportedVersion means an envelope needs a newer decoder.
	ErrUnsupportedVersion = errors.New("encoding: unsupported version")
	// ErrCorrupt means the input is malformed: bad lengths, counts or values.
	ErrCorrupt = errors.New("encoding: corrupt input")
)
