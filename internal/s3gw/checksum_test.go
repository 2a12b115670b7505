package s3gw

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/kv"
)

func sumOf(alg string, b []byte) []byte {
	h := newChecksumHash(alg)
	h.Write(b)
	return h.Sum(nil)
}

func sumB64(alg string, b []byte) string { return base64.StdEncoding.EncodeToString(sumOf(alg, b)) }

// Every algorithm against its check value, the digest of "123456789":
// the CRC catalogue's for CRC-32/ISO-HDLC, CRC-32/ISCSI and CRC-64/NVME
// (in big-endian bytes, as S3 shows CRCs), sha1sum's and sha256sum's.
func TestChecksumAlgorithms(t *testing.T) {
	for alg, want := range map[string]string{
		"CRC32":     "cbf43926",
		"CRC32C":    "e3069283",
		"CRC64NVME": "ae8b14860a799888",
		"SHA1":      "f7c3bc1d808e04732adf679965ccc34ca7ae3441",
		"SHA256":    "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225",
	} {
		if got := hex.EncodeToString(sumOf(alg, []byte("123456789"))); got != want {
			t.Errorf("%s: %s, want %s", alg, got, want)
		}
		if checksumSize(alg) != len(want)/2 {
			t.Errorf("%s: size %d", alg, checksumSize(alg))
		}
	}
}

// crcCombine against the CRC of the concatenation, for every CRC, at
// lengths around the byte and word boundaries and a large one.
func TestCRCCombine(t *testing.T) {
	buf := make([]byte, 70000)
	rand.Read(buf)
	for _, alg := range []string{"CRC32", "CRC32C", "CRC64NVME"} {
		for _, cut := range [][2]int{{0, 1}, {1, 1}, {3, 5}, {17, 100}, {1000, 0}, {5, 69995}, {40000, 30000}} {
			a, b := buf[:cut[0]], buf[cut[0]:cut[0]+cut[1]]
			whole := beUint(sumOf(alg, buf[:cut[0]+cut[1]]))
			got := crcCombine(alg, beUint(sumOf(alg, a)), beUint(sumOf(alg, b)), int64(len(b)))
			if got != whole {
				t.Fatalf("%s %v: combined %x, whole %x", alg, cut, got, whole)
			}
		}
	}
}

// multipartChecksum: COMPOSITE is the checksum of the parts' binary
// checksums with "-N" (the S3 user guide, "Using part-level checksums
// for multipart uploads"); FULL_OBJECT is the whole object's CRC.
func TestMultipartChecksum(t *testing.T) {
	p1, p2, p3 := []byte("first part "), []byte("second part, longer "), []byte("3")
	whole := append(append(append([]byte{}, p1...), p2...), p3...)
	parts := func(alg string) []meta.Part {
		var ps []meta.Part
		for i, b := range [][]byte{p1, p2, p3} {
			ps = append(ps, meta.Part{Number: i + 1, Size: int64(len(b)), Checksum: meta.Checksum{Algorithm: alg, Value: sumB64(alg, b)}})
		}
		return ps
	}
	for _, alg := range []string{"CRC32", "CRC32C", "SHA1", "SHA256"} {
		cat := append(append(append([]byte{}, sumOf(alg, p1)...), sumOf(alg, p2)...), sumOf(alg, p3)...)
		got, err := multipartChecksum(meta.Checksum{Algorithm: alg, Type: checksumComposite}, parts(alg))
		if want := sumB64(alg, cat) + "-3"; err != nil || got.Value != want || got.Type != checksumComposite {
			t.Fatalf("%s composite: %+v %v, want %s", alg, got, err, want)
		}
	}
	for _, alg := range []string{"CRC32", "CRC32C", "CRC64NVME"} {
		got, err := multipartChecksum(meta.Checksum{Algorithm: alg, Type: checksumFullObject}, parts(alg))
		if want := sumB64(alg, whole); err != nil || got.Value != want {
			t.Fatalf("%s full object: %+v %v, want %s", alg, got, err, want)
		}
	}
	ps := parts("CRC32")
	ps[1].Checksum = meta.Checksum{}
	if _, err := multipartChecksum(meta.Checksum{Algorithm: "CRC32", Type: checksumComposite}, ps); translate(err).Code != "InvalidPart" {
		t.Fatalf("a part without a checksum: %v", err)
	}
}

