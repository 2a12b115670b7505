package sigv4

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"slices"
	"strconv"
	"strings"
)

// maxChunkLine bounds a chunk header or trailer line.
const maxChunkLine = 4096

// emptySHA256 is the hex SHA-256 of nothing.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// chunkSigner checks each chunk's signature, chained from the seed (the
// request's own signature).
type chunkSigner struct {
	key     []byte
	amzDate string
	scope   string
	prev    string
}

func (s *chunkSigner) next(chunkHash []byte) string {
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + s.amzDate + "\n" + s.scope + "\n" + s.prev + "\n" + emptySHA256 + "\n" + hex.EncodeToString(chunkHash)
	return hex.EncodeToString(hmacSHA256(s.key, []byte(sts)))
}

// ChunkReader decodes an aws-chunked body:
//
//	hex-size[;chunk-signature=sig]\r\n data \r\n ... 0[;chunk-signature=sig]\r\n [trailers\r\n] \r\n
//
// checking every chunk's signature when the request was signed so, and
// that the data add up to the decoded length. Errors wrap ErrChunk.
type ChunkReader struct {
	br      *bufio.Reader
	signed  *chunkSigner
	decoded int64
	total   int64
	left    int64 // bytes left in the current chunk
	sig     string
	h       hash.Hash
	done    bool
	err     error
	// trailerSigned: the trailers end with x-amz-trailer-signature,
	// chained from the last chunk's (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER).
	trailerSigned bool
	// Trailers holds the trailing headers (x-amz-checksum-*), once read
	// (and, when they are signed, checked: the signature is not among
	// them).
	Trailers map[string]string
}

// NewChunkReader decodes r, which must hold decoded bytes of data, with no
// chunk signatures checked (a STREAMING-UNSIGNED-PAYLOAD-TRAILER body).
func NewChunkReader(r io.Reader, decoded int64) *ChunkReader {
	return &ChunkReader{br: bufio.NewReaderSize(r, 64<<10), decoded: decoded, left: -1}
}

func (c *ChunkReader) fail(format string, args ...any) error {
	c.err = fmt.Errorf("%w: "+format, append([]any{ErrChunk}, args...)...)
	return c.err
}

func (c *ChunkReader) line() (string, error) {
	var b []byte
	for {
		part, err := c.br.ReadSlice('\n')
		b = append(b, part...)
		if len(b) > maxChunkLine {
			return "", c.fail("line longer than %d bytes", maxChunkLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF {
				return "", c.fail("body ends inside a chunk header")
			}
			return "", err
		}
		break
	}
	s := string(b)
	if !strings.HasSuffix(s, "\r\n") {
		return "", c.fail("line not ended by CRLF")
	}
	return s[:len(s)-2], nil
}

// header reads a chunk header and starts the chunk.
func (c *ChunkReader) header() error {
	l, err := c.line()
	if err != nil {
		return err
	}
	size, ext, _ := strings.Cut(l, ";")
	n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return c.fail("chunk size %q", size)
	}
	c.sig = ""
	if ext != "" {
		k, v, ok := strings.Cut(ext, "=")
		if !ok || strings.TrimSpace(k) != "chunk-signature" {
			return c.fail("chunk extension %q", ext)
		}
		c.sig = strings.TrimSpace(v)
	}
	if c.signed != nil && c.sig == "" {
		return c.fail("chunk without a signature")
	}
	if c.total+n > c.decoded {
		return c.fail("chunks exceed the decoded length %d", c.decoded)
	}
	c.left = n
	c.h = sha256.New()
	return nil
}

// endChunk checks the finished chunk's signature and its CRLF.
func (c *ChunkReader) endChunk(last bool) error {
	if c.signed != nil {
		want := c.signed.next(c.h.Sum(nil))
		if !hmac.Equal([]byte(want), []byte(c.sig)) {
			return c.fail("chunk signature does not match")
		}
		c.signed.prev = want
	}
	if last {
		return c.trailers()
	}
	l, err := c.line()
	if err != nil {
		return err
	}
	if l != "" {
		return c.fail("chunk data longer than its size")
	}
	c.left = -1
	return nil
}

// trailers reads the trailing headers up to the empty line (or EOF).
func (c *ChunkReader) trailers() error {
	c.Trailers = map[string]string{}
	for i := 0; ; i++ {
		if i > 64 {
			return c.fail("too many trailers")
		}
		l, err := c.line()
		if err != nil {
			if i > 0 {
				return err
			}
			// Some clients end the last chunk without the final CRLF.
			c.err = nil
			break
		}
		if l == "" {
			break
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return c.fail("trailer %q", l)
		}
		c.Trailers[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if c.total != c.decoded {
		return c.fail("%d bytes of data, decoded length %d", c.total, c.decoded)
	}
	if c.signed != nil && c.trailerSigned {
		if err := c.checkTrailerSignature(); err != nil {
			return err
		}
	}
	c.done = true
	return nil
}

// checkTrailerSignature checks x-amz-trailer-signature (the S3 API
// reference's "Signature calculations for trailing headers"): the HMAC
// of "AWS4-HMAC-SHA256-TRAILER", the date, the scope, the last chunk's
// signature and the hex SHA-256 of the trailers as "name:value\n" lines.
func (c *ChunkReader) checkTrailerSignature() error {
	sig, ok := c.Trailers["x-amz-trailer-signature"]
	if !ok {
		return c.fail("signed trailers without x-amz-trailer-signature")
	}
	delete(c.Trailers, "x-amz-trailer-signature")
	names := make([]string, 0, len(c.Trailers))
	for k := range c.Trailers {
		names = append(names, k)
	}
	slices.Sort(names)
	var canon strings.Builder
	for _, k := range names {
		canon.WriteString(k + ":" + c.Trailers[k] + "\n")
	}
	h := sha256.Sum256([]byte(canon.String()))
	s := c.signed
	sts := "AWS4-HMAC-SHA256-TRAILER\n" + s.amzDate + "\n" + s.scope + "\n" + s.prev + "\n" + hex.EncodeToString(h[:])
	if want := hex.EncodeToString(hmacSHA256(s.key, []byte(sts))); !hmac.Equal([]byte(want), []byte(sig)) {
		return c.fail("trailer signature does not match")
	}
	return nil
}

// Read returns the decoded data.
func (c *ChunkReader) Read(p []byte) (int, error) {
	for {
		if c.err != nil {
			return 0, c.err
		}
		if c.done {
			return 0, io.EOF
		}
		if c.left < 0 {
			if err := c.header(); err != nil {
				return 0, err
			}
			if c.left == 0 {
				if err := c.endChunk(true); err != nil {
					return 0, err
				}
				continue
			}
		}
		if c.left == 0 {
			if err := c.endChunk(false); err != nil {
				return 0, err
			}
			continue
		}
		if int64(len(p)) > c.left {
			p = p[:c.left]
		}
		n, err := c.br.Read(p)
		c.h.Write(p[:n])
		c.left -= int64(n)
		c.total += int64(n)
		if err == io.EOF {
			if c.left > 0 {
				return n, c.fail("body ends inside a chunk")
			}
			err = nil
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
}
