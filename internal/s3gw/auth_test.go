package s3gw

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Requests that fail authentication get S3's codes and change nothing.
func TestAuthErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/authb"})
		e.want(e.do(req{method: "PUT", target: "/authb/k", body: []byte("x"), anonymous: true}), 403, "AccessDenied")
		bad := aws.Credentials{AccessKeyID: e.alice.AccessKeyID, SecretAccessKey: "wrong"}
		e.want(e.do(req{method: "PUT", target: "/authb/k", body: []byte("x"), creds: &bad}), 403, "SignatureDoesNotMatch")
		nobody := aws.Credentials{AccessKeyID: "CKNOBODY", SecretAccessKey: "x"}
		e.want(e.do(req{method: "GET", target: "/", creds: &nobody}), 403, "InvalidAccessKeyId")
		e.want(e.do(req{method: "PUT", target: "/authb/k", body: []byte("x"), at: time.Now().Add(-20 * time.Minute)}), 403, "RequestTimeTooSkewed")
		// The signed payload hash is checked against the body.
		e.want(e.do(req{method: "PUT", target: "/authb/k", body: []byte("x"), mutate: func(r *http.Request) {
			r.Body = io_nopCloser(strings.NewReader("y"))
		}}), 400, "XAmzContentSHA256Mismatch")
		e.want(e.do(req{method: "GET", target: "/authb/k", mutate: func(r *http.Request) {
			r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=nonsense")
		}}), 400, "AuthorizationHeaderMalformed")
		e.want(e.do(req{method: "GET", target: "/authb/k", mutate: func(r *http.Request) {
			r.Header.Set("Authorization", "AWS "+e.alice.AccessKeyID+":c2lnbmF0dXJl")
			r.Header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
		}}), 403, "SignatureDoesNotMatch")
		// Bob may not touch alice's bucket.
		e.want(e.do(req{method: "PUT", target: "/authb/k", body: []byte("x"), creds: &e.bob}), 403, "AccessDenied")
		e.want(e.do(req{method: "GET", target: "/authb?list-type=2", creds: &e.bob}), 403, "AccessDenied")
		e.want(e.do(req{method: "GET", target: "/authb/k"}), 404, "NoSuchKey")

		// A removed key stops working once the gateway's cache expires.
		k, err := e.gw.Meta().CreateKey(context.Background(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		second := aws.Credentials{AccessKeyID: k.Access, SecretAccessKey: k.Secret}
		e.ok(req{method: "GET", target: "/", creds: &second})
		if err := e.gw.Meta().RemoveKey(context.Background(), "alice", k.Access); err != nil {
			t.Fatal(err)
		}
		time.Sleep(11 * time.Second) // virtual time: past KeyCacheTTL
		e.want(e.do(req{method: "GET", target: "/", creds: &second}), 403, "InvalidAccessKeyId")
	})
}

func TestPresignedURL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/pre"})
		e.ok(req{method: "PUT", target: "/pre/a%20file", body: []byte("shared")})
		s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
		cl, _ := http.NewRequest("GET", "http://s3.test/pre/a%20file?X-Amz-Expires=60", nil)
		u, _, err := s.PresignHTTP(context.Background(), e.alice, cl, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		get := func() *httptest.ResponseRecorder {
			r := httptest.NewRequest("GET", strings.TrimPrefix(u, "http://s3.test"), nil)
			r.Host = "s3.test"
			w := httptest.NewRecorder()
			e.gw.ServeHTTP(w, r)
			return w
		}
		if w := get(); w.Code != 200 || w.Body.String() != "shared" {
			t.Fatalf("presigned GET: %d %s", w.Code, w.Body.String())
		}
		time.Sleep(61 * time.Second)
		e.want(get(), 403, "AccessDenied")
	})
}

// An aws-chunked upload with chunk signatures, as the S3 API reference's
// "Transferring Payload in Multiple Chunks" describes; one bad chunk
// stores nothing.
func TestStreamingUpload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/stream"})
		data := bytes.Repeat([]byte("chunky "), 20000) // 140,000 bytes
		send := func(key string, corrupt bool) *httptest.ResponseRecorder {
			at := time.Now().UTC()
			cl, _ := http.NewRequest("PUT", "http://s3.test/stream/"+key, nil)
			cl.Header.Set("Content-Encoding", "aws-chunked")
			cl.Header.Set("X-Amz-Decoded-Content-Length", fmt.Sprint(len(data)))
			cl.Header.Set("X-Amz-Content-Sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
			s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
			if err := s.SignHTTP(context.Background(), e.alice, cl, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "s3", "us-east-1", at); err != nil {
				t.Fatal(err)
			}
			seed := cl.Header.Get("Authorization")[strings.LastIndex(cl.Header.Get("Authorization"), "=")+1:]
			body := signChunks(e.alice.SecretAccessKey, at, seed, data, 65536)
			if corrupt {
				body[len(body)/2] ^= 1
			}
			r := httptest.NewRequest("PUT", cl.URL.RequestURI(), bytes.NewReader(body))
			r.Host = "s3.test"
			for k, v := range cl.Header {
				r.Header[k] = v
			}
			w := httptest.NewRecorder()
			e.gw.ServeHTTP(w, r)
			return w
		}
		if w := send("ok", false); w.Code != 200 {
			t.Fatalf("streaming PUT: %d %s", w.Code, w.Body.String())
		}
		if w := e.ok(req{method: "GET", target: "/stream/ok"}); !bytes.Equal(w.Body.Bytes(), data) {
			t.Fatalf("read back %d bytes", w.Body.Len())
		}
		e.want(send("bad", true), 403, "SignatureDoesNotMatch")
		e.want(e.do(req{method: "HEAD", target: "/stream/bad"}), 404, "")
		if d, g := e.dataObjects(); d != 1 || g != 0 {
			t.Fatalf("%d data objects, %d garbage records", d, g)
		}
	})
}

// signChunks is a client's aws-chunked encoder, written from the S3 API
// reference (independently of sigv4's decoder).
func signChunks(secret string, at time.Time, seed string, data []byte, size int) []byte {
	mac := func(k []byte, s string) []byte { m := hmac.New(sha256.New, k); m.Write([]byte(s)); return m.Sum(nil) }
	key := mac([]byte("AWS4"+secret), at.Format("20060102"))
	for _, s := range []string{"us-east-1", "s3", "aws4_request"} {
		key = mac(key, s)
	}
	scope := at.Format("20060102") + "/us-east-1/s3/aws4_request"
	empty := sha256.Sum256(nil)
	prev := seed
	var b bytes.Buffer
	for off := 0; ; off += size {
		off = min(off, len(data))
		chunk := data[off:min(off+size, len(data))]
		h := sha256.Sum256(chunk)
		sts := strings.Join([]string{"AWS4-HMAC-SHA256-PAYLOAD", at.Format("20060102T150405Z"), scope, prev, hex.EncodeToString(empty[:]), hex.EncodeToString(h[:])}, "\n")
		prev = hex.EncodeToString(mac(key, sts))
		fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n", len(chunk), prev)
		b.Write(chunk)
		b.WriteString("\r\n")
		if len(chunk) == 0 {
			return b.Bytes()
		}
	}
}