// The request headers' refusals, each with S3's code.
func TestRequestChecksumHeaders(t *testing.T) {
	good := sumB64("CRC32", []byte("x"))
	for _, c := range []struct {
		name string
		hdr  map[string]string
		alg  string
		code string
	}{
		{"none", nil, "", ""},
		{"header", map[string]string{"x-amz-checksum-crc32": good}, "CRC32", ""},
		{"sdk alone computes", map[string]string{"x-amz-sdk-checksum-algorithm": "sha256"}, "SHA256", ""},
		{"sdk agrees", map[string]string{"x-amz-checksum-crc32": good, "x-amz-sdk-checksum-algorithm": "CRC32"}, "CRC32", ""},
		{"trailer", map[string]string{"x-amz-trailer": "x-amz-checksum-crc64nvme"}, "CRC64NVME", ""},
		{"two headers", map[string]string{"x-amz-checksum-crc32": good, "x-amz-checksum-crc32c": good}, "", "InvalidRequest"},
		{"header and trailer", map[string]string{"x-amz-checksum-crc32": good, "x-amz-trailer": "x-amz-checksum-crc32"}, "", "InvalidRequest"},
		{"not base64", map[string]string{"x-amz-checksum-sha1": "!!"}, "", "InvalidRequest"},
		{"wrong length", map[string]string{"x-amz-checksum-sha256": good}, "", "InvalidRequest"},
		{"sdk disagrees", map[string]string{"x-amz-checksum-crc32": good, "x-amz-sdk-checksum-algorithm": "SHA1"}, "", "InvalidRequest"},
		{"sdk unknown", map[string]string{"x-amz-sdk-checksum-algorithm": "MD5"}, "", "InvalidRequest"},
		{"trailer unknown", map[string]string{"x-amz-trailer": "x-amz-meta-a"}, "", "InvalidRequest"},
	} {
		h := http.Header{}
		for k, v := range c.hdr {
			h.Set(k, v)
		}
		got, err := requestChecksum(h)
		if c.code != "" {
			if err == nil || translate(err).Code != c.code {
				t.Errorf("%s: %v, want %s", c.name, err, c.code)
			}
			continue
		}
		if err != nil || got.alg != c.alg {
			t.Errorf("%s: %+v %v, want %s", c.name, got, err, c.alg)
		}
	}
	for _, c := range []struct {
		alg, typ string
		want     meta.Checksum
		code     string
	}{
		{"", "", meta.Checksum{}, ""},
		{"crc32", "", meta.Checksum{Algorithm: "CRC32", Type: checksumComposite}, ""},
		{"CRC64NVME", "", meta.Checksum{Algorithm: "CRC64NVME", Type: checksumFullObject}, ""},
		{"CRC32C", "FULL_OBJECT", meta.Checksum{Algorithm: "CRC32C", Type: checksumFullObject}, ""},
		{"CRC64NVME", "COMPOSITE", meta.Checksum{}, "InvalidRequest"},
		{"SHA256", "FULL_OBJECT", meta.Checksum{}, "InvalidRequest"},
		{"", "COMPOSITE", meta.Checksum{}, "InvalidRequest"},
		{"MD5", "", meta.Checksum{}, "InvalidRequest"},
		{"SHA1", "PARTIAL", meta.Checksum{}, "InvalidRequest"},
	} {
		h := http.Header{}
		if c.alg != "" {
			h.Set("X-Amz-Checksum-Algorithm", c.alg)
		}
		if c.typ != "" {
			h.Set("X-Amz-Checksum-Type", c.typ)
		}
		got, err := uploadChecksum(h)
		if c.code != "" {
			if err == nil || translate(err).Code != c.code {
				t.Errorf("upload %s %s: %v, want %s", c.alg, c.typ, err, c.code)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("upload %s %s: %+v %v", c.alg, c.typ, got, err)
		}
	}
}

// trailerPut sends data as an unsigned aws-chunked body
// (STREAMING-UNSIGNED-PAYLOAD-TRAILER) announcing trailer and ending with
// trailer: value (nothing when value is "").
func (e *env) trailerPut(target string, data []byte, trailer, value string) *httptest.ResponseRecorder {
	e.t.Helper()
	const payload = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	cl, _ := http.NewRequest("PUT", "http://s3.test"+target, nil)
	cl.Header.Set("Content-Encoding", "aws-chunked")
	cl.Header.Set("X-Amz-Decoded-Content-Length", fmt.Sprint(len(data)))
	cl.Header.Set("X-Amz-Content-Sha256", payload)
	cl.Header.Set("X-Amz-Trailer", trailer)
	s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := s.SignHTTP(context.Background(), e.alice, cl, payload, "s3", "us-east-1", time.Now()); err != nil {
		e.t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%x\r\n%s\r\n0\r\n", len(data), data)
	if value != "" {
		fmt.Fprintf(&b, "%s:%s\r\n", trailer, value)
	}
	b.WriteString("\r\n")
	r := httptest.NewRequest("PUT", cl.URL.RequestURI(), &b)
	r.Host = "s3.test"
	for k, v := range cl.Header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	e.gw.ServeHTTP(w, r)
	return w
}

// signedTrailerPut sends data as a signed aws-chunked body with a signed
// trailer (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER), trailer: value,
// signed as the S3 API reference's "Signature calculations for trailing
// headers" says; tamper changes the value after signing.
func (e *env) signedTrailerPut(target string, data []byte, trailer, value string, tamper bool) *httptest.ResponseRecorder {
	e.t.Helper()
	const payload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	at := time.Now().UTC()
	cl, _ := http.NewRequest("PUT", "http://s3.test"+target, nil)
	cl.Header.Set("Content-Encoding", "aws-chunked")
	cl.Header.Set("X-Amz-Decoded-Content-Length", fmt.Sprint(len(data)))
	cl.Header.Set("X-Amz-Content-Sha256", payload)
	cl.Header.Set("X-Amz-Trailer", trailer)
	s := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := s.SignHTTP(context.Background(), e.alice, cl, payload, "s3", "us-east-1", at); err != nil {
		e.t.Fatal(err)
	}
	auth := cl.Header.Get("Authorization")
	body := signChunks(e.alice.SecretAccessKey, at, auth[strings.LastIndex(auth, "=")+1:], data, 65536)
	last := string(body[bytes.LastIndex(body, []byte("chunk-signature="))+len("chunk-signature="):])
	last = strings.TrimSpace(last)
	body = body[:len(body)-2]
	mac := func(k []byte, s string) []byte { m := hmac.New(sha256.New, k); m.Write([]byte(s)); return m.Sum(nil) }
	key := mac([]byte("AWS4"+e.alice.SecretAccessKey), at.Format("20060102"))
	for _, p := range []string{"us-east-1", "s3", "aws4_request"} {
		key = mac(key, p)
	}
	h := sha256.Sum256([]byte(trailer + ":" + value + "\n"))
	sig := hex.EncodeToString(mac(key, "AWS4-HMAC-SHA256-TRAILER\n"+at.Format("20060102T150405Z")+"\n"+at.Format("20060102")+"/us-east-1/s3/aws4_request\n"+last+"\n"+hex.EncodeToString(h[:])))
	if tamper {
		value = sumB64("CRC32", []byte("tampered"))
	}
	body = append(body, fmt.Sprintf("%s:%s\r\nx-amz-trailer-signature:%s\r\n\r\n", trailer, value, sig)...)
	r := httptest.NewRequest("PUT", cl.URL.RequestURI(), bytes.NewReader(body))
	r.Host = "s3.test"
	for k, v := range cl.Header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	e.gw.ServeHTTP(w, r)
	return w
}

// PutObject's checksums over HTTP (S3 API reference, PutObject's
// x-amz-checksum-* and GetObject's x-amz-checksum-mode): every
// algorithm stored and returned only when asked, a wrong value BadDigest
// with nothing stored, the trailer form, the SDK's algorithm alone, and
// copies.
func TestChecksumPutGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/cksum"})
		body := []byte("checksummed body")
		for _, alg := range checksumAlgorithms() {
			h := checksumHeader(alg)
			key := "/cksum/" + alg
			w := e.ok(req{method: "PUT", target: key, body: body, hdr: map[string]string{h: sumB64(alg, body)}})
			if w.Header().Get(h) != sumB64(alg, body) {
				t.Fatalf("%s: PUT answered %v", alg, w.Header())
			}
			if w := e.ok(req{method: "GET", target: key}); w.Header().Get(h) != "" {
				t.Fatalf("%s: GET without checksum mode gave %q", alg, w.Header().Get(h))
			}
			for _, m := range []string{"GET", "HEAD"} {
				w := e.ok(req{method: m, target: key, hdr: map[string]string{"x-amz-checksum-mode": "ENABLED"}})
				if w.Header().Get(h) != sumB64(alg, body) || w.Header().Get("x-amz-checksum-type") != "FULL_OBJECT" {
					t.Fatalf("%s %s: %v", alg, m, w.Header())
				}
			}
			if w := e.ok(req{method: "GET", target: key, hdr: map[string]string{"x-amz-checksum-mode": "ENABLED", "Range": "bytes=0-3"}}); w.Header().Get(h) != "" {
				t.Fatalf("%s: a range got the checksum", alg)
			}
			// A wrong value of the right form: BadDigest, nothing kept.
			e.want(e.do(req{method: "PUT", target: "/cksum/bad" + alg, body: body, hdr: map[string]string{h: sumB64(alg, []byte("other"))}}), 400, "BadDigest")
			e.want(e.do(req{method: "HEAD", target: "/cksum/bad" + alg}), 404, "")
		}
		if d, g := e.dataObjects(); d != len(checksumAlgorithms()) || g != 0 {
			t.Fatalf("%d data objects, %d garbage records", d, g)
		}
		// Listings name each object's algorithm.
		lr := decode[listBucketResult](t, e.ok(req{method: "GET", target: "/cksum?list-type=2"}))
		for _, c := range lr.Contents {
			if c.ChecksumAlgorithm != c.Key || c.ChecksumType != "FULL_OBJECT" {
				t.Fatalf("listing: %+v", c)
			}
		}
		e.want(e.do(req{method: "PUT", target: "/cksum/two", body: body, hdr: map[string]string{"x-amz-checksum-crc32": sumB64("CRC32", body), "x-amz-checksum-sha1": sumB64("SHA1", body)}}), 400, "InvalidRequest")
		e.want(e.do(req{method: "PUT", target: "/cksum/short", body: body, hdr: map[string]string{"x-amz-checksum-sha256": sumB64("CRC32", body)}}), 400, "InvalidRequest")

		// The SDK's algorithm alone: the gateway computes and keeps it.
		e.ok(req{method: "PUT", target: "/cksum/sdk", body: body, hdr: map[string]string{"x-amz-sdk-checksum-algorithm": "SHA256"}})
		if w := e.ok(req{method: "HEAD", target: "/cksum/sdk", hdr: map[string]string{"x-amz-checksum-mode": "ENABLED"}}); w.Header().Get("x-amz-checksum-sha256") != sumB64("SHA256", body) {
			t.Fatalf("sdk algorithm: %v", w.Header())
		}

		// In the trailer of an aws-chunked body.
		if w := e.trailerPut("/cksum/trailer", body, "x-amz-checksum-crc32c", sumB64("CRC32C", body)); w.Code != 200 {
			t.Fatalf("trailer: %d %s", w.Code, w.Body.String())
		}
		if w := e.ok(req{method: "HEAD", target: "/cksum/trailer", hdr: map[string]string{"x-amz-checksum-mode": "ENABLED"}}); w.Header().Get("x-amz-checksum-crc32c") != sumB64("CRC32C", body) {
			t.Fatalf("trailer: %v", w.Header())
		}
		e.want(e.trailerPut("/cksum/badtrailer", body, "x-amz-checksum-crc32c", sumB64("CRC32C", []byte("x"))), 400, "BadDigest")
		e.want(e.trailerPut("/cksum/notrailer", body, "x-amz-checksum-crc32c", ""), 400, "InvalidRequest")
		e.want(e.do(req{method: "HEAD", target: "/cksum/badtrailer"}), 404, "")
		e.want(e.do(req{method: "HEAD", target: "/cksum/notrailer"}), 404, "")
		// A signed trailer: checked, then its checksum; tampered, refused.
		big := bytes.Repeat([]byte("signed trailer "), 10000)
		if w := e.signedTrailerPut("/cksum/signed", big, "x-amz-checksum-crc32", sumB64("CRC32", big), false); w.Code != 200 {
			t.Fatalf("signed trailer: %d %s", w.Code, w.Body.String())
		}
		if w := e.ok(req{method: "HEAD", target: "/cksum/signed", hdr: map[string]string{"x-amz-checksum-mode": "ENABLED"}}); w.Header().Get("x-amz-checksum-crc32") != sumB64("CRC32", big) {
			t.Fatalf("signed trailer: %v", w.Header())
		}
		e.want(e.signedTrailerPut("/cksum/signedbad", big, "x-amz-checksum-crc32", sumB64("CRC32", big[1:]), false), 400, "BadDigest")
		e.want(e.signedTrailerPut("/cksum/tampered", big, "x-amz-checksum-crc32", sumB64("CRC32", big), true), 403, "SignatureDoesNotMatch")
		e.want(e.do(req{method: "HEAD", target: "/cksum/tampered"}), 404, "")
		e.want(e.do(req{method: "PUT", target: "/cksum/plaintrailer", body: body, hdr: map[string]string{"x-amz-trailer": "x-amz-checksum-crc32"}}), 400, "InvalidRequest")

		// A copy keeps the source's checksum, or computes the one asked.
		e.ok(req{method: "PUT", target: "/cksum/copy", hdr: map[string]string{"x-amz-copy-source": "/cksum/SHA1"}})
		if w := e.ok(req{method: "HEAD", target: "/cksum/copy", hdr: map[string]string{"x-amz-checksum-mode": "ENABLED"}}); w.Header().Get("x-amz-checksum-sha1") != sumB64("SHA1", body) {
			t.Fatalf("copy: %v", w.Header())
		}
		w := e.ok(req{method: "PUT", target: "/cksum/copy2", hdr: map[string]string{"x-amz-copy-source": "/cksum/SHA1", "x-amz-checksum-algorithm": "CRC64NVME"}})
		if r := decode[copyObjectResult](t, w); r.CRC64NVME != sumB64("CRC64NVME", body) || r.Type != "FULL_OBJECT" {
			t.Fatalf("copy with an algorithm: %s", w.Body.String())
		}
	})
}

