package s3gw

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

func taggingBody(kv ...string) []byte {
	var b strings.Builder
	b.WriteString("<Tagging><TagSet>")
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, "<Tag><Key>%s</Key><Value>%s</Value></Tag>", xmlEscape(kv[i]), xmlEscape(kv[i+1]))
	}
	b.WriteString("</TagSet></Tagging>")
	return []byte(b.String())
}

// tagsOf reads a Tagging document back as key, value, key, value...
func tagsOf(t *testing.T, w *httpRecorder) []string {
	t.Helper()
	doc := decode[taggingXML](t, w)
	out := []string{}
	if doc.TagSet == nil {
		t.Fatalf("no TagSet: %s", w.Body.String())
	}
	for _, tg := range doc.TagSet.Tags {
		out = append(out, *tg.Key, *tg.Value)
	}
	return out
}

// Object tagging (S3 API reference: PutObjectTagging, GetObjectTagging,
// DeleteObjectTagging; x-amz-tagging on PutObject, CopyObject and
// CreateMultipartUpload; x-amz-tagging-count), its limits and errors.
func TestObjectTagging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/tagb"})
		e.ok(req{method: "PUT", target: "/tagb/o", body: []byte("data"), hdr: map[string]string{"X-Amz-Tagging": "z=1&b%20c=d%26e&empty="}})
		h := e.ok(req{method: "HEAD", target: "/tagb/o"})
		if got := h.Header().Get("x-amz-tagging-count"); got != "3" {
			t.Fatalf("HEAD x-amz-tagging-count %q", got)
		}
		if got := tagsOf(t, e.ok(req{method: "GET", target: "/tagb/o?tagging"})); !reflect.DeepEqual(got, []string{"z", "1", "b c", "d&e", "empty", ""}) {
			t.Fatalf("tags from the header: %q", got)
		}
		// Replace, in order; Unicode limits count characters, not bytes.
		long := strings.Repeat("é", maxTagKey)
		e.ok(req{method: "PUT", target: "/tagb/o?tagging", body: taggingBody("k2", "v2", long, strings.Repeat("ü", maxTagValue))})
		got := tagsOf(t, e.ok(req{method: "GET", target: "/tagb/o?tagging"}))
		if len(got) != 4 || got[0] != "k2" || got[2] != long {
			t.Fatalf("tags after PutObjectTagging: %q", got)
		}
		if w := e.ok(req{method: "GET", target: "/tagb/o"}); w.Header().Get("x-amz-tagging-count") != "2" || w.Body.String() != "data" {
			t.Fatalf("GET: count %q body %q", w.Header().Get("x-amz-tagging-count"), w.Body.String())
		}

		// Errors: nothing changes.
		eleven := []string{}
		for i := range 11 {
			eleven = append(eleven, fmt.Sprintf("k%d", i), "v")
		}
		for name, body := range map[string][]byte{
			"11 tags":        taggingBody(eleven...),
			"duplicate keys": taggingBody("a", "1", "a", "2"),
			"empty key":      taggingBody("", "1"),
			"long key":       taggingBody(strings.Repeat("k", maxTagKey+1), "1"),
			"long value":     taggingBody("k", strings.Repeat("v", maxTagValue+1)),
		} {
			if w := e.do(req{method: "PUT", target: "/tagb/o?tagging", body: body}); w.Code != 400 || !strings.Contains(w.Body.String(), "<Code>InvalidTag</Code>") {
				t.Errorf("%s: %d %s", name, w.Code, w.Body.String())
			}
		}
		e.want(e.do(req{method: "PUT", target: "/tagb/o?tagging", body: []byte("<Tagging><TagSet><Tag><Key>a</Key>")}), 400, "MalformedXML")
		e.want(e.do(req{method: "PUT", target: "/tagb/o?tagging", body: []byte("<Tagging></Tagging>")}), 400, "MalformedXML")
		e.want(e.do(req{method: "PUT", target: "/tagb/o?tagging", body: []byte("<Tagging><TagSet><Tag><Key>a</Key></Tag></TagSet></Tagging>")}), 400, "MalformedXML")
		if got := tagsOf(t, e.ok(req{method: "GET", target: "/tagb/o?tagging"})); len(got) != 4 {
			t.Fatalf("a refused PutObjectTagging changed the tags: %q", got)
		}
		e.want(e.do(req{method: "GET", target: "/tagb/nope?tagging"}), 404, "NoSuchKey")
		e.want(e.do(req{method: "PUT", target: "/tagb/nope?tagging", body: taggingBody("a", "b")}), 404, "NoSuchKey")
		var hdr []string
		for i := range 11 {
			hdr = append(hdr, fmt.Sprintf("k%d=v", i))
		}
		e.want(e.do(req{method: "PUT", target: "/tagb/h", body: []byte("x"), hdr: map[string]string{"X-Amz-Tagging": strings.Join(hdr, "&")}}), 400, "InvalidTag")
		e.want(e.do(req{method: "PUT", target: "/tagb/h", body: []byte("x"), hdr: map[string]string{"X-Amz-Tagging": "a=1&a=2"}}), 400, "InvalidTag")
		e.want(e.do(req{method: "HEAD", target: "/tagb/h"}), 404, "")

		// Delete: an empty tag set, no count.
		e.want(e.do(req{method: "DELETE", target: "/tagb/o?tagging"}), 204, "")
		if got := tagsOf(t, e.ok(req{method: "GET", target: "/tagb/o?tagging"})); len(got) != 0 {
			t.Fatalf("tags after DeleteObjectTagging: %q", got)
		}
		if c := e.ok(req{method: "HEAD", target: "/tagb/o"}).Header().Get("x-amz-tagging-count"); c != "" {
			t.Fatalf("x-amz-tagging-count %q without tags", c)
		}
		// An empty TagSet is a delete too.
		e.ok(req{method: "PUT", target: "/tagb/o?tagging", body: taggingBody("a", "1")})
		e.ok(req{method: "PUT", target: "/tagb/o?tagging", body: taggingBody()})
		if got := tagsOf(t, e.ok(req{method: "GET", target: "/tagb/o?tagging"})); len(got) != 0 {
			t.Fatalf("tags after an empty PutObjectTagging: %q", got)
		}

		// Copy: COPY keeps the source's tags, REPLACE takes the header's,
		// and a copy onto itself that replaces the tags is allowed.
		e.ok(req{method: "PUT", target: "/tagb/src", body: []byte("s"), hdr: map[string]string{"X-Amz-Tagging": "from=src"}})
		e.ok(req{method: "PUT", target: "/tagb/c1", hdr: map[string]string{"X-Amz-Copy-Source": "/tagb/src", "X-Amz-Tagging": "ignored=1"}})
		if got := tagsOf(t, e.ok(req{method: "GET", target: "/tagb/c1?tagging"})); !reflect.DeepEqual(got, []string{"from", "src"}) {
			t.Fatalf("COPY tags: %q", got)
		}
		e.ok(req{method: "PUT", target: "/tagb/c2", hdr: map[string]string{"X-Amz-Copy-Source": "/tagb/src", "X-Amz-Tagging-Directive": "REPLACE", "X-Amz-Tagging": "new=" + url.QueryEscape("a/b")}})
		if got := tagsOf(t, e.ok(req{method: "GET", target: "/tagb/c2?tagging"})); !reflect.DeepEqual(got, []string{"new", "a/b"}) {
			t.Fatalf("REPLACE tags: %q", got)
		}
		e.want(e.do(req{method: "PUT", target: "/tagb/c3", hdr: map[string]string{"X-Amz-Copy-Source": "/tagb/src", "X-Amz-Tagging-Directive": "MERGE"}}), 400, "InvalidArgument")
		e.want(e.do(req{method: "PUT", target: "/tagb/src", hdr: map[string]string{"X-Amz-Copy-Source": "/tagb/src"}}), 400, "InvalidRequest")
		e.ok(req{method: "PUT", target: "/tagb/src", hdr: map[string]string{"X-Amz-Copy-Source": "/tagb/src", "X-Amz-Tagging-Directive": "REPLACE", "X-Amz-Tagging": "self=1"}})
		if got := tagsOf(t, e.ok(req{method: "GET", target: "/tagb/src?tagging"})); !reflect.DeepEqual(got, []string{"self", "1"}) {
			t.Fatalf("self-copy tags: %q", got)
		}

		// Multipart: the upload's tags become the object's.
		init := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/tagb/mp?uploads", hdr: map[string]string{"X-Amz-Tagging": "mp=yes"}}))
		etag := e.ok(req{method: "PUT", target: "/tagb/mp?partNumber=1&uploadId=" + init.UploadID, body: []byte("one part")}).Header().Get("ETag")
		e.ok(req{method: "POST", target: "/tagb/mp?uploadId=" + init.UploadID, body: completeBody("1", etag)})
		if got := tagsOf(t, e.ok(req{method: "GET", target: "/tagb/mp?tagging"})); !reflect.DeepEqual(got, []string{"mp", "yes"}) {
			t.Fatalf("multipart tags: %q", got)
		}
		e.want(e.do(req{method: "POST", target: "/tagb/mp2?uploads", hdr: map[string]string{"X-Amz-Tagging": "a=1&a=1"}}), 400, "InvalidTag")

		// Access: READ reads the tags, WRITE_ACP changes them.
		e.want(e.do(req{method: "GET", target: "/tagb/c1?tagging", creds: &e.bob}), 403, "AccessDenied")
		e.want(e.do(req{method: "PUT", target: "/tagb/c1?tagging", creds: &e.bob, body: taggingBody("x", "y")}), 403, "AccessDenied")
		e.ok(req{method: "PUT", target: "/tagb/c1?acl", hdr: map[string]string{"X-Amz-Acl": "public-read"}})
		e.ok(req{method: "GET", target: "/tagb/c1?tagging", creds: &e.bob})
		e.ok(req{method: "GET", target: "/tagb/c1?tagging", anonymous: true})
		e.want(e.do(req{method: "PUT", target: "/tagb/c1?tagging", creds: &e.bob, body: taggingBody("x", "y")}), 403, "AccessDenied")
		e.want(e.do(req{method: "DELETE", target: "/tagb/c1?tagging", creds: &e.bob}), 403, "AccessDenied")
		e.ok(req{method: "PUT", target: "/tagb/c1?acl", hdr: map[string]string{"X-Amz-Grant-Write-Acp": `id="bob"`, "X-Amz-Grant-Full-Control": `id="alice"`}})
		e.ok(req{method: "PUT", target: "/tagb/c1?tagging", creds: &e.bob, body: taggingBody("by", "bob")})
		e.ok(req{method: "PUT", target: "/tagb/c1?tagging", creds: &e.bob, body: taggingBody("by", "bob")})
		// A tag change keeps the entry's other fields.
		if w := e.ok(req{method: "GET", target: "/tagb/c1"}); w.Body.String() != "s" {
			t.Fatalf("object after tagging: %q", w.Body.String())
		}
	})
}

