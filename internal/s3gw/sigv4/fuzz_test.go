package sigv4

import (
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func FuzzChunkReader(f *testing.F) {
	f.Add("5\r\nhello\r\n0\r\n\r\n", int64(5), false)
	f.Add("5;chunk-signature=00\r\nhello\r\n0;chunk-signature=00\r\n\r\n", int64(5), true)
	f.Add("0\r\nx-amz-checksum-crc32:AAAA\r\n\r\n", int64(0), false)
	f.Fuzz(func(t *testing.T, body string, n int64, signed bool) {
		c := NewChunkReader(strings.NewReader(body), n)
		if signed {
			c.signed = &chunkSigner{key: []byte("k"), amzDate: "20260101T000000Z", scope: "s", prev: "p"}
		}
		got, err := io.ReadAll(c)
		if err == nil && int64(len(got)) != n {
			t.Fatalf("decoded %d bytes without error, want %d", len(got), n)
		}
	})
}

func FuzzVerifyHeader(f *testing.F) {
	f.Add("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=00", "20260101T000000Z", "/b/k?x=y&z")
	f.Fuzz(func(t *testing.T, authz, date, target string) {
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \r\n\t#") {
			return
		}
		if _, err := url.ParseRequestURI(target); err != nil {
			return
		}
		r := httptest.NewRequest("GET", "http://h"+target, nil)
		r.Header.Set("Authorization", authz)
		r.Header.Set("X-Amz-Date", date)
		r.Header.Set("X-Amz-Content-Sha256", emptySHA256)
		_, _ = New(lookup, nil).Verify(t.Context(), r)
	})
}