// Multipart checksums (S3 API reference, CreateMultipartUpload's
// x-amz-checksum-algorithm and -type, UploadPart, ListParts,
// CompleteMultipartUpload): per-part checksums kept and listed, the
// composite "-N" and the full-object CRC, and the refusals.
func TestChecksumMultipart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/mck"})
		p1, p2 := bytes.Repeat([]byte{'a'}, 5<<20), []byte("the last part")
		create := func(key string, hdr map[string]string) string {
			w := e.ok(req{method: "POST", target: "/mck/" + key + "?uploads", hdr: hdr})
			if alg := hdr["x-amz-checksum-algorithm"]; w.Header().Get("x-amz-checksum-algorithm") != alg {
				t.Fatalf("create: %v", w.Header())
			}
			return decode[initiateMultipartUploadResult](t, w).UploadID
		}
		part := func(key, id string, n int, b []byte, hdr map[string]string) *httptest.ResponseRecorder {
			return e.do(req{method: "PUT", target: fmt.Sprintf("/mck/%s?partNumber=%d&uploadId=%s", key, n, id), body: b, hdr: hdr})
		}
		e.want(e.do(req{method: "POST", target: "/mck/x?uploads", hdr: map[string]string{"x-amz-checksum-algorithm": "CRC64NVME", "x-amz-checksum-type": "COMPOSITE"}}), 400, "InvalidRequest")
		e.want(e.do(req{method: "POST", target: "/mck/x?uploads", hdr: map[string]string{"x-amz-checksum-algorithm": "SHA1", "x-amz-checksum-type": "FULL_OBJECT"}}), 400, "InvalidRequest")

		// COMPOSITE SHA-256.
		id := create("comp", map[string]string{"x-amz-checksum-algorithm": "SHA256"})
		e.want(part("comp", id, 1, p1, map[string]string{"x-amz-checksum-crc32": sumB64("CRC32", p1)}), 400, "InvalidRequest")
		e.want(part("comp", id, 1, p1, map[string]string{"x-amz-checksum-sha256": sumB64("SHA256", p2)}), 400, "BadDigest")
		if w := part("comp", id, 1, p1, map[string]string{"x-amz-checksum-sha256": sumB64("SHA256", p1)}); w.Code != 200 || w.Header().Get("x-amz-checksum-sha256") != sumB64("SHA256", p1) {
			t.Fatalf("part 1: %d %v", w.Code, w.Header())
		}
		// A part without a checksum gets the upload's computed.
		e2 := part("comp", id, 2, p2, nil).Header().Get("ETag")
		lp := decode[listPartsResult](t, e.ok(req{method: "GET", target: "/mck/comp?uploadId=" + id}))
		if lp.ChecksumAlgorithm != "SHA256" || lp.ChecksumType != "COMPOSITE" || len(lp.Parts) != 2 || lp.Parts[0].SHA256 != sumB64("SHA256", p1) || lp.Parts[1].SHA256 != sumB64("SHA256", p2) {
			t.Fatalf("list parts: %+v", lp)
		}
		e1 := lp.Parts[0].ETag
		body := func(c1, c2 string) []byte {
			return []byte(fmt.Sprintf("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag>%s</Part><Part><PartNumber>2</PartNumber><ETag>%s</ETag>%s</Part></CompleteMultipartUpload>", e1, c1, e2, c2))
		}
		sha := func(b []byte) string { return "<ChecksumSHA256>" + sumB64("SHA256", b) + "</ChecksumSHA256>" }
		e.want(e.do(req{method: "POST", target: "/mck/comp?uploadId=" + id, body: body(sha(p1), "")}), 400, "InvalidRequest")
		e.want(e.do(req{method: "POST", target: "/mck/comp?uploadId=" + id, body: body(sha(p1), sha(p1))}), 400, "InvalidPart")
		cat := append(sumOf("SHA256", p1), sumOf("SHA256", p2)...)
		want := sumB64("SHA256", cat) + "-2"
		w := e.ok(req{method: "POST", target: "/mck/comp?uploadId=" + id, body: body(sha(p1), sha(p2))})
		if r := decode[completeMultipartUploadResult](t, w); r.SHA256 != want || r.Type != "COMPOSITE" {
			t.Fatalf("complete: %s, want %s", w.Body.String(), want)
		}
		if w := e.ok(req{method: "HEAD", target: "/mck/comp", hdr: map[string]string{"x-amz-checksum-mode": "ENABLED"}}); w.Header().Get("x-amz-checksum-sha256") != want || w.Header().Get("x-amz-checksum-type") != "COMPOSITE" {
			t.Fatalf("head: %v", w.Header())
		}

		// FULL_OBJECT CRC-64/NVME (its default type), checked against
		// the whole object's CRC the client may send.
		id = create("full", map[string]string{"x-amz-checksum-algorithm": "CRC64NVME"})
		e1 = part("full", id, 1, p1, nil).Header().Get("ETag")
		e2 = part("full", id, 2, p2, map[string]string{"x-amz-checksum-crc64nvme": sumB64("CRC64NVME", p2)}).Header().Get("ETag")
		whole := sumB64("CRC64NVME", append(append([]byte{}, p1...), p2...))
		e.want(e.do(req{method: "POST", target: "/mck/full?uploadId=" + id, body: body("", ""), hdr: map[string]string{"x-amz-checksum-crc64nvme": sumB64("CRC64NVME", p1)}}), 400, "BadDigest")
		e.want(e.do(req{method: "POST", target: "/mck/full?uploadId=" + id, body: body("", ""), hdr: map[string]string{"x-amz-checksum-type": "COMPOSITE"}}), 400, "InvalidRequest")
		w = e.ok(req{method: "POST", target: "/mck/full?uploadId=" + id, body: body("", ""), hdr: map[string]string{"x-amz-checksum-crc64nvme": whole}})
		if r := decode[completeMultipartUploadResult](t, w); r.CRC64NVME != whole || r.Type != "FULL_OBJECT" {
			t.Fatalf("complete: %s, want %s", w.Body.String(), whole)
		}
		if w := e.ok(req{method: "GET", target: "/mck/full", hdr: map[string]string{"x-amz-checksum-mode": "ENABLED"}}); w.Header().Get("x-amz-checksum-crc64nvme") != whole {
			t.Fatalf("get: %v", w.Header())
		}
	})
}

