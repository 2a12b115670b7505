package s3gw

import (
	"net/url"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

func keysOf(r listBucketResult) string {
	var parts []string
	for _, c := range r.Contents {
		parts = append(parts, c.Key)
	}
	for _, p := range r.CommonPrefixes {
		parts = append(parts, p.Prefix)
	}
	return strings.Join(parts, "|")
}

// ListObjectsV2 and ListObjects (S3 API reference): prefix, delimiter,
// start-after, continuation tokens, markers, max-keys, encoding-type.
func TestListObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/lst"})
		keys := []string{"a", "b/1", "b/2", "b/c/3", "c d", "d/1", "e"}
		for _, k := range keys {
			e.ok(req{method: "PUT", target: "/lst/" + strings.ReplaceAll(k, " ", "%20"), body: []byte(k)})
		}
		list := func(q string) listBucketResult {
			return decode[listBucketResult](t, e.ok(req{method: "GET", target: "/lst?" + q}))
		}
		cases := []struct{ q, want string }{
			{"list-type=2", "a|b/1|b/2|b/c/3|c d|d/1|e"},
			{"list-type=2&prefix=b/", "b/1|b/2|b/c/3"},
			{"list-type=2&delimiter=/", "a|c d|e|b/|d/"},
			{"list-type=2&prefix=b/&delimiter=/", "b/1|b/2|b/c/"},
			{"list-type=2&start-after=b/2", "b/c/3|c d|d/1|e"},
			{"list-type=2&prefix=zz", ""},
			{"prefix=b/&marker=b/1", "b/2|b/c/3"},
			{"delimiter=/&marker=b/", "c d|e|d/"},
			{"delimiter=/&marker=b/1", "c d|e|d/"},
			{"list-type=2&delimiter=/&start-after=b/", "c d|e|d/"},
		}
		for _, c := range cases {
			got := keysOf(list(c.q))
			if got != c.want {
				t.Errorf("%s: %q, want %q", c.q, got, c.want)
			}
		}
		// Pages of two, by continuation token: every key once, in order.
		var all []string
		token := ""
		for pages := 0; ; pages++ {
			q := "list-type=2&max-keys=2&delimiter=/"
			if token != "" {
				q += "&continuation-token=" + url.QueryEscape(token)
			}
			r := list(q)
			if *r.KeyCount != len(r.Contents)+len(r.CommonPrefixes) || *r.KeyCount > 2 {
				t.Fatalf("page %d: key count %d", pages, *r.KeyCount)
			}
			for _, c := range r.Contents {
				all = append(all, c.Key)
			}
			for _, p := range r.CommonPrefixes {
				all = append(all, p.Prefix)
			}
			if !r.IsTruncated {
				break
			}
			token = r.NextContinuationToken
			if pages > 10 {
				t.Fatal("too many pages")
			}
		}
		if got := strings.Join(all, ","); got != "a,b/,c d,d/,e" {
			t.Fatalf("paged: %s", got)
		}
		// V1 pages by NextMarker (with a delimiter) or the last key.
		r := list("max-keys=3")
		if !r.IsTruncated || len(r.Contents) != 3 || r.NextMarker != "" {
			t.Fatalf("v1 page: %+v", r)
		}
		r = list("max-keys=1&delimiter=/&marker=a")
		if !r.IsTruncated || r.NextMarker != "b/" {
			t.Fatalf("v1 next marker: %+v", r)
		}
		if r := list("list-type=2&max-keys=0"); r.IsTruncated || len(r.Contents) != 0 {
			t.Fatalf("max-keys 0: %+v", r)
		}
		r = list("list-type=2&encoding-type=url&prefix=c")
		if len(r.Contents) != 1 || r.Contents[0].Key != "c+d" || r.EncodingType != "url" {
			t.Fatalf("encoding-type=url: %+v", r)
		}
		// ListObjectVersions of a bucket never versioned: every object is
		// its one version, "null".
		v := decode[listedVersions](t, e.ok(req{method: "GET", target: "/lst?versions&max-keys=2&delimiter=/"}))
		if len(v.Entries()) != 1 || v.Entries()[0].Key != "a" || v.Entries()[0].VersionID != "null" || !v.Entries()[0].IsLatest ||
			len(v.CommonPrefixes) != 1 || !v.IsTruncated || v.NextKeyMarker != "b/" {
			t.Fatalf("versions: %s %v %q", v, v.IsTruncated, v.NextKeyMarker)
		}
		v = decode[listedVersions](t, e.ok(req{method: "GET", target: "/lst?versions&key-marker=" + url.QueryEscape(v.NextKeyMarker) + "&delimiter=/"}))
		if got := len(v.Entries()) + len(v.CommonPrefixes); got != 3 || v.IsTruncated {
			t.Fatalf("versions page 2: %+v", v)
		}
		e.ok(req{method: "GET", target: "/lst/a?versionId=null"})
		e.want(e.do(req{method: "GET", target: "/lst/a?versionId=3"}), 400, "InvalidArgument")
		e.want(e.do(req{method: "GET", target: "/lst/a?versionId=" + meta.NewVersionID(3)}), 404, "NoSuchVersion")
		e.want(e.do(req{method: "GET", target: "/lst?list-type=2&continuation-token=%25%25"}), 400, "InvalidArgument")
		e.want(e.do(req{method: "GET", target: "/lst?max-keys=-1"}), 400, "InvalidArgument")
		e.want(e.do(req{method: "GET", target: "/lst?encoding-type=xml"}), 400, "InvalidArgument")
		e.want(e.do(req{method: "GET", target: "/nobucket?list-type=2"}), 404, "NoSuchBucket")
	})
}
