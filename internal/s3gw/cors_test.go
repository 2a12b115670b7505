package s3gw

import (
	"bytes"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

const corsDoc = `<CORSConfiguration>
 <CORSRule><ID>site</ID><AllowedOrigin>https://*.example.com</AllowedOrigin><AllowedMethod>PUT</AllowedMethod><AllowedMethod>GET</AllowedMethod>
  <AllowedHeader>x-amz-*</AllowedHeader><AllowedHeader>Content-Type</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3000</MaxAgeSeconds></CORSRule>
 <CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedMethod>HEAD</AllowedMethod></CORSRule>
</CORSConfiguration>`

// CORS (PutBucketCors, GetBucketCors, DeleteBucketCors; preflight OPTIONS
// and the headers of actual requests), with its errors.
func TestCORS(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/corsb"})
		e.ok(req{method: "PUT", target: "/corsb/o", body: []byte("hi"), hdr: map[string]string{"X-Amz-Acl": "public-read"}})
		e.want(e.do(req{method: "GET", target: "/corsb?cors"}), 404, "NoSuchCORSConfiguration")
		pre := func(origin, method, headers string) *httpRecorder {
			hdr := map[string]string{}
			for k, v := range map[string]string{"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers} {
				if v != "" {
					hdr[k] = v
				}
			}
			return e.do(req{method: "OPTIONS", target: "/corsb/o", anonymous: true, hdr: hdr})
		}
		// No configuration: refused.
		e.want(pre("https://a.example.com", "GET", ""), 403, "AccessForbidden")

		e.ok(req{method: "PUT", target: "/corsb?cors", body: []byte(corsDoc)})
		got := decode[corsConfiguration](t, e.ok(req{method: "GET", target: "/corsb?cors"}))
		if len(got.Rules) != 2 || got.Rules[0].ID != "site" || *got.Rules[0].MaxAgeSeconds != 3000 || got.Rules[1].MaxAgeSeconds != nil ||
			!reflect.DeepEqual(got.Rules[0].AllowedMethod, []string{"PUT", "GET"}) || !reflect.DeepEqual(got.Rules[0].AllowedHeader, []string{"x-amz-*", "Content-Type"}) {
			t.Fatalf("GetBucketCors: %+v", got)
		}

		// Preflights: the first matching rule answers.
		w := pre("https://app.example.com", "PUT", "X-Amz-Meta-A, content-type")
		e.want(w, 200, "")
		h := w.Header()
		if h.Get("Access-Control-Allow-Origin") != "https://app.example.com" || h.Get("Access-Control-Allow-Methods") != "PUT, GET" ||
			h.Get("Access-Control-Allow-Headers") != "x-amz-meta-a, content-type" || h.Get("Access-Control-Max-Age") != "3000" ||
			h.Get("Access-Control-Expose-Headers") != "ETag" || !slicesHas(h.Values("Vary"), "Origin") {
			t.Fatalf("preflight headers: %v", h)
		}
		w = pre("https://elsewhere.org", "GET", "")
		e.want(w, 200, "")
		if w.Header().Get("Access-Control-Allow-Origin") != "*" || w.Header().Get("Access-Control-Allow-Methods") != "GET, HEAD" || w.Header().Get("Access-Control-Max-Age") != "" {
			t.Fatalf("wildcard preflight headers: %v", w.Header())
		}
		for name, c := range map[string][3]string{
			"method no rule allows":  {"https://elsewhere.org", "PUT", ""},
			"header no rule allows":  {"https://app.example.com", "PUT", "authorization"},
			"origin beside the glob": {"http://app.example.com", "PUT", ""},
			"header on the * rule":   {"https://elsewhere.org", "GET", "x-amz-date"},
		} {
			if w := pre(c[0], c[1], c[2]); w.Code != 403 || !strings.Contains(w.Body.String(), "This CORS request is not allowed") {
				t.Errorf("%s: %d %s", name, w.Code, w.Body.String())
			}
		}
		e.want(pre("", "GET", ""), 400, "BadRequest")
		e.want(pre("https://a.example.com", "", ""), 400, "BadRequest")
		e.want(e.do(req{method: "OPTIONS", target: "/nocorsbucket/o", anonymous: true, hdr: map[string]string{"Origin": "https://x", "Access-Control-Request-Method": "GET"}}), 404, "NoSuchBucket")

		// Actual requests whose Origin a rule allows get the headers.
		w = e.ok(req{method: "GET", target: "/corsb/o", anonymous: true, hdr: map[string]string{"Origin": "https://app.example.com"}})
		if w.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" || w.Header().Get("Access-Control-Expose-Headers") != "ETag" ||
			!slicesHas(w.Header().Values("Vary"), "Origin") || w.Body.String() != "hi" {
			t.Fatalf("actual GET: %v %q", w.Header(), w.Body.String())
		}
		w = e.ok(req{method: "HEAD", target: "/corsb/o", hdr: map[string]string{"Origin": "https://other.net"}})
		if w.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("actual HEAD: %v", w.Header())
		}
		w = e.ok(req{method: "GET", target: "/corsb/o"})
		if w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("a request without Origin got CORS headers: %v", w.Header())
		}
		w = e.ok(req{method: "DELETE", target: "/corsb/gone", hdr: map[string]string{"Origin": "https://app.example.com"}})
		if w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("a method no rule allows got CORS headers: %v", w.Header())
		}

		// Errors of PutBucketCors; nothing changes.
		rule := func(inner string) string {
			return "<CORSConfiguration><CORSRule>" + inner + "</CORSRule></CORSConfiguration>"
		}
		var many strings.Builder
		many.WriteString("<CORSConfiguration>")
		for range 101 {
			many.WriteString("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>")
		}
		many.WriteString("</CORSConfiguration>")
		for name, c := range map[string][2]string{
			"bad method":         {rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>"), "InvalidRequest"},
			"two origin stars":   {rule("<AllowedOrigin>*.*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"), "InvalidRequest"},
			"two header stars":   {rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>**</AllowedHeader>"), "InvalidRequest"},
			"no origin":          {rule("<AllowedMethod>GET</AllowedMethod>"), "MalformedXML"},
			"no method":          {rule("<AllowedOrigin>*</AllowedOrigin>"), "MalformedXML"},
			"no rule":            {"<CORSConfiguration></CORSConfiguration>", "MalformedXML"},
			"not XML":            {"<CORSConfiguration><CORSRule>", "MalformedXML"},
			"101 rules":          {many.String(), "MalformedXML"},
			"over 64 KiB":        {rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><ExposeHeader>" + strings.Repeat("h", 64<<10) + "</ExposeHeader>"), "MaxMessageLengthExceeded"},
			"negative max age":   {rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>-1</MaxAgeSeconds>"), "MalformedXML"},
			"non-number max age": {rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>x</MaxAgeSeconds>"), "MalformedXML"},
		} {
			w := e.do(req{method: "PUT", target: "/corsb?cors", body: []byte(c[0])})
			if w.Code != 400 || !strings.Contains(w.Body.String(), "<Code>"+c[1]+"</Code>") {
				t.Errorf("%s: %d %s", name, w.Code, w.Body.String())
			}
		}
		if got := decode[corsConfiguration](t, e.ok(req{method: "GET", target: "/corsb?cors"})); len(got.Rules) != 2 {
			t.Fatalf("a refused PutBucketCors changed the rules: %+v", got)
		}

		// The owner's only.
		e.want(e.do(req{method: "GET", target: "/corsb?cors", creds: &e.bob}), 403, "AccessDenied")
		e.want(e.do(req{method: "PUT", target: "/corsb?cors", creds: &e.bob, body: []byte(corsDoc)}), 403, "AccessDenied")
		e.want(e.do(req{method: "DELETE", target: "/corsb?cors", anonymous: true}), 403, "AccessDenied")

		e.want(e.do(req{method: "DELETE", target: "/corsb?cors"}), 204, "")
		e.want(e.do(req{method: "GET", target: "/corsb?cors"}), 404, "NoSuchCORSConfiguration")
		e.want(pre("https://a.example.com", "GET", ""), 403, "AccessForbidden")
		b, err := e.gw.Meta().GetBucket(t.Context(), "corsb")
		if err != nil || b.CORS != nil {
			t.Fatalf("bucket record after delete: %+v %v", b, err)
		}
	})
}

func slicesHas(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// The matcher, case by case.
func TestCORSMatch(t *testing.T) {
	rules := []meta.CORSRule{
		{ID: "a", AllowedOrigins: []string{"https://*.x.com", "http://exact"}, AllowedMethods: []string{"PUT"}, AllowedHeaders: []string{"*"}},
		{ID: "b", AllowedOrigins: []string{"*"}, AllowedMethods: []string{"GET"}, AllowedHeaders: []string{"X-Amz-*"}},
	}
	cases := []struct {
		origin, method string
		hdrs           []string
		id, pattern    string
	}{
		{"https://a.x.com", "PUT", []string{"anything"}, "a", "https://*.x.com"},
		{"https://.x.com", "PUT", nil, "a", "https://*.x.com"},
		{"https://x.com", "PUT", nil, "", ""},
		{"http://exact", "PUT", nil, "a", "http://exact"},
		{"http://exactly", "PUT", nil, "", ""},
		{"http://exact", "GET", []string{"x-amz-date"}, "b", "*"},
		{"http://exact", "GET", []string{"x-amz-date", "range"}, "", ""},
		{"http://exact", "DELETE", nil, "", ""},
	}
	for _, c := range cases {
		r, p, ok := corsMatch(rules, c.origin, c.method, c.hdrs)
		if ok != (c.id != "") || r.ID != c.id || p != c.pattern {
			t.Errorf("%s %s %v: %q %q %v, want %q %q", c.origin, c.method, c.hdrs, r.ID, p, ok, c.id, c.pattern)
		}
	}
	for _, c := range []struct {
		p, s string
		ok   bool
	}{{"*", "", true}, {"a*", "a", true}, {"a*b", "ab", true}, {"a*b", "a", false}, {"ab*ba", "aba", false}, {"x", "x", true}, {"x", "X", false}} {
		if wildMatch(c.p, c.s) != c.ok {
			t.Errorf("wildMatch(%q, %q) != %v", c.p, c.s, c.ok)
		}
	}
}

// FuzzCORS: a CORSConfiguration body never panics the gateway; what is
// refused is MalformedXML, InvalidRequest or InvalidArgument, and what is
// accepted re-encodes through the bucket record unchanged.
func FuzzCORS(f *testing.F) {
	f.Add([]byte(corsDoc), "https://a.example.com", "PUT")
	f.Add([]byte("<CORSConfiguration><CORSRule><AllowedOrigin>**</AllowedOrigin></CORSRule>"), "", "GET")
	codes := map[string]bool{"MalformedXML": true, "InvalidRequest": true, "InvalidArgument": true, "MaxMessageLengthExceeded": true}
	f.Fuzz(func(t *testing.T, body []byte, origin, method string) {
		rules, err := parseCORS(httptest.NewRequest("PUT", "/b?cors", bytes.NewReader(body)))
		if err != nil {
			if c := translate(err).Code; !codes[c] {
				t.Fatalf("%q: %v -> %s", body, err, c)
			}
			return
		}
		b, err := meta.DecodeBucket(meta.Bucket{Name: "b", CORS: rules}.Encode())
		if err != nil || !reflect.DeepEqual(b.CORS, rules) {
			t.Fatalf("rules re-encode differently: %+v %+v %v", rules, b.CORS, err)
		}
		corsMatch(rules, origin, method, []string{strings.ToLower(origin)})
	})
}