// FuzzChecksumHeaders: the checksum and attribute headers never panic
// the gateway, and a checksum accepted has its algorithm's length.
func FuzzChecksumHeaders(f *testing.F) {
	f.Add("CRC32", "AAAAAA==", "x-amz-checksum-crc32", "COMPOSITE", "ETag,ObjectParts")
	f.Add("sha256", "!", "x-amz-checksum-sha9", "FULL_OBJECT", ",,Checksum")
	f.Fuzz(func(t *testing.T, alg, value, trailer, typ, attrs string) {
		h := http.Header{}
		h.Set("X-Amz-Sdk-Checksum-Algorithm", alg)
		h.Set("X-Amz-Checksum-"+alg, value)
		h.Set("X-Amz-Trailer", trailer)
		if c, err := requestChecksum(h); err == nil && c.want != nil && len(c.want) != checksumSize(c.alg) {
			t.Fatalf("%s accepted with %d bytes", c.alg, len(c.want))
		}
		h.Set("X-Amz-Checksum-Algorithm", alg)
		h.Set("X-Amz-Checksum-Type", typ)
		if c, err := uploadChecksum(h); err == nil && !c.IsZero() && checksumSize(c.Algorithm) == 0 {
			t.Fatalf("upload algorithm %q accepted", c.Algorithm)
		}
		h.Set("X-Amz-Object-Attributes", attrs)
		_, _ = parseObjectAttributes(h)
	})
}

