package sigv4

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// The S3 API reference's example of signed trailing headers
// ("Signature calculations for trailing headers (chunked uploads)"):
// 66,560 bytes of 'a' in 64 KiB chunks with an x-amz-checksum-crc32c
// trailer, signed on 24 May 2013 from the seed signature it gives; the
// chunk and trailer signatures it lists.
func TestSignedTrailerExample(t *testing.T) {
	const (
		seed     = "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e"
		trailer  = "x-amz-checksum-crc32c:sOO8/Q==\r\n"
		trailSig = "d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435"
		date     = "20130524T000000Z"
		scope    = "20130524/us-east-1/s3/aws4_request"
	)
	data := bytes.Repeat([]byte{'a'}, 66560)
	key := signingKey(testSecret, "20130524", "us-east-1", "s3")
	chunks := chunkedBody(key, date, scope, seed, data, 65536)
	for _, sig := range []string{
		"1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7", // the 1,024-byte chunk
		"2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992", // the final, empty chunk
	} {
		if !bytes.Contains(chunks, []byte(sig)) {
			t.Fatalf("chunk signature %s not computed", sig)
		}
	}
	chunks = chunks[:len(chunks)-2] // the trailers follow the empty chunk's line
	read := func(trailers string) (*ChunkReader, []byte, error) {
		c := NewChunkReader(bytes.NewReader(append(bytes.Clone(chunks), trailers...)), int64(len(data)))
		c.signed = &chunkSigner{key: key, amzDate: date, scope: scope, prev: seed}
		c.trailerSigned = true
		got, err := io.ReadAll(c)
		return c, got, err
	}
	c, got, err := read(trailer + "x-amz-trailer-signature:" + trailSig + "\r\n\r\n")
	if err != nil || !bytes.Equal(got, data) || c.Trailers["x-amz-checksum-crc32c"] != "sOO8/Q==" || len(c.Trailers) != 1 {
		t.Fatalf("decoded %d bytes, %v, trailers %v", len(got), err, c.Trailers)
	}
	for name, bad := range map[string]string{
		"changed value":     strings.Replace(trailer, "sOO8", "sOO9", 1) + "x-amz-trailer-signature:" + trailSig + "\r\n\r\n",
		"added trailer":     trailer + "x-amz-meta-a:b\r\nx-amz-trailer-signature:" + trailSig + "\r\n\r\n",
		"no signature":      trailer + "\r\n",
		"another signature": trailer + "x-amz-trailer-signature:" + strings.Repeat("0", 64) + "\r\n\r\n",
	} {
		if _, _, err := read(bad); !errors.Is(err, ErrChunk) {
			t.Errorf("%s: %v, want ErrChunk", name, err)
		}
	}
}

// FuzzSignedTrailers: whatever follows a signed body's last chunk, the
// decoder never panics, and trailers it accepts came with a signature
// that it checked and took out.
func FuzzSignedTrailers(f *testing.F) {
	f.Add("x-amz-checksum-crc32:AAAAAA==\r\nx-amz-trailer-signature:00\r\n\r\n")
	f.Add("\r\n")
	f.Add("a:b\r\nc\r\n")
	key := signingKey(testSecret, "20130524", "us-east-1", "s3")
	const date, scope, seed = "20130524T000000Z", "20130524/us-east-1/s3/aws4_request", "00"
	chunks := chunkedBody(key, date, scope, seed, []byte("hello"), 4)
	chunks = chunks[:len(chunks)-2]
	f.Fuzz(func(t *testing.T, trailers string) {
		c := NewChunkReader(bytes.NewReader(append(bytes.Clone(chunks), trailers...)), 5)
		c.signed = &chunkSigner{key: key, amzDate: date, scope: scope, prev: seed}
		c.trailerSigned = true
		if _, err := io.ReadAll(c); err == nil {
			if _, ok := c.Trailers["x-amz-trailer-signature"]; ok {
				t.Fatalf("signature left among the trailers: %v", c.Trailers)
			}
		}
	})
}
