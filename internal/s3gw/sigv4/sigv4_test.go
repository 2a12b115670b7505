package sigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

const (
	testAK     = "AKIAIOSFODNN7EXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

var creds = aws.Credentials{AccessKeyID: testAK, SecretAccessKey: testSecret}

func lookup(_ context.Context, ak string) (string, error) {
	if ak == testAK {
		return testSecret, nil
	}
	return "", fmt.Errorf("%s: %w", ak, ErrUnknownKey)
}

func hashHex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// signed builds a server-side request signed by aws-sdk-go-v2 at t.
func signed(t *testing.T, method, target string, body []byte, payload string, hdr map[string]string, at time.Time, c aws.Credentials) *http.Request {
	t.Helper()
	cl, _ := http.NewRequest(method, "http://gw.example:7480"+target, bytes.NewReader(body))
	for k, v := range hdr {
		cl.Header.Set(k, v)
	}
	cl.Header.Set("X-Amz-Content-Sha256", payload)
	s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := s.SignHTTP(context.Background(), c, cl, payload, "s3", "us-east-1", at); err != nil {
		t.Fatal(err)
	}
	// What the server sees: the same bytes, parsed by net/http.
	r := httptest.NewRequest(method, cl.URL.RequestURI(), bytes.NewReader(body))
	r.Host = cl.URL.Host
	for k, v := range cl.Header {
		r.Header[k] = v
	}
	return r
}

func TestHeaderSignatures(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	v := New(lookup, func() time.Time { return now })
	body := []byte("hello world")
	cases := []struct {
		name, method, target string
		body                 []byte
		payload              string
		hdr                  map[string]string
		at                   time.Time
		c                    aws.Credentials
		want                 error
	}{
		{"get with query", "GET", "/bucket?list-type=2&prefix=a%2Fb&max-keys=10", nil, emptySHA256, nil, now, creds, nil},
		{"odd key", "PUT", "/bucket/a%20b/c%2Bd~%E2%82%AC", body, hashHex(body), map[string]string{"Content-Type": "text/plain", "X-Amz-Meta-Colour": "  deep   blue "}, now, creds, nil},
		{"unsigned payload", "PUT", "/bucket/k", body, UnsignedPayload, nil, now, creds, nil},
		{"subresource", "POST", "/bucket/k?uploads", nil, emptySHA256, nil, now, creds, nil},
		{"skewed", "GET", "/", nil, emptySHA256, nil, now.Add(-16 * time.Minute), creds, ErrSkewed},
		{"future skew", "GET", "/", nil, emptySHA256, nil, now.Add(16 * time.Minute), creds, ErrSkewed},
		{"within skew", "GET", "/", nil, emptySHA256, nil, now.Add(-14 * time.Minute), creds, nil},
		{"wrong secret", "GET", "/", nil, emptySHA256, nil, now, aws.Credentials{AccessKeyID: testAK, SecretAccessKey: "nope"}, ErrMismatch},
		{"unknown key", "GET", "/", nil, emptySHA256, nil, now, aws.Credentials{AccessKeyID: "AKNOBODY", SecretAccessKey: "x"}, ErrUnknownKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := signed(t, tc.method, tc.target, tc.body, tc.payload, tc.hdr, tc.at, tc.c)
			res, err := v.Verify(context.Background(), r)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Verify: %v, want %v", err, tc.want)
			}
			if err == nil && res.AccessKey != testAK {
				t.Fatalf("access key %q", res.AccessKey)
			}
		})
	}
}

// A signed request whose header is changed after signing no longer verifies.
func TestTamperedRequest(t *testing.T) {
	now := time.Now()
	v := New(lookup, nil)
	for name, tamper := range map[string]func(r *http.Request){
		"method":   func(r *http.Request) { r.Method = "DELETE" },
		"path":     func(r *http.Request) { r.RequestURI = "/bucket/other"; r.URL.Path = "/bucket/other" },
		"query":    func(r *http.Request) { r.URL.RawQuery = "prefix=z" },
		"host":     func(r *http.Request) { r.Host = "evil.example" },
		"metadata": func(r *http.Request) { r.Header.Set("X-Amz-Meta-A", "2") },
	} {
		r := signed(t, "PUT", "/bucket/k?prefix=a", nil, emptySHA256, map[string]string{"X-Amz-Meta-A": "1"}, now, creds)
		tamper(r)
		if _, err := v.Verify(context.Background(), r); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s changed: %v, want a mismatch", name, err)
		}
	}
}