// completedChecksum keeps the parts' checksums in the entry only while
// the entry stays under the kv store's value limit.
func TestCompletedChecksumRoom(t *testing.T) {
	for _, c := range []struct {
		alg   string
		parts int
		kept  bool
	}{{"SHA256", 10, true}, {"SHA256", 900, true}, {"SHA256", 1100, false}, {"CRC32", 2000, true}, {"CRC32", 3000, false}} {
		var ps []meta.Part
		en := meta.Entry{ETag: "e-1"}
		for i := range c.parts {
			v := base64.StdEncoding.EncodeToString(make([]byte, checksumSize(c.alg)))
			ps = append(ps, meta.Part{Number: i + 1, Size: 5 << 20, ID: uint64(i + 1), Checksum: meta.Checksum{Algorithm: c.alg, Value: v}})
			en.Extents = append(en.Extents, meta.Extent{ID: uint64(i + 1), Size: 5 << 20})
			en.Size += 5 << 20
		}
		if err := completedChecksum(http.Header{}, meta.Checksum{Algorithm: c.alg, Type: checksumComposite}, ps, &en); err != nil {
			t.Fatal(err)
		}
		if (len(en.Parts) == c.parts) != c.kept || en.Checksum.IsZero() {
			t.Errorf("%d %s parts: %d kept", c.parts, c.alg, len(en.Parts))
		}
		if n := len(en.Encode()); n > kv.MaxValueLen {
			t.Errorf("%d %s parts: an entry of %d bytes", c.parts, c.alg, n)
		}
	}
}

// BenchmarkChecksums: what each algorithm costs a PUT per byte (4 MiB
// writes, as writeData hands them over).
func BenchmarkChecksums(b *testing.B) {
	buf := make([]byte, 4<<20)
	for _, alg := range checksumAlgorithms() {
		b.Run(alg, func(b *testing.B) {
			h := newChecksumHash(alg)
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				h.Write(buf)
			}
		})
	}
}

// BenchmarkFullObjectComplete: combining the CRCs of 10,000 parts, the
// most an upload has, into the whole object's (parts of one size but the
// last, as clients cut them).
func BenchmarkFullObjectComplete(b *testing.B) {
	ps := make([]meta.Part, 10000)
	for i := range ps {
		ps[i] = meta.Part{Number: i + 1, Size: 8 << 20, Checksum: meta.Checksum{Algorithm: "CRC64NVME", Value: base64.StdEncoding.EncodeToString(beBytes(uint64(i), 8))}}
	}
	ps[len(ps)-1].Size = 12345
	for b.Loop() {
		if _, err := multipartChecksum(meta.Checksum{Algorithm: "CRC64NVME", Type: checksumFullObject}, ps); err != nil {
			b.Fatal(err)
		}
	}
}
