package s3gw

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
)

// Bad input gets an S3 error, never a 5xx or a panic, and stores nothing
// (issue 40, "Bad input").
func TestHostileRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/hostile"})
		cases := []struct {
			name string
			q    req
			code string
		}{
			{"part number words", req{method: "PUT", target: "/hostile/k?partNumber=one&uploadId=x", body: []byte("a")}, "InvalidArgument"},
			{"part number huge", req{method: "PUT", target: "/hostile/k?partNumber=99999999999999999999&uploadId=x", body: []byte("a")}, "InvalidArgument"},
			{"upload id with a slash", req{method: "PUT", target: "/hostile/k?partNumber=1&uploadId=a/b", body: []byte("a")}, "NoSuchUpload"},
			{"list parts of nothing", req{method: "GET", target: "/hostile/k?uploadId=zz"}, "NoSuchUpload"},
			{"complete nothing", req{method: "POST", target: "/hostile/k?uploadId=zz", body: []byte("<x/>")}, "NoSuchUpload"},
			{"bucket with capitals", req{method: "GET", target: "/Hostile/k"}, "NoSuchBucket"},
			{"bucket too long", req{method: "GET", target: "/" + strings.Repeat("b", 300) + "/k"}, "NoSuchBucket"},
			{"copy source garbage", req{method: "PUT", target: "/hostile/c", hdr: map[string]string{"X-Amz-Copy-Source": "%zz"}}, "InvalidArgument"},
			{"copy source without key", req{method: "PUT", target: "/hostile/c", hdr: map[string]string{"X-Amz-Copy-Source": "hostile"}}, "InvalidArgument"},
			{"copy source version", req{method: "PUT", target: "/hostile/c", hdr: map[string]string{"X-Amz-Copy-Source": "hostile/a?versionId=3"}}, "InvalidArgument"},
			{"metadata directive", req{method: "PUT", target: "/hostile/c", hdr: map[string]string{"X-Amz-Copy-Source": "hostile/a", "X-Amz-Metadata-Directive": "MERGE"}}, "NoSuchKey"},
			{"storage class", req{method: "PUT", target: "/hostile/k", body: []byte("a"), hdr: map[string]string{"X-Amz-Storage-Class": "TAPE"}}, "InvalidStorageClass"},
			{"metadata too large", req{method: "PUT", target: "/hostile/k", body: []byte("a"), hdr: map[string]string{"X-Amz-Meta-Big": strings.Repeat("m", 3000)}}, "MetadataTooLarge"},
			{"decoded length without streaming", req{method: "PUT", target: "/hostile/k", body: []byte("a"), hdr: map[string]string{"X-Amz-Decoded-Content-Length": "1"}}, "InvalidRequest"},
			{"delete of 1001", req{method: "POST", target: "/hostile?delete", body: []byte("<Delete>" + strings.Repeat("<Object><Key>k</Key></Object>", 1001) + "</Delete>")}, "MalformedXML"},
			{"delete nothing", req{method: "POST", target: "/hostile?delete", body: []byte("<Delete></Delete>")}, "MalformedXML"},
			{"xml bomb-ish", req{method: "POST", target: "/hostile?delete", body: []byte(strings.Repeat("<a>", 100000))}, "MalformedXML"},
			{"max-keys words", req{method: "GET", target: "/hostile?max-keys=lots"}, "InvalidArgument"},
			{"max-uploads words", req{method: "GET", target: "/hostile?uploads&max-uploads=x"}, "InvalidArgument"},
			{"unsupported subresource", req{method: "GET", target: "/hostile?website"}, "NotImplemented"},
			{"malformed acl", req{method: "PUT", target: "/hostile?acl", body: []byte("<AccessControlPolicy><Access")}, "MalformedACLError"},
			{"post to an object", req{method: "POST", target: "/hostile/k"}, "MethodNotAllowed"},
			{"put to the service", req{method: "PUT", target: "/"}, "MethodNotAllowed"},
			{"location elsewhere", req{method: "PUT", target: "/elsewhere", body: []byte("<CreateBucketConfiguration><LocationConstraint>mars-1</LocationConstraint></CreateBucketConfiguration>")}, "InvalidArgument"},
			{"missing length", req{method: "PUT", target: "/hostile/k", unsigned: true, mutate: func(r *http.Request) { r.ContentLength = -1 }}, "MissingContentLength"},
		}
		for _, c := range cases {
			w := e.do(c.q)
			if w.Code < 400 || (w.Code >= 500 && w.Code != http.StatusNotImplemented) {
				t.Errorf("%s: status %d: %s", c.name, w.Code, w.Body.String())
				continue
			}
			var eb errorBody
			if err := decodeBody(w.Body.Bytes(), &eb); err != nil || eb.Code != c.code {
				t.Errorf("%s: %d %s, want %s (%v)", c.name, w.Code, eb.Code, c.code, err)
			}
		}
		if d, g := e.dataObjects(); d != 0 || g != 0 {
			t.Fatalf("%d data objects, %d garbage records after bad requests", d, g)
		}
		l := decode[listBucketResult](t, e.ok(req{method: "GET", target: "/hostile?list-type=2"}))
		if len(l.Contents) != 0 {
			t.Fatalf("objects stored: %+v", l.Contents)
		}
	})
}
