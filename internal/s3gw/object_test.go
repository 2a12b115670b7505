package s3gw

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// PutObject, GetObject, HeadObject and DeleteObject (S3 API reference),
// with metadata, Content-MD5, ranges and conditions.
func TestObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/bk1"})
		body := []byte("hello, cuttle: an object of a few bytes")
		w := e.ok(req{method: "PUT", target: "/bk1/dir/hello.txt", body: body, hdr: map[string]string{
			"Content-Type": "text/plain", "X-Amz-Meta-Colour": "blue", "Cache-Control": "max-age=60", "Content-MD5": md5b64(body)}})
		etag := w.Header().Get("ETag")
		if want := fmt.Sprintf(`"%x"`, md5sum(body)); etag != want {
			t.Fatalf("ETag %s, want %s", etag, want)
		}
		w = e.ok(req{method: "GET", target: "/bk1/dir/hello.txt"})
		if !bytes.Equal(w.Body.Bytes(), body) || w.Header().Get("Content-Type") != "text/plain" ||
			rawHeader(w.Header(), "x-amz-meta-colour") != "blue" || w.Header().Get("Cache-Control") != "max-age=60" ||
			w.Header().Get("ETag") != etag || w.Header().Get("Content-Length") != fmt.Sprint(len(body)) {
			t.Fatalf("get: %q %v", w.Body.String(), w.Header())
		}
		w = e.ok(req{method: "HEAD", target: "/bk1/dir/hello.txt"})
		if w.Body.Len() != 0 || w.Header().Get("Content-Length") != fmt.Sprint(len(body)) {
			t.Fatalf("head: %q %v", w.Body.String(), w.Header())
		}
		lm := w.Header().Get("Last-Modified")

		// Ranges (RFC 9110 section 14, as GetObject's Range).
		for _, rc := range []struct {
			rng, want, crange string
			status            int
		}{
			{"bytes=0-4", "hello", "bytes 0-4/39", 206},
			{"bytes=7-", string(body[7:]), "bytes 7-38/39", 206},
			{"bytes=-5", string(body[34:]), "bytes 34-38/39", 206},
			{"bytes=30-1000", string(body[30:]), "bytes 30-38/39", 206},
			{"bytes=0-1,3-4", string(body), "", 200},
			{"lines=1-2", string(body), "", 200},
		} {
			w := e.ok(req{method: "GET", target: "/bk1/dir/hello.txt", hdr: map[string]string{"Range": rc.rng}})
			if w.Code != rc.status || w.Body.String() != rc.want || w.Header().Get("Content-Range") != rc.crange {
				t.Fatalf("range %s: %d %q %q", rc.rng, w.Code, w.Body.String(), w.Header().Get("Content-Range"))
			}
		}
		e.want(e.do(req{method: "GET", target: "/bk1/dir/hello.txt", hdr: map[string]string{"Range": "bytes=39-"}}), 416, "InvalidRange")

		// Conditions.
		later := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
		earlier := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
		for _, c := range []struct {
			h, v   string
			status int
		}{
			{"If-Match", etag, 200}, {"If-Match", `"nope"`, 412}, {"If-Match", "*", 200},
			{"If-None-Match", etag, 304}, {"If-None-Match", `"nope"`, 200},
			{"If-Modified-Since", lm, 304}, {"If-Modified-Since", earlier, 200},
			{"If-Unmodified-Since", later, 200}, {"If-Unmodified-Since", earlier, 412},
		} {
			w := e.do(req{method: "GET", target: "/bk1/dir/hello.txt", hdr: map[string]string{c.h: c.v}})
			if w.Code != c.status {
				t.Fatalf("%s: %s: %d, want %d", c.h, c.v, w.Code, c.status)
			}
		}
		// Conditional PUT: If-None-Match * only creates.
		e.want(e.do(req{method: "PUT", target: "/bk1/dir/hello.txt", body: []byte("x"), hdr: map[string]string{"If-None-Match": "*"}}), 412, "PreconditionFailed")

		// A wrong Content-MD5 stores nothing.
		e.want(e.do(req{method: "PUT", target: "/bk1/other", body: []byte("abc"), hdr: map[string]string{"Content-MD5": md5b64([]byte("abd"))}}), 400, "BadDigest")
		e.want(e.do(req{method: "PUT", target: "/bk1/other", body: []byte("abc"), hdr: map[string]string{"Content-MD5": "nonsense"}}), 400, "InvalidDigest")
		e.want(e.do(req{method: "GET", target: "/bk1/other"}), 404, "NoSuchKey")
		// A body shorter than its Content-Length stores nothing.
		e.want(e.do(req{method: "PUT", target: "/bk1/short", body: []byte("abcdef"), unsigned: true, mutate: func(r *http.Request) {
			r.Body = io_nopCloser(strings.NewReader("abc"))
		}}), 400, "IncompleteBody")
		e.want(e.do(req{method: "HEAD", target: "/bk1/short"}), 404, "")

		// Keys of 1,024 bytes are fine, 1,025 are not.
		long := strings.Repeat("k", 1024)
		e.ok(req{method: "PUT", target: "/bk1/" + long, body: []byte("1")})
		e.want(e.do(req{method: "PUT", target: "/bk1/" + long + "k", body: []byte("1")}), 400, "KeyTooLongError")

		// An empty object.
		e.ok(req{method: "PUT", target: "/bk1/empty"})
		if w := e.ok(req{method: "GET", target: "/bk1/empty"}); w.Body.Len() != 0 || w.Header().Get("ETag") != `"d41d8cd98f00b204e9800998ecf8427e"` {
			t.Fatalf("empty: %q %v", w.Body.String(), w.Header())
		}

		// An object of several RADOS objects, overwritten, then read.
		big := bytes.Repeat([]byte("0123456789abcdef"), 9<<16+1) // 9 MiB + 16 bytes
		e.ok(req{method: "PUT", target: "/bk1/big", body: big, unsigned: true})
		big[5] = 'X'
		e.ok(req{method: "PUT", target: "/bk1/big", body: big, unsigned: true})
		if w := e.ok(req{method: "GET", target: "/bk1/big"}); !bytes.Equal(w.Body.Bytes(), big) {
			t.Fatalf("big: %d bytes back", w.Body.Len())
		}
		w = e.ok(req{method: "GET", target: "/bk1/big", hdr: map[string]string{"Range": "bytes=4194300-4194310"}})
		if !bytes.Equal(w.Body.Bytes(), big[4194300:4194311]) {
			t.Fatalf("range over an object boundary: %q", w.Body.String())
		}
		// The overwritten data are gone: hello.txt, the long key and big's 3.
		if d, g := e.dataObjects(); d != 5 || g != 0 {
			t.Fatalf("%d data objects, %d garbage records; want 5 and 0", d, g)
		}

		// Copy: metadata copied, or replaced.
		w = e.ok(req{method: "PUT", target: "/bk1/copy", hdr: map[string]string{"X-Amz-Copy-Source": "/bk1/dir/hello.txt"}})
		cr := decode[copyObjectResult](t, w)
		if cr.ETag != etag {
			t.Fatalf("copy: %+v", cr)
		}
		if w := e.ok(req{method: "GET", target: "/bk1/copy"}); !bytes.Equal(w.Body.Bytes(), body) || rawHeader(w.Header(), "x-amz-meta-colour") != "blue" {
			t.Fatalf("copy: %q %v", w.Body.String(), w.Header())
		}
		e.ok(req{method: "PUT", target: "/bk1/copy", hdr: map[string]string{"X-Amz-Copy-Source": "bk1/copy", "X-Amz-Metadata-Directive": "REPLACE", "X-Amz-Meta-Shape": "round", "Content-Type": "text/x"}})
		if w := e.ok(req{method: "HEAD", target: "/bk1/copy"}); rawHeader(w.Header(), "x-amz-meta-colour") != "" || rawHeader(w.Header(), "x-amz-meta-shape") != "round" || w.Header().Get("Content-Type") != "text/x" {
			t.Fatalf("copy replace: %v", w.Header())
		}
		e.want(e.do(req{method: "PUT", target: "/bk1/copy", hdr: map[string]string{"X-Amz-Copy-Source": "bk1/copy"}}), 400, "InvalidRequest")
		e.want(e.do(req{method: "PUT", target: "/bk1/copy2", hdr: map[string]string{"X-Amz-Copy-Source": "bk1/missing"}}), 404, "NoSuchKey")
		e.want(e.do(req{method: "PUT", target: "/bk1/copy2", hdr: map[string]string{"X-Amz-Copy-Source": "bk1/copy", "X-Amz-Copy-Source-If-Match": `"zz"`}}), 412, "PreconditionFailed")

		// Delete, and DeleteObjects.
		e.want(e.ok(req{method: "DELETE", target: "/bk1/copy"}), 204, "")
		e.want(e.ok(req{method: "DELETE", target: "/bk1/copy"}), 204, "")
		del := []byte(`<Delete><Object><Key>big</Key></Object><Object><Key>empty</Key></Object><Object><Key>never</Key></Object></Delete>`)
		dr := decode[deleteResult](t, e.ok(req{method: "POST", target: "/bk1?delete", body: del, hdr: map[string]string{"Content-MD5": md5b64(del)}}))
		if len(dr.Deleted) != 3 || len(dr.Errors) != 0 {
			t.Fatalf("delete objects: %+v", dr)
		}
		e.want(e.do(req{method: "POST", target: "/bk1?delete", body: []byte(`<Delete><Object><Key>a</Key>`)}), 400, "MalformedXML")
		e.want(e.do(req{method: "POST", target: "/bk1?delete", body: del, hdr: map[string]string{"Content-MD5": md5b64([]byte("x"))}}), 400, "BadDigest")
		e.want(e.do(req{method: "GET", target: "/bk1/big"}), 404, "NoSuchKey")
		e.ok(req{method: "DELETE", target: "/bk1/dir/hello.txt"})
		e.ok(req{method: "DELETE", target: "/bk1/" + long})
		if d, g := e.dataObjects(); d != 0 || g != 0 {
			t.Fatalf("%d data objects, %d garbage records left", d, g)
		}
	})
}