func TestSignedPayloadChecked(t *testing.T) {
	v := New(lookup, nil)
	body := []byte("the signed body")
	r := signed(t, "PUT", "/b/k", body, hashHex(body), nil, time.Now(), creds)
	r.Body = io.NopCloser(strings.NewReader("another body!!!"))
	res, err := v.Verify(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(res.Body); !errors.Is(err, ErrPayloadHash) {
		t.Fatalf("read: %v, want a payload mismatch", err)
	}
	r = signed(t, "PUT", "/b/k", body, hashHex(body), nil, time.Now(), creds)
	res, err = v.Verify(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(res.Body); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read: %q %v", got, err)
	}
}

func TestPresigned(t *testing.T) {
	signedAt := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	presign := func(expires string, c aws.Credentials) *http.Request {
		cl, _ := http.NewRequest("GET", "http://gw.example/bucket/my%20key?X-Amz-Expires="+expires+"&versionId=null", nil)
		s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
		u, _, err := s.PresignHTTP(context.Background(), c, cl, UnsignedPayload, "s3", "us-east-1", signedAt)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", strings.TrimPrefix(u, "http://gw.example"), nil)
		r.Host = "gw.example"
		return r
	}
	for _, tc := range []struct {
		name    string
		expires string
		c       aws.Credentials
		now     time.Time
		want    error
	}{
		{"valid", "3600", creds, signedAt.Add(time.Hour - time.Second), nil},
		{"expired", "3600", creds, signedAt.Add(time.Hour + time.Second), ErrExpired},
		{"too long", "604801", creds, signedAt, ErrQueryMalformed},
		{"wrong secret", "60", aws.Credentials{AccessKeyID: testAK, SecretAccessKey: "x"}, signedAt, ErrMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := New(lookup, func() time.Time { return tc.now })
			_, err := v.Verify(context.Background(), presign(tc.expires, tc.c))
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Verify: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestAnonymousAndV2(t *testing.T) {
	v := New(lookup, nil)
	r := httptest.NewRequest("GET", "/bucket/k", nil)
	if _, err := v.Verify(context.Background(), r); !errors.Is(err, ErrMissing) {
		t.Fatalf("anonymous: %v", err)
	}
	r.Header.Set("Authorization", "AWS AKIA:c2ln")
	if _, err := v.Verify(context.Background(), r); !errors.Is(err, ErrMalformed) {
		t.Fatalf("v2 without a date: %v", err)
	}
	r.Header.Set("Authorization", "AWS4-ECDSA-P256-SHA256 Credential=x")
	if _, err := v.Verify(context.Background(), r); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("sigv4a: %v", err)
	}
	for _, h := range []string{"AWS4-HMAC-SHA256", "AWS4-HMAC-SHA256 Credential=x", "AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host, Signature=00"} {
		r.Header.Set("Authorization", h)
		if _, err := v.Verify(context.Background(), r); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v, want malformed", h, err)
		}
	}
}

// chunkedBody encodes data as aws-chunked with chunk signatures chained
// from seed, as the S3 API reference's "Signature Calculations for the
// Authorization Header: Transferring Payload in Multiple Chunks" defines.
func chunkedBody(key []byte, amzDate, scope, seed string, data []byte, size int) []byte {
	s := &chunkSigner{key: key, amzDate: amzDate, scope: scope, prev: seed}
	var b bytes.Buffer
	for off := 0; ; off += size {
		off = min(off, len(data))
		chunk := data[off:min(off+size, len(data))]
		h := sha256.Sum256(chunk)
		sig := s.next(h[:])
		s.prev = sig
		fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n", len(chunk), sig)
		b.Write(chunk)
		b.WriteString("\r\n")
		if len(chunk) == 0 {
			return b.Bytes()
		}
	}
}

// TestStreamingExample is the example of the S3 API reference (a PUT of
// 66,560 bytes of 'a' in 64 KiB chunks, signed on 24 May 2013): the seed
// and every chunk signature it lists.
func TestStreamingExample(t *testing.T) {
	data := bytes.Repeat([]byte{'a'}, 66560)
	at := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	key := signingKey(testSecret, "20130524", "us-east-1", "s3")
	const seed = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
	body := chunkedBody(key, "20130524T000000Z", "20130524/us-east-1/s3/aws4_request", seed, data, 65536)
	for _, sig := range []string{
		"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
		"0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
		"b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
	} {
		if !bytes.Contains(body, []byte(sig)) {
			t.Errorf("chunk signature %s not computed", sig)
		}
	}
	r := httptest.NewRequest("PUT", "/examplebucket/chunkObject.txt", bytes.NewReader(body))
	r.Host = "s3.amazonaws.com"
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("Content-Length", fmt.Sprint(len(body)))
	r.Header.Set("X-Amz-Content-Sha256", StreamingSigned)
	r.Header.Set("X-Amz-Decoded-Content-Length", "66560")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testAK+"/20130524/us-east-1/s3/aws4_request,SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class,Signature="+seed)
	if len(body) != 66824 {
		t.Errorf("body %d bytes, the example's Content-Length is 66824", len(body))
	}
	v := New(lookup, func() time.Time { return at })
	res, err := v.Verify(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(res.Body)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("decoded %d bytes, %v", len(got), err)
	}
	// One flipped data byte breaks its chunk's signature.
	bad := bytes.Clone(body)
	bad[100] = 'b'
	r.Body = io.NopCloser(bytes.NewReader(bad))
	res, err = v.Verify(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(res.Body); !errors.Is(err, ErrChunk) {
		t.Fatalf("tampered chunk: %v", err)
	}
}

func TestUnsignedTrailer(t *testing.T) {
	body := "5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n"
	c := NewChunkReader(strings.NewReader(body), 11)
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "hello world" || c.Trailers["x-amz-checksum-crc32"] != "DUoRhQ==" {
		t.Fatalf("%q %v %v", got, err, c.Trailers)
	}
	for _, bad := range []string{
		"5\r\nhello\r\n0\r\n\r\n",           // shorter than the decoded length
		"5\r\nhel",                          // ends inside a chunk
		"zz\r\nhello\r\n",                   // bad size
		"5\r\nhello world\r\n0\r\n\r\n",     // data longer than the size
		"b\r\nhello world\r\n0;x=y\r\n\r\n", // bad extension
	} {
		if _, err := io.ReadAll(NewChunkReader(strings.NewReader(bad), 11)); !errors.Is(err, ErrChunk) {
			t.Errorf("%q: %v, want ErrChunk", bad, err)
		}
	}
}