// Bucket tagging (PutBucketTagging, GetBucketTagging,
// DeleteBucketTagging): 50 tags at most, NoSuchTagSet when none, the
// owner's only.
func TestBucketTagging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/btag"})
		e.want(e.do(req{method: "GET", target: "/btag?tagging"}), 404, "NoSuchTagSet")
		e.want(e.do(req{method: "PUT", target: "/btag?tagging", body: taggingBody("env", "prod", "team", "s3")}), 204, "")
		if got := tagsOf(t, e.ok(req{method: "GET", target: "/btag?tagging"})); !reflect.DeepEqual(got, []string{"env", "prod", "team", "s3"}) {
			t.Fatalf("bucket tags: %q", got)
		}
		var fifty, fiftyOne []string
		for i := range 51 {
			if i < 50 {
				fifty = append(fifty, fmt.Sprintf("k%d", i), "v")
			}
			fiftyOne = append(fiftyOne, fmt.Sprintf("k%d", i), "v")
		}
		e.want(e.do(req{method: "PUT", target: "/btag?tagging", body: taggingBody(fiftyOne...)}), 400, "InvalidTag")
		e.want(e.do(req{method: "PUT", target: "/btag?tagging", body: taggingBody("a", "1", "a", "2")}), 400, "InvalidTag")
		e.want(e.do(req{method: "PUT", target: "/btag?tagging", body: []byte("<Tagging>")}), 400, "MalformedXML")
		e.ok(req{method: "PUT", target: "/btag?tagging", body: taggingBody(fifty...)})
		if got := tagsOf(t, e.ok(req{method: "GET", target: "/btag?tagging"})); len(got) != 100 {
			t.Fatalf("%d bucket tag fields, want 100", len(got))
		}
		e.want(e.do(req{method: "GET", target: "/btag?tagging", creds: &e.bob}), 403, "AccessDenied")
		e.want(e.do(req{method: "PUT", target: "/btag?tagging", creds: &e.bob, body: taggingBody("a", "b")}), 403, "AccessDenied")
		e.want(e.do(req{method: "DELETE", target: "/btag?tagging", anonymous: true}), 403, "AccessDenied")
		e.want(e.do(req{method: "GET", target: "/nobucket?tagging"}), 404, "NoSuchBucket")
		e.want(e.do(req{method: "DELETE", target: "/btag?tagging"}), 204, "")
		e.want(e.do(req{method: "GET", target: "/btag?tagging"}), 404, "NoSuchTagSet")
		e.want(e.do(req{method: "DELETE", target: "/btag?tagging"}), 204, "")
		// A policy may let another user read the tags.
		e.ok(req{method: "PUT", target: "/btag?tagging", body: taggingBody("a", "b")})
		e.ok(req{method: "PUT", target: "/btag?policy", body: []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["bob"]},"Action":"s3:GetBucketTagging","Resource":"arn:aws:s3:::btag"}]}`)})
		e.ok(req{method: "GET", target: "/btag?tagging", creds: &e.bob})
		b, err := e.gw.Meta().GetBucket(t.Context(), "btag")
		if err != nil || !reflect.DeepEqual(b.Tags, []meta.Tag{{Key: "a", Value: "b"}}) {
			t.Fatalf("bucket record: %+v %v", b, err)
		}
	})
}

// The x-amz-tagging header, parsed.
func TestHeaderTags(t *testing.T) {
	cases := []struct {
		in   string
		want []meta.Tag
		code string
	}{
		{"a=1", []meta.Tag{{Key: "a", Value: "1"}}, ""},
		{"a=1&b=2", []meta.Tag{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}}, ""},
		{"a", []meta.Tag{{Key: "a", Value: ""}}, ""},
		{"a+b=c%3Dd", []meta.Tag{{Key: "a b", Value: "c=d"}}, ""},
		{"", nil, ""},
		{"a=%zz", nil, "InvalidArgument"},
		{"=1", nil, "InvalidTag"},
		{"a=1&a=1", nil, "InvalidTag"},
	}
	for _, c := range cases {
		h := map[string][]string{"X-Amz-Tagging": {c.in}}
		got, set, err := headerTags(h)
		if c.code != "" {
			if err == nil || translate(err).Code != c.code {
				t.Errorf("%q: %v, want %s", c.in, err, c.code)
			}
			continue
		}
		if err != nil || !set || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v %v %v, want %v", c.in, got, set, err, c.want)
		}
	}
	if _, set, err := headerTags(map[string][]string{}); set || err != nil {
		t.Errorf("no header: set %v, %v", set, err)
	}
}

// FuzzTagging: a Tagging body or an x-amz-tagging header never panics the
// gateway; what is refused is InvalidTag, MalformedXML or
// InvalidArgument, and what is accepted keeps S3's limits.
func FuzzTagging(f *testing.F) {
	f.Add(taggingBody("a", "1", "b", ""), "a=1&b=%20")
	f.Add([]byte(`<Tagging><TagSet><Tag><Key>a</Key></Tag>`), "a=%zz")
	f.Add(taggingBody("a", "1", "a", "2"), "=&=")
	codes := map[string]bool{"InvalidTag": true, "MalformedXML": true, "InvalidArgument": true, "MaxMessageLengthExceeded": true}
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		r := httptest.NewRequest("PUT", "/b/k?tagging", bytes.NewReader(body))
		r.Header.Set("X-Amz-Tagging", header)
		for _, parse := range []func() ([]meta.Tag, error){
			func() ([]meta.Tag, error) { return parseTagging(r, maxObjectTags) },
			func() ([]meta.Tag, error) { tags, _, err := headerTags(r.Header); return tags, err },
		} {
			tags, err := parse()
			if err != nil {
				if c := translate(err).Code; !codes[c] {
					t.Fatalf("%q / %q: %v -> %s", body, header, err, c)
				}
				continue
			}
			if err := checkTags(tags, maxObjectTags); err != nil {
				t.Fatalf("accepted tags fail the limits: %v", err)
			}
		}
	})
}

// A PutObjectTagging racing an overwrite never undoes it: the tags are
// swapped in only over the entry they were checked against, so an
// overwrite that lands after the check (or after the re-read, just
// before the swap) wins, the tagging is answered SlowDown, and the
// object reads as the overwrite wrote it.
func TestObjectTaggingRacesOverwrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/tagrace"})
		for _, afterRead := range []bool{false, true} {
			e.ok(req{method: "PUT", target: "/tagrace/k", body: []byte("old")})
			next := fmt.Sprintf("new, landing after the read: %v", afterRead)
			e.gw.tagRaceHook = func(at bool) {
				if at == afterRead {
					e.gw.tagRaceHook = nil
					e.ok(req{method: "PUT", target: "/tagrace/k", body: []byte(next)})
				}
			}
			e.want(e.do(req{method: "PUT", target: "/tagrace/k?tagging", body: taggingBody("lost", "yes")}), 503, "SlowDown")
			w := e.ok(req{method: "GET", target: "/tagrace/k"})
			if w.Body.String() != next || w.Header().Get("x-amz-tagging-count") != "" {
				t.Fatalf("after the race (%v) the object reads %q with %q tags", afterRead, w.Body.String(), w.Header().Get("x-amz-tagging-count"))
			}
			// Retried, it applies.
			e.ok(req{method: "PUT", target: "/tagrace/k?tagging", body: taggingBody("kept", "yes")})
			if got := tagsOf(t, e.ok(req{method: "GET", target: "/tagrace/k?tagging"})); !reflect.DeepEqual(got, []string{"kept", "yes"}) {
				t.Fatalf("tags after the retry: %q", got)
			}
		}
	})
}
