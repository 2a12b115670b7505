package s3gw

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
)

// env is a gateway on a simulated cluster (one monitor, three OSDs, the
// gateway's pool of size 3) with users alice and bob.
type env struct {
	t          *testing.T
	c          *sim.Cluster
	io         *rados.IOContext
	gw         *Gateway
	alice, bob aws.Credentials
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 7, MinDelay: 100 * time.Microsecond, MaxDelay: 300 * time.Microsecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	if r := c.Run("osd pool create", "pool", DefaultPool, "pg_num", "8", "size", "3"); r.Code != 0 {
		t.Fatalf("pool create: %d %s", r.Code, r.Status)
	}
	c.WaitForEpoch(c.Epoch())
	io, err := c.Client("client.rgw").OpenIOContext(DefaultPool)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := New(Config{IO: io, Domain: "s3.test"})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, c: c, io: io, gw: gw}
	for _, u := range []struct {
		name string
		cr   *aws.Credentials
	}{{"alice", &e.alice}, {"bob", &e.bob}} {
		usr, err := gw.Meta().CreateUser(context.Background(), u.name, "")
		if err != nil {
			t.Fatal(err)
		}
		*u.cr = aws.Credentials{AccessKeyID: usr.Keys[0].Access, SecretAccessKey: usr.Keys[0].Secret}
	}
	return e
}

// req is one request to send.
type req struct {
	method, target string
	body           []byte
	hdr            map[string]string
	creds          *aws.Credentials // alice when nil
	unsigned       bool             // UNSIGNED-PAYLOAD
	anonymous      bool
	host           string
	at             time.Time
	mutate         func(*http.Request) // after signing
}

func (e *env) do(q req) *httptest.ResponseRecorder {
	e.t.Helper()
	r := e.build(q)
	w := httptest.NewRecorder()
	e.gw.ServeHTTP(w, r)
	return w
}

// build makes the server-side request q describes, signed.
func (e *env) build(q req) *http.Request {
	e.t.Helper()
	host := q.host
	if host == "" {
		host = "s3.test"
	}
	cl, err := http.NewRequest(q.method, "http://"+host+q.target, bytes.NewReader(q.body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range q.hdr {
		cl.Header.Set(k, v)
	}
	if !q.anonymous {
		sum := sha256.Sum256(q.body)
		payload := hex.EncodeToString(sum[:])
		if q.unsigned {
			payload = "UNSIGNED-PAYLOAD"
		}
		cl.Header.Set("X-Amz-Content-Sha256", payload)
		creds := e.alice
		if q.creds != nil {
			creds = *q.creds
		}
		at := q.at
		if at.IsZero() {
			at = time.Now()
		}
		s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
		if err := s.SignHTTP(context.Background(), creds, cl, payload, "s3", "us-east-1", at); err != nil {
			e.t.Fatal(err)
		}
	}
	r := httptest.NewRequest(q.method, cl.URL.RequestURI(), bytes.NewReader(q.body))
	r.Host = host
	for k, v := range cl.Header {
		r.Header[k] = v
	}
	if q.mutate != nil {
		q.mutate(r)
	}
	return r
}

// want checks a response's status and, for errors, its S3 code.
func (e *env) want(w *httptest.ResponseRecorder, status int, code string) {
	e.t.Helper()
	if w.Code != status {
		e.t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body.String())
	}
	if w.Header().Get("x-amz-request-id") == "" {
		e.t.Fatalf("no x-amz-request-id")
	}
	if code != "" {
		var eb errorBody
		if err := xml.Unmarshal(w.Body.Bytes(), &eb); err != nil {
			e.t.Fatalf("error body %q: %v", w.Body.String(), err)
		}
		if eb.Code != code {
			e.t.Fatalf("code %s, want %s: %s", eb.Code, code, eb.Message)
		}
	}
}

func (e *env) ok(q req) *httptest.ResponseRecorder {
	e.t.Helper()
	w := e.do(q)
	if w.Code/100 != 2 {
		e.t.Fatalf("%s %s: %d %s", q.method, q.target, w.Code, w.Body.String())
	}
	return w
}

func md5b64(b []byte) string {
	s := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(s[:])
}

// dataObjects counts the gateway's data objects in the pool, and the
// garbage list's records.
func (e *env) dataObjects() (data, garbage int) {
	e.t.Helper()
	e.gw.Quiesce()
	ctx := context.Background()
	for o, err := range e.io.Objects(ctx) {
		if err != nil {
			e.t.Fatal(err)
		}
		if strings.HasPrefix(o.Name, "s3.d.") {
			data++
		}
	}
	for shard := range meta.GCShards {
		gs, _, err := e.gw.Meta().Garbage(ctx, shard, 0, 1000)
		if err != nil {
			e.t.Fatal(err)
		}
		garbage += len(gs)
	}
	return data, garbage
}

func decode[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := xml.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("%s: %v", w.Body.String(), err)
	}
	return v
}

var _ = meta.ErrNoSuchObject
var _ = fmt.Sprint
var _ = io.EOF

func md5sum(b []byte) []byte { s := md5.Sum(b); return s[:] }

func io_nopCloser(r io.Reader) io.ReadCloser { return io.NopCloser(r) }

type httpRecorder = httptest.ResponseRecorder

func decodeBody(b []byte, v any) error { return xml.Unmarshal(b, v) }
