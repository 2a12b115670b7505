package s3gw

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
)

// GetObjectAttributes (S3 API reference): each attribute alone and all
// together, a single-part object and multipart ones with and without
// checksums, the parts' paging, and the refusals.
func TestGetObjectAttributes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/attrs"})
		body := []byte("attributes")
		e.ok(req{method: "PUT", target: "/attrs/one", body: body, hdr: map[string]string{"x-amz-checksum-sha1": sumB64("SHA1", body), "x-amz-storage-class": "REDUCED_REDUNDANCY"}})
		attrs := func(key, list string, hdr ...string) objectAttributes {
			h := map[string]string{"x-amz-object-attributes": list}
			for i := 0; i+1 < len(hdr); i += 2 {
				h[hdr[i]] = hdr[i+1]
			}
			w := e.ok(req{method: "GET", target: "/attrs/" + key + "?attributes", hdr: h})
			if w.Header().Get("Last-Modified") == "" {
				t.Fatalf("no Last-Modified")
			}
			return decode[objectAttributes](t, w)
		}
		a := attrs("one", "ETag,Checksum,ObjectParts,StorageClass,ObjectSize")
		if a.ETag != fmt.Sprintf("%x", md5sum(body)) || a.Checksum == nil || a.Checksum.SHA1 != sumB64("SHA1", body) || a.Checksum.Type != "FULL_OBJECT" ||
			a.ObjectParts != nil || a.StorageClass != "REDUCED_REDUNDANCY" || a.ObjectSize == nil || *a.ObjectSize != int64(len(body)) {
			t.Fatalf("all attributes: %+v", a)
		}
		if a := attrs("one", "ObjectSize"); a.ETag != "" || a.Checksum != nil || a.StorageClass != "" || a.ObjectSize == nil {
			t.Fatalf("size only: %+v", a)
		}
		e.want(e.do(req{method: "GET", target: "/attrs/one?attributes"}), 400, "InvalidArgument")
		e.want(e.do(req{method: "GET", target: "/attrs/one?attributes", hdr: map[string]string{"x-amz-object-attributes": "ETag,Colour"}}), 400, "InvalidArgument")
		e.want(e.do(req{method: "GET", target: "/attrs/one?attributes", hdr: map[string]string{"x-amz-object-attributes": "ETag", "x-amz-max-parts": "-1"}}), 400, "InvalidArgument")
		e.want(e.do(req{method: "GET", target: "/attrs/none?attributes", hdr: map[string]string{"x-amz-object-attributes": "ETag"}}), 404, "NoSuchKey")
		e.want(e.do(req{method: "GET", target: "/attrs/one?attributes", creds: &e.bob, hdr: map[string]string{"x-amz-object-attributes": "ETag"}}), 403, "AccessDenied")
		e.want(e.do(req{method: "PUT", target: "/attrs/one?attributes", hdr: map[string]string{"x-amz-object-attributes": "ETag"}}), 405, "MethodNotAllowed")

		// Multipart, with a COMPOSITE CRC32: its parts, paged.
		upload := func(key string, hdr map[string]string, parts ...[]byte) string {
			id := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/attrs/" + key + "?uploads", hdr: hdr})).UploadID
			var b strings.Builder
			b.WriteString("<CompleteMultipartUpload>")
			for i, p := range parts {
				w := e.ok(req{method: "PUT", target: fmt.Sprintf("/attrs/%s?partNumber=%d&uploadId=%s", key, i+1, id), body: p})
				fmt.Fprintf(&b, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag><ChecksumCRC32>%s</ChecksumCRC32></Part>", i+1, w.Header().Get("ETag"), w.Header().Get("x-amz-checksum-crc32"))
			}
			b.WriteString("</CompleteMultipartUpload>")
			return decode[completeMultipartUploadResult](t, e.ok(req{method: "POST", target: "/attrs/" + key + "?uploadId=" + id, body: []byte(b.String())})).CRC32
		}
		p := [][]byte{bytes.Repeat([]byte{1}, 5<<20), bytes.Repeat([]byte{2}, 5<<20), []byte("3")}
		composite := upload("mp", map[string]string{"x-amz-checksum-algorithm": "CRC32"}, p...)
		a = attrs("mp", "Checksum,ObjectParts", "x-amz-max-parts", "2")
		if whole, _, _ := strings.Cut(composite, "-"); !strings.HasSuffix(composite, "-3") || a.Checksum == nil || a.Checksum.CRC32 != whole || a.Checksum.Type != "COMPOSITE" {
			t.Fatalf("composite checksum: %+v, complete gave %s", a.Checksum, composite)
		}
		op := a.ObjectParts
		if op == nil || op.TotalPartsCount != 3 || len(op.Parts) != 2 || !op.IsTruncated || op.NextPartNumberMarker != 2 || op.MaxParts != 2 ||
			op.Parts[0].PartNumber != 1 || op.Parts[0].Size != 5<<20 || op.Parts[1].CRC32 != sumB64("CRC32", p[1]) {
			t.Fatalf("parts, first page: %+v", op)
		}
		op = attrs("mp", "ObjectParts", "x-amz-part-number-marker", "2").ObjectParts
		if op == nil || len(op.Parts) != 1 || op.IsTruncated || op.Parts[0].PartNumber != 3 || op.Parts[0].Size != 1 || op.Parts[0].CRC32 != sumB64("CRC32", p[2]) || op.PartNumberMarker != 2 {
			t.Fatalf("parts, second page: %+v", op)
		}
		// Without checksums: the count only, as S3 answers.
		upload("plain", nil, p[0], p[2])
		if op := attrs("plain", "ObjectParts").ObjectParts; op == nil || op.TotalPartsCount != 2 || len(op.Parts) != 0 {
			t.Fatalf("parts without checksums: %+v", op)
		}
	})
}
