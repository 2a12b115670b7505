package s3gw

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
)

func completeBody(parts ...string) []byte {
	var b strings.Builder
	b.WriteString("<CompleteMultipartUpload>")
	for i := 0; i+1 < len(parts); i += 2 {
		fmt.Fprintf(&b, "<Part><PartNumber>%s</PartNumber><ETag>%s</ETag></Part>", parts[i], parts[i+1])
	}
	b.WriteString("</CompleteMultipartUpload>")
	return []byte(b.String())
}

// The multipart upload operations (S3 API reference:
// CreateMultipartUpload, UploadPart, ListParts, CompleteMultipartUpload,
// AbortMultipartUpload, ListMultipartUploads), and their errors.
func TestMultipart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/mpu"})
		init := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/mpu/obj?uploads", hdr: map[string]string{"Content-Type": "video/mp4", "X-Amz-Meta-A": "1"}}))
		id := init.UploadID
		p1 := bytes.Repeat([]byte{'1'}, 5<<20)
		p2 := []byte("the last part is small")
		put := func(n int, b []byte) string {
			return e.ok(req{method: "PUT", target: fmt.Sprintf("/mpu/obj?partNumber=%d&uploadId=%s", n, id), body: b, unsigned: true}).Header().Get("ETag")
		}
		put(1, []byte("replaced below"))
		e1 := put(1, p1)
		e2 := put(2, p2)
		e3 := put(3, []byte("small"))
		e.want(e.do(req{method: "PUT", target: "/mpu/obj?partNumber=0&uploadId=" + id, body: []byte("x")}), 400, "InvalidArgument")
		e.want(e.do(req{method: "PUT", target: "/mpu/obj?partNumber=10001&uploadId=" + id, body: []byte("x")}), 400, "InvalidArgument")
		e.want(e.do(req{method: "PUT", target: "/mpu/obj?partNumber=1&uploadId=nope", body: []byte("x")}), 404, "NoSuchUpload")

		lp := decode[listPartsResult](t, e.ok(req{method: "GET", target: "/mpu/obj?uploadId=" + id}))
		if len(lp.Parts) != 3 || lp.Parts[0].Size != 5<<20 || lp.Parts[1].ETag != e2 {
			t.Fatalf("list parts: %+v", lp)
		}
		lp = decode[listPartsResult](t, e.ok(req{method: "GET", target: "/mpu/obj?uploadId=" + id + "&max-parts=1&part-number-marker=1"}))
		if len(lp.Parts) != 1 || lp.Parts[0].PartNumber != 2 || !lp.IsTruncated || lp.NextPartNumberMarker != 2 {
			t.Fatalf("list parts page: %+v", lp)
		}
		lu := decode[listMultipartUploadsResult](t, e.ok(req{method: "GET", target: "/mpu?uploads"}))
		if len(lu.Uploads) != 1 || lu.Uploads[0].UploadID != id || lu.Uploads[0].Key != "obj" {
			t.Fatalf("list uploads: %+v", lu)
		}
		e.want(e.do(req{method: "DELETE", target: "/mpu"}), 409, "BucketNotEmpty")

		complete := func(b []byte) *httpRecorder {
			return e.do(req{method: "POST", target: "/mpu/obj?uploadId=" + id, body: b})
		}
		e.want(complete(completeBody("2", e2, "1", e1)), 400, "InvalidPartOrder")
		e.want(complete(completeBody("1", e1, "2", `"0123"`)), 400, "InvalidPart")
		e.want(complete(completeBody("1", e1, "4", e2)), 400, "InvalidPart")
		e.want(complete(completeBody("1", e1, "3", e3, "2", e2)), 400, "InvalidPartOrder")
		e.want(complete(completeBody("1", e1, "2", e2, "3", e3)), 400, "EntityTooSmall")
		e.want(complete([]byte("<CompleteMultipartUpload><Part>")), 400, "MalformedXML")
		e.want(complete(completeBody()), 400, "MalformedXML")

		res := decode[completeMultipartUploadResult](t, e.ok(req{method: "POST", target: "/mpu/obj?uploadId=" + id, body: completeBody("1", e1, "2", e2)}))
		h := md5.New()
		for _, p := range [][]byte{p1, p2} {
			s := md5.Sum(p)
			h.Write(s[:])
		}
		if want := fmt.Sprintf(`"%s-2"`, hex.EncodeToString(h.Sum(nil))); res.ETag != want {
			t.Fatalf("ETag %s, want %s", res.ETag, want)
		}
		w := e.ok(req{method: "GET", target: "/mpu/obj"})
		if !bytes.Equal(w.Body.Bytes(), append(bytes.Clone(p1), p2...)) || w.Header().Get("Content-Type") != "video/mp4" || rawHeader(w.Header(), "x-amz-meta-a") != "1" {
			t.Fatalf("completed object: %d bytes, %v", w.Body.Len(), w.Header())
		}
		w = e.ok(req{method: "GET", target: "/mpu/obj", hdr: map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", 5<<20-2, 5<<20+2)}})
		if w.Body.String() != "11the" {
			t.Fatalf("range across parts: %q", w.Body.String())
		}
		e.want(e.do(req{method: "GET", target: "/mpu/obj?uploadId=" + id}), 404, "NoSuchUpload")
		// Part 3, not in the object, is gone; so is the replaced part 1.
		if d, g := e.dataObjects(); d != 3 || g != 0 {
			t.Fatalf("%d data objects, %d garbage records; want 3 (5 MiB + 1) and 0", d, g)
		}

		// UploadPartCopy: a part from a whole object and one from a range.
		id3 := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/mpu/copied?uploads"})).UploadID
		c1 := decode[copyPartResult](t, e.ok(req{method: "PUT", target: "/mpu/copied?partNumber=1&uploadId=" + id3, hdr: map[string]string{"X-Amz-Copy-Source": "/mpu/obj", "X-Amz-Copy-Source-Range": fmt.Sprintf("bytes=0-%d", 5<<20-1)}}))
		c2 := decode[copyPartResult](t, e.ok(req{method: "PUT", target: "/mpu/copied?partNumber=2&uploadId=" + id3, hdr: map[string]string{"X-Amz-Copy-Source": "mpu/obj", "X-Amz-Copy-Source-Range": fmt.Sprintf("bytes=%d-%d", 5<<20+4, 5<<20+7)}}))
		e.want(e.do(req{method: "PUT", target: "/mpu/copied?partNumber=3&uploadId=" + id3, hdr: map[string]string{"X-Amz-Copy-Source": "mpu/obj", "X-Amz-Copy-Source-Range": "bytes=0-99999999"}}), 400, "InvalidArgument")
		e.ok(req{method: "POST", target: "/mpu/copied?uploadId=" + id3, body: completeBody("1", c1.ETag, "2", c2.ETag)})
		if w := e.ok(req{method: "GET", target: "/mpu/copied"}); w.Body.Len() != 5<<20+4 || w.Body.String()[5<<20:] != "last" {
			t.Fatalf("copied parts: %d bytes, ends %q", w.Body.Len(), w.Body.String()[w.Body.Len()-4:])
		}
		e.ok(req{method: "DELETE", target: "/mpu/copied"})

		// Abort.
		id2 := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/mpu/other?uploads"})).UploadID
		e.ok(req{method: "PUT", target: "/mpu/other?partNumber=1&uploadId=" + id2, body: []byte("abc")})
		e.want(e.ok(req{method: "DELETE", target: "/mpu/other?uploadId=" + id2}), 204, "")
		e.want(e.do(req{method: "DELETE", target: "/mpu/other?uploadId=" + id2}), 404, "NoSuchUpload")
		if lu := decode[listMultipartUploadsResult](t, e.ok(req{method: "GET", target: "/mpu?uploads"})); len(lu.Uploads) != 0 {
			t.Fatalf("uploads after complete and abort: %+v", lu)
		}
		e.ok(req{method: "DELETE", target: "/mpu/obj"})
		if d, g := e.dataObjects(); d != 0 || g != 0 {
			t.Fatalf("%d data objects, %d garbage records left", d, g)
		}
	})
}
