package s3gw

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
)

// GetObject and HeadObject with partNumber (S3 API reference,
// GetObject): each part of a multipart object with its checksum, part 1
// of a single-part object, and the refusals.
func TestGetObjectPart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/parts"})
		p := [][]byte{bytes.Repeat([]byte{'x'}, 5<<20), []byte("second and last")}
		for _, c := range []struct {
			key string
			hdr map[string]string
		}{{"sums", map[string]string{"x-amz-checksum-algorithm": "SHA256"}}, {"plain", nil}} {
			id := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/parts/" + c.key + "?uploads", hdr: c.hdr})).UploadID
			var b strings.Builder
			b.WriteString("<CompleteMultipartUpload>")
			for i, part := range p {
				w := e.ok(req{method: "PUT", target: fmt.Sprintf("/parts/%s?partNumber=%d&uploadId=%s", c.key, i+1, id), body: part})
				fmt.Fprintf(&b, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag><ChecksumSHA256>%s</ChecksumSHA256></Part>", i+1, w.Header().Get("ETag"), w.Header().Get("x-amz-checksum-sha256"))
			}
			b.WriteString("</CompleteMultipartUpload>")
			etag := decode[completeMultipartUploadResult](t, e.ok(req{method: "POST", target: "/parts/" + c.key + "?uploadId=" + id, body: []byte(b.String())})).ETag
			off := 0
			for i, part := range p {
				w := e.ok(req{method: "GET", target: fmt.Sprintf("/parts/%s?partNumber=%d", c.key, i+1), hdr: map[string]string{"x-amz-checksum-mode": "ENABLED"}})
				want := fmt.Sprintf("bytes %d-%d/%d", off, off+len(part)-1, len(p[0])+len(p[1]))
				if w.Code != 206 || !bytes.Equal(w.Body.Bytes(), part) || w.Header().Get("Content-Range") != want || w.Header().Get("x-amz-mp-parts-count") != "2" || w.Header().Get("ETag") != etag {
					t.Fatalf("%s part %d: %d %v (%d bytes)", c.key, i+1, w.Code, w.Header(), w.Body.Len())
				}
				if sum := w.Header().Get("x-amz-checksum-sha256"); (c.key == "sums") != (sum == sumB64("SHA256", part)) {
					t.Fatalf("%s part %d: checksum %q", c.key, i+1, sum)
				}
				if h := e.ok(req{method: "HEAD", target: fmt.Sprintf("/parts/%s?partNumber=%d", c.key, i+1)}); h.Header().Get("Content-Length") != fmt.Sprint(len(part)) {
					t.Fatalf("%s part %d: HEAD %v", c.key, i+1, h.Header())
				}
				off += len(part)
			}
			e.want(e.do(req{method: "GET", target: "/parts/" + c.key + "?partNumber=3"}), 400, "InvalidPart")
			e.want(e.do(req{method: "GET", target: "/parts/" + c.key + "?partNumber=0"}), 400, "InvalidPart")
			e.want(e.do(req{method: "GET", target: "/parts/" + c.key + "?partNumber=x"}), 400, "InvalidArgument")
			e.want(e.do(req{method: "GET", target: "/parts/" + c.key + "?partNumber=1", hdr: map[string]string{"Range": "bytes=0-1"}}), 400, "InvalidRequest")
		}
		// A single-part object: part 1 is all of it.
		body := []byte("one piece")
		e.ok(req{method: "PUT", target: "/parts/one", body: body, hdr: map[string]string{"x-amz-checksum-crc32": sumB64("CRC32", body)}})
		w := e.ok(req{method: "GET", target: "/parts/one?partNumber=1", hdr: map[string]string{"x-amz-checksum-mode": "ENABLED"}})
		if !bytes.Equal(w.Body.Bytes(), body) || w.Header().Get("x-amz-mp-parts-count") != "1" || w.Header().Get("x-amz-checksum-crc32") != sumB64("CRC32", body) {
			t.Fatalf("single part: %d %v %q", w.Code, w.Header(), w.Body.String())
		}
		e.want(e.do(req{method: "GET", target: "/parts/one?partNumber=2"}), 400, "InvalidPart")
	})
}