// rawHeader is the first value of key exactly as written, not
// canonicalized: the gateway writes user metadata in lower case, as S3
// returns it.
func rawHeader(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Conditional PUTs race: of writers that all PUT one key with
// If-None-Match: * at once, exactly one creates it and the others get
// 412 — the condition is judged against the entry the commit replaces,
// not a read before the body is stored. And racing plain overwrites
// leave exactly one entry whose data is readable, every other data id
// retired once (the garbage list ends empty).
func TestConcurrentWritesOfOneKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/bk1"})
		const writers = 6
		codes := make(chan int, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				w := e.do(req{method: "PUT", target: "/bk1/once", body: fmt.Appendf(nil, "writer %d", i), hdr: map[string]string{"If-None-Match": "*"}})
				codes <- w.Code
			})
		}
		wg.Wait()
		close(codes)
		created := 0
		for c := range codes {
			switch c {
			case 200:
				created++
			case 412:
			default:
				t.Fatalf("a conditional PUT answered %d", c)
			}
		}
		if created != 1 {
			t.Fatalf("%d of %d If-None-Match: * PUTs created the key, want exactly 1", created, writers)
		}

		for i := range writers {
			wg.Go(func() {
				e.ok(req{method: "PUT", target: "/bk1/hot", body: bytes.Repeat(fmt.Appendf(nil, "%d", i), 1000)})
			})
		}
		wg.Wait()
		e.gw.Quiesce()
		got := e.ok(req{method: "GET", target: "/bk1/hot"}).Body.Bytes()
		if len(got) != 1000 || !bytes.Equal(got, bytes.Repeat(got[:1], 1000)) {
			t.Fatalf("after racing overwrites the object reads %q...", got[:min(len(got), 20)])
		}
		// Two objects' data and no garbage: every overwritten body was
		// retired, none twice and none forgotten.
		if d, g := e.dataObjects(); d != 2 || g != 0 {
			t.Fatalf("after racing overwrites: %d data objects and %d garbage records, want 2 and 0", d, g)
		}
	})
}
