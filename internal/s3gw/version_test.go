package s3gw

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// listedVersions is ListObjectVersions' answer as a client reads it:
// versions and delete markers in document order.
type listedVersions struct {
	IsTruncated         bool
	NextKeyMarker       string
	NextVersionIDMarker string          `xml:"NextVersionIdMarker"`
	Any                 []listedVersion `xml:",any"` // every other element
	CommonPrefixes      []struct{ Prefix string }
}

type listedVersion struct {
	XMLName   xml.Name
	Key       string
	VersionID string `xml:"VersionId"`
	IsLatest  bool
	ETag      string
	Size      *int64
}

// Entries are the listing's Version and DeleteMarker elements, in order.
func (l listedVersions) Entries() []listedVersion {
	var out []listedVersion
	for _, e := range l.Any {
		if e.XMLName.Local == "Version" || e.XMLName.Local == "DeleteMarker" {
			out = append(out, e)
		}
	}
	return out
}

// String is the listing as "key@etag" ("key@DM" for a delete marker,
// "*" after the latest), common prefixes as "prefix/".
func (l listedVersions) String() string {
	var s []string
	for _, e := range l.Entries() {
		switch e.XMLName.Local {
		case "Version":
			s = append(s, e.Key+"@"+strings.Trim(e.ETag, `"`))
		case "DeleteMarker":
			if e.ETag != "" || e.Size != nil {
				s = append(s, e.Key+"@DM-with-data")
			} else {
				s = append(s, e.Key+"@DM")
			}
		}
		if e.IsLatest {
			s[len(s)-1] += "*"
		}
	}
	for _, p := range l.CommonPrefixes {
		s = append(s, p.Prefix)
	}
	return strings.Join(s, " ")
}

func (e *env) versions(bucket, query string) listedVersions {
	e.t.Helper()
	return decode[listedVersions](e.t, e.ok(req{method: "GET", target: "/" + bucket + "?versions" + query}))
}

func (e *env) setVersioning(bucket, status string) {
	e.t.Helper()
	e.ok(req{method: "PUT", target: "/" + bucket + "?versioning", body: []byte(
		`<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>` + status + `</Status></VersioningConfiguration>`)})
}

// etagOf is the ETag S3 gives a small object's body, unquoted.
func etagOf(body string) string { return fmt.Sprintf("%x", md5sum([]byte(body))) }

// PutBucketVersioning and GetBucketVersioning: Enabled and Suspended,
// never back to unversioned; MalformedXML for a bad body; only the
// owner.
func TestBucketVersioningState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/vbx"})
		status := func() string {
			t.Helper()
			return decode[struct{ Status string }](t, e.ok(req{method: "GET", target: "/vbx?versioning"})).Status
		}
		if s := status(); s != "" {
			t.Fatalf("a new bucket's versioning: %q", s)
		}
		e.setVersioning("vbx", "Enabled")
		if s := status(); s != "Enabled" {
			t.Fatalf("after enabling: %q", s)
		}
		e.setVersioning("vbx", "Suspended")
		if s := status(); s != "Suspended" {
			t.Fatalf("after suspending: %q", s)
		}
		// No status leaves the state as it is.
		e.ok(req{method: "PUT", target: "/vbx?versioning", body: []byte(`<VersioningConfiguration/>`)})
		if s := status(); s != "Suspended" {
			t.Fatalf("after an empty configuration: %q", s)
		}
		for _, body := range []string{
			`<VersioningConfiguration><Status>Off</Status></VersioningConfiguration>`,
			`<VersioningConfiguration><Status>Enabled`,
			`<Versioning><Status>Enabled</Status></Versioning>`,
			`<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Maybe</MfaDelete></VersioningConfiguration>`,
		} {
			e.want(e.do(req{method: "PUT", target: "/vbx?versioning", body: []byte(body)}), 400, "MalformedXML")
		}
		e.want(e.do(req{method: "PUT", target: "/vbx?versioning", creds: &e.bob, body: []byte(
			`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`)}), 403, "AccessDenied")
		e.want(e.do(req{method: "GET", target: "/vbx?versioning", creds: &e.bob}), 403, "AccessDenied")
		if s := status(); s != "Suspended" {
			t.Fatalf("after refused changes: %q", s)
		}
	})
}

// A versioned object's life: versions with ids, GET and HEAD of the
// latest and of a version, a delete marker (404 with
// x-amz-delete-marker; 405 by its id), ListObjects showing only the
// live latest, the object restored by deleting the marker, a version
// removed for good (its data collected), and the errors: NoSuchVersion,
// InvalidArgument for a malformed id.
func TestVersionedObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/vox"})
		e.ok(req{method: "PUT", target: "/vox/k", body: []byte("before")}) // the null version
		e.setVersioning("vox", "Enabled")
		put := func(key, body string) string {
			t.Helper()
			w := e.ok(req{method: "PUT", target: "/vox/" + key, body: []byte(body)})
			id := w.Header().Get("x-amz-version-id")
			if !meta.ValidVersionID(id) || id == meta.NullVersion {
				t.Fatalf("PUT %s: version id %q", key, id)
			}
			return id
		}
		v1 := put("k", "one")
		v2 := put("k", "two")
		if v1 == v2 {
			t.Fatalf("two versions, one id %s", v1)
		}
		get := func(target, want, wantID string) {
			t.Helper()
			w := e.ok(req{method: "GET", target: target})
			if w.Body.String() != want || w.Header().Get("x-amz-version-id") != wantID {
				t.Fatalf("GET %s: %q version %q, want %q %q", target, w.Body.String(), w.Header().Get("x-amz-version-id"), want, wantID)
			}
			w = e.ok(req{method: "HEAD", target: target})
			if w.Header().Get("x-amz-version-id") != wantID || w.Header().Get("Content-Length") != fmt.Sprint(len(want)) {
				t.Fatalf("HEAD %s: %v", target, w.Header())
			}
		}
		get("/vox/k", "two", v2)
		get("/vox/k?versionId="+v1, "one", v1)
		get("/vox/k?versionId=null", "before", "null")
		if got := e.versions("vox", "").String(); got != "k@"+etagOf("two")+"* k@"+etagOf("one")+" k@"+etagOf("before") {
			t.Fatalf("versions: %s", got)
		}

		// A DELETE adds a delete marker.
		w := e.ok(req{method: "DELETE", target: "/vox/k"})
		dm := w.Header().Get("x-amz-version-id")
		if w.Code != 204 || w.Header().Get("x-amz-delete-marker") != "true" || !meta.ValidVersionID(dm) || dm == v2 {
			t.Fatalf("DELETE: %d %v", w.Code, w.Header())
		}
		w = e.do(req{method: "GET", target: "/vox/k"})
		e.want(w, 404, "NoSuchKey")
		if w.Header().Get("x-amz-delete-marker") != "true" || w.Header().Get("x-amz-version-id") != dm {
			t.Fatalf("GET of a deleted key: %v", w.Header())
		}
		w = e.do(req{method: "HEAD", target: "/vox/k"})
		if w.Code != 404 || w.Header().Get("x-amz-delete-marker") != "true" {
			t.Fatalf("HEAD of a deleted key: %d %v", w.Code, w.Header())
		}
		w = e.do(req{method: "GET", target: "/vox/k?versionId=" + dm})
		e.want(w, 405, "MethodNotAllowed")
		if w.Header().Get("x-amz-delete-marker") != "true" {
			t.Fatalf("GET of a delete marker: %v", w.Header())
		}
		get("/vox/k?versionId="+v2, "two", v2)
		if got := e.versions("vox", "").String(); got != "k@DM* k@"+etagOf("two")+" k@"+etagOf("one")+" k@"+etagOf("before") {
			t.Fatalf("versions after the delete: %s", got)
		}
		put("other", "x")
		if l := decode[listBucketResult](t, e.ok(req{method: "GET", target: "/vox?list-type=2"})); len(l.Contents) != 1 || l.Contents[0].Key != "other" {
			t.Fatalf("ListObjectsV2 with k deleted: %+v", l.Contents)
		}
		if l := decode[listBucketResult](t, e.ok(req{method: "GET", target: "/vox"})); len(l.Contents) != 1 || l.Contents[0].Key != "other" {
			t.Fatalf("ListObjects with k deleted: %+v", l.Contents)
		}
		// A bucket holding versions is not empty, even with every name
		// deleted.
		e.ok(req{method: "DELETE", target: "/vox/other"})
		e.want(e.do(req{method: "DELETE", target: "/vox"}), 409, "BucketNotEmpty")

		// Deleting the marker restores the object.
		w = e.ok(req{method: "DELETE", target: "/vox/k?versionId=" + dm})
		if w.Header().Get("x-amz-delete-marker") != "true" || w.Header().Get("x-amz-version-id") != dm {
			t.Fatalf("DELETE of the marker: %v", w.Header())
		}
		get("/vox/k", "two", v2)

		// Removing versions for good: their data go.
		dataBefore, _ := e.dataObjects()
		w = e.ok(req{method: "DELETE", target: "/vox/k?versionId=" + v1})
		if w.Header().Get("x-amz-version-id") != v1 || w.Header().Get("x-amz-delete-marker") != "" {
			t.Fatalf("DELETE of v1: %v", w.Header())
		}
		e.want(e.do(req{method: "GET", target: "/vox/k?versionId=" + v1}), 404, "NoSuchVersion")
		e.ok(req{method: "DELETE", target: "/vox/k?versionId=" + v1}) // gone already: no error
		e.ok(req{method: "DELETE", target: "/vox/k?versionId=" + v2})
		get("/vox/k", "before", "null") // the null version is the latest left
		if d, g := e.dataObjects(); d != dataBefore-2 || g != 0 {
			t.Fatalf("data objects %d (was %d), garbage %d", d, dataBefore, g)
		}
		// The null version from before versioning, removed by its id
		// (s3-tests' test_versioning_obj_plain_null_version_removal).
		e.ok(req{method: "DELETE", target: "/vox/k?versionId=null"})
		e.want(e.do(req{method: "GET", target: "/vox/k"}), 404, "NoSuchKey")
		if got := e.versions("vox", "&prefix=k").String(); got != "" {
			t.Fatalf("versions of k after removing them all: %s", got)
		}

		// Malformed ids.
		for _, target := range []string{"/vox/k?versionId=abc", "/vox/k?versionId=", "/vox/k?versionId=" + strings.ToUpper(v1)} {
			for _, m := range []string{"GET", "DELETE"} {
				e.want(e.do(req{method: m, target: target}), 400, "InvalidArgument")
			}
		}
		e.want(e.do(req{method: "GET", target: "/vox/k?versionId=" + meta.NewVersionID(1)}), 404, "NoSuchVersion")
		e.want(e.do(req{method: "GET", target: "/vox/nothing"}), 404, "NoSuchKey")
		e.want(e.do(req{method: "PUT", target: "/vox/a%00b", body: []byte("x")}), 400, "InvalidArgument")
		// Without the bucket's READ, a missing version is AccessDenied.
		e.want(e.do(req{method: "GET", target: "/vox/k?versionId=" + v1, creds: &e.bob}), 403, "AccessDenied")
	})
}

// Suspended versioning: a PUT replaces the null version (its data go),
// the versions with ids stay, and a DELETE puts a null delete marker.
func TestSuspendedVersioning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/svx"})
		e.setVersioning("svx", "Enabled")
		v1 := e.ok(req{method: "PUT", target: "/svx/k", body: []byte("one")}).Header().Get("x-amz-version-id")
		e.setVersioning("svx", "Suspended")
		for _, body := range []string{"null-a", "null-b"} {
			w := e.ok(req{method: "PUT", target: "/svx/k", body: []byte(body)})
			if id, ok := w.Header()["X-Amz-Version-Id"]; ok {
				t.Fatalf("suspended PUT: version %q (S3 sends none)", id)
			}
		}
		if got := e.versions("svx", "").String(); got != "k@"+etagOf("null-b")+"* k@"+etagOf("one") {
			t.Fatalf("versions: %s", got)
		}
		if d, g := e.dataObjects(); d != 2 || g != 0 {
			t.Fatalf("%d data objects, %d garbage records: the replaced null version's data stayed", d, g)
		}
		w := e.ok(req{method: "DELETE", target: "/svx/k"})
		if w.Header().Get("x-amz-version-id") != "null" || w.Header().Get("x-amz-delete-marker") != "true" {
			t.Fatalf("suspended DELETE: %v", w.Header())
		}
		if got := e.versions("svx", "").String(); got != "k@DM* k@"+etagOf("one") {
			t.Fatalf("versions after the delete: %s", got)
		}
		e.want(e.do(req{method: "GET", target: "/svx/k"}), 404, "NoSuchKey")
		// Enabled again, a PUT adds a version above the null marker.
		e.setVersioning("svx", "Enabled")
		v3 := e.ok(req{method: "PUT", target: "/svx/k", body: []byte("three")}).Header().Get("x-amz-version-id")
		if got := e.versions("svx", "").String(); got != "k@"+etagOf("three")+"* k@DM k@"+etagOf("one") {
			t.Fatalf("versions after enabling again: %s", got)
		}
		e.ok(req{method: "DELETE", target: "/svx/k?versionId=" + v3})
		e.ok(req{method: "DELETE", target: "/svx/k?versionId=null"})
		if w := e.ok(req{method: "GET", target: "/svx/k"}); w.Body.String() != "one" || w.Header().Get("x-amz-version-id") != v1 {
			t.Fatalf("after removing the newer versions: %q %v", w.Body.String(), w.Header())
		}
	})
}

// ListObjectVersions: prefix, delimiter, and pages of max-keys resumed
// at key-marker and version-id-marker give the whole listing, in order.
func TestListObjectVersionsPages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/lvx"})
		e.ok(req{method: "PUT", target: "/lvx/a", body: []byte("a0")}) // null
		e.setVersioning("lvx", "Enabled")
		for _, kv := range []string{"a=a1", "a=a2", "b=b1", "d/x=dx1", "d/y=dy1", "d/x=dx2", "c=c1", "c=c2", "c=c3"} {
			k, v, _ := strings.Cut(kv, "=")
			e.ok(req{method: "PUT", target: "/lvx/" + k, body: []byte(v)})
		}
		e.ok(req{method: "DELETE", target: "/lvx/b"})
		tag := func(s string) string { return etagOf(s) }
		full := strings.Join([]string{"a@" + tag("a2") + "*", "a@" + tag("a1"), "a@" + tag("a0"), "b@DM*", "b@" + tag("b1"),
			"c@" + tag("c3") + "*", "c@" + tag("c2"), "c@" + tag("c1"), "d/x@" + tag("dx2") + "*", "d/x@" + tag("dx1"), "d/y@" + tag("dy1") + "*"}, " ")
		if got := e.versions("lvx", "").String(); got != full {
			t.Fatalf("all versions:\n%s\nwant\n%s", got, full)
		}
		if got, want := e.versions("lvx", "&delimiter=/").String(), strings.Join(strings.Fields(full)[:8], " ")+" d/"; got != want {
			t.Fatalf("with a delimiter: %s, want %s", got, want)
		}
		if got, want := e.versions("lvx", "&prefix=d/").String(), strings.Join(strings.Fields(full)[8:], " "); got != want {
			t.Fatalf("with a prefix: %s, want %s", got, want)
		}
		if got, want := e.versions("lvx", "&key-marker=b").String(), strings.Join(strings.Fields(full)[5:], " "); got != want {
			t.Fatalf("after key b: %s, want %s", got, want)
		}
		for _, q := range []string{"", "&delimiter=/"} {
			for _, n := range []int{1, 2, 3, 4} {
				var pages []string
				km, vm := "", ""
				for i := 0; ; i++ {
					if i > 20 {
						t.Fatalf("max-keys %d%s: no end", n, q)
					}
					l := e.versions("lvx", fmt.Sprintf("&max-keys=%d%s&key-marker=%s&version-id-marker=%s", n, q, url.QueryEscape(km), vm))
					if s := l.String(); s != "" {
						pages = append(pages, s)
					}
					if !l.IsTruncated {
						break
					}
					km, vm = l.NextKeyMarker, l.NextVersionIDMarker
				}
				want := full
				if q != "" {
					want = e.versions("lvx", q).String()
				}
				if got := strings.Join(pages, " "); got != want {
					t.Fatalf("max-keys %d%s, paged:\n%s\nwant\n%s", n, q, got, want)
				}
			}
		}
		e.want(e.do(req{method: "GET", target: "/lvx?versions&version-id-marker=null"}), 400, "InvalidArgument")
		e.want(e.do(req{method: "GET", target: "/lvx?versions&key-marker=a&version-id-marker=zz"}), 400, "InvalidArgument")
	})
}

// CopyObject from a version (x-amz-copy-source-version-id) makes a new
// version, also onto its own key (a restore); a multipart upload's
// completion makes a version; tags and ACLs of one version; and
// DeleteObjects with version ids and markers.
func TestVersionedCopyMultipartTagsDeleteObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/vcx"})
		e.setVersioning("vcx", "Enabled")
		v1 := e.ok(req{method: "PUT", target: "/vcx/k", body: []byte("old")}).Header().Get("x-amz-version-id")
		v2 := e.ok(req{method: "PUT", target: "/vcx/k", body: []byte("new")}).Header().Get("x-amz-version-id")
		// Restore v1 by copying it onto k.
		w := e.ok(req{method: "PUT", target: "/vcx/k", hdr: map[string]string{"X-Amz-Copy-Source": "/vcx/k?versionId=" + v1}})
		v3 := w.Header().Get("x-amz-version-id")
		if w.Header().Get("x-amz-copy-source-version-id") != v1 || !meta.ValidVersionID(v3) || v3 == v1 || v3 == v2 {
			t.Fatalf("copy of v1: %v", w.Header())
		}
		if w := e.ok(req{method: "GET", target: "/vcx/k"}); w.Body.String() != "old" || w.Header().Get("x-amz-version-id") != v3 {
			t.Fatalf("after the restore: %q %v", w.Body.String(), w.Header())
		}
		e.want(e.do(req{method: "PUT", target: "/vcx/c", hdr: map[string]string{"X-Amz-Copy-Source": "/vcx/k?versionId=bad"}}), 400, "InvalidArgument")
		e.want(e.do(req{method: "PUT", target: "/vcx/c", hdr: map[string]string{"X-Amz-Copy-Source": "/vcx/k?versionId=" + meta.NewVersionID(1)}}), 404, "NoSuchVersion")
		dm := e.ok(req{method: "DELETE", target: "/vcx/gone"}).Header().Get("x-amz-version-id")
		e.want(e.do(req{method: "PUT", target: "/vcx/c", hdr: map[string]string{"X-Amz-Copy-Source": "/vcx/gone?versionId=" + dm}}), 400, "InvalidRequest")
		e.want(e.do(req{method: "PUT", target: "/vcx/c", hdr: map[string]string{"X-Amz-Copy-Source": "/vcx/gone"}}), 404, "NoSuchKey")

		// Tags of one version, not of the others.
		tagging := `<Tagging><TagSet><Tag><Key>v</Key><Value>two</Value></Tag></TagSet></Tagging>`
		e.ok(req{method: "PUT", target: "/vcx/k?tagging&versionId=" + v2, body: []byte(tagging)})
		tags := func(q string) string {
			t.Helper()
			return e.ok(req{method: "GET", target: "/vcx/k?tagging" + q}).Body.String()
		}
		if !strings.Contains(tags("&versionId="+v2), "<Value>two</Value>") || strings.Contains(tags(""), "two") || strings.Contains(tags("&versionId="+v1), "two") {
			t.Fatalf("tags: v2 %s; latest %s", tags("&versionId="+v2), tags(""))
		}
		// An ACL of one version.
		e.ok(req{method: "PUT", target: "/vcx/k?acl&versionId=" + v1, hdr: map[string]string{"X-Amz-Acl": "public-read"}})
		e.ok(req{method: "GET", target: "/vcx/k?versionId=" + v1, anonymous: true})
		e.want(e.do(req{method: "GET", target: "/vcx/k?versionId=" + v2, anonymous: true}), 403, "AccessDenied")

		// A completed multipart upload is a version.
		id := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/vcx/mp?uploads"})).UploadID
		etag := e.ok(req{method: "PUT", target: "/vcx/mp?partNumber=1&uploadId=" + id, body: []byte("part")}).Header().Get("ETag")
		w = e.ok(req{method: "POST", target: "/vcx/mp?uploadId=" + id, body: []byte(
			`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>` + etag + `</ETag></Part></CompleteMultipartUpload>`)})
		mpv := w.Header().Get("x-amz-version-id")
		if !meta.ValidVersionID(mpv) || mpv == meta.NullVersion {
			t.Fatalf("complete: version %q", mpv)
		}
		if w := e.ok(req{method: "GET", target: "/vcx/mp?versionId=" + mpv}); w.Body.String() != "part" {
			t.Fatalf("the upload's version: %q", w.Body.String())
		}

		// DeleteObjects: a version for good, a marker added, a marker
		// removed, a malformed id.
		body := `<Delete><Object><Key>k</Key><VersionId>` + v2 + `</VersionId></Object><Object><Key>mp</Key></Object>` +
			`<Object><Key>gone</Key><VersionId>` + dm + `</VersionId></Object><Object><Key>k</Key><VersionId>nope</VersionId></Object></Delete>`
		res := decode[struct {
			Deleted []struct {
				Key, VersionId, DeleteMarkerVersionId string
				DeleteMarker                          bool
			}
			Error []struct{ Key, Code string }
		}](t, e.ok(req{method: "POST", target: "/vcx?delete", body: []byte(body), hdr: map[string]string{"Content-MD5": md5b64([]byte(body))}}))
		if len(res.Deleted) != 3 || len(res.Error) != 1 || res.Error[0].Code != "InvalidArgument" {
			t.Fatalf("DeleteObjects: %+v", res)
		}
		d := res.Deleted
		if d[0].VersionId != v2 || d[0].DeleteMarker ||
			d[1].VersionId != "" || !d[1].DeleteMarker || !meta.ValidVersionID(d[1].DeleteMarkerVersionId) ||
			d[2].VersionId != dm || !d[2].DeleteMarker || d[2].DeleteMarkerVersionId != dm {
			t.Fatalf("DeleteObjects entries: %+v", d)
		}
		mpTag := strings.Trim(decode[completeMultipartUploadResult](t, w).ETag, `"`)
		if got, want := e.versions("vcx", "").String(), "k@"+etagOf("old")+"* k@"+etagOf("old")+" mp@DM* mp@"+mpTag; got != want {
			t.Fatalf("versions after DeleteObjects: %s, want %s", got, want)
		}
	})
}

// The collector keeps the data of every version, not only the latest's,
// and removes a removed version's data whose removal was cut short.
func TestCollectGarbageVersions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		ctx := context.Background()
		e.ok(req{method: "PUT", target: "/gvx"})
		e.setVersioning("gvx", "Enabled")
		v1 := e.ok(req{method: "PUT", target: "/gvx/k", body: []byte("one")}).Header().Get("x-amz-version-id")
		e.ok(req{method: "PUT", target: "/gvx/k", body: []byte("two")})
		b, err := e.gw.Meta().GetBucket(ctx, "gvx")
		if err != nil {
			t.Fatal(err)
		}
		ix, err := e.gw.Meta().Index(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		old, err := ix.Version(ctx, "k", v1)
		if err != nil {
			t.Fatal(err)
		}
		// A crash left v1's data on the garbage list: the data stay.
		if err := e.gw.Meta().AddGarbage(ctx, meta.Garbage{ID: old.Extents[0].ID, Size: old.Size, BucketID: b.ID, Key: "k"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute)
		res, err := e.gw.CollectGarbage(ctx, time.Minute)
		if err != nil || res != (GCResult{Kept: 1}) {
			t.Fatalf("collect: %+v %v", res, err)
		}
		if w := e.ok(req{method: "GET", target: "/gvx/k?versionId=" + v1}); w.Body.String() != "one" {
			t.Fatalf("v1 after the collection: %q", w.Body.String())
		}
		// v1 removed from the index with its data left behind (a
		// gateway stopped between the two): collected.
		st, err := ix.Current(ctx, meta.VersionKey("k", v1))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.gw.Meta().AddGarbage(ctx, meta.Garbage{ID: old.Extents[0].ID, Size: old.Size, BucketID: b.ID, Key: "k"}); err != nil {
			t.Fatal(err)
		}
		if err := ix.RemoveVersion(ctx, "k", v1, st); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute)
		res, err = e.gw.CollectGarbage(ctx, time.Minute)
		if err != nil || res != (GCResult{Removed: 1}) {
			t.Fatalf("collect after the removal: %+v %v", res, err)
		}
		if d, g := e.dataObjects(); d != 1 || g != 0 {
			t.Fatalf("%d data objects, %d records", d, g)
		}
	})
}

// Two gateways, one with its clock ten minutes ahead, writing versions of
// one key: sequential writes list in the order they were made whatever
// the clocks; concurrent ones all land, each once with its own id; and
// concurrent suspended PUTs each retire exactly the null version they
// replaced, leaving no data behind.
func TestVersionsTwoGateways(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		io2, err := e.c.Client("client.rgw2").OpenIOContext(DefaultPool)
		if err != nil {
			t.Fatal(err)
		}
		gw2, err := New(Config{IO: io2, Domain: "s3.test", Now: func() time.Time { return time.Now().Add(10 * time.Minute) }})
		if err != nil {
			t.Fatal(err)
		}
		gws := []*Gateway{e.gw, gw2}
		on := func(gw *Gateway, q req) *httptest.ResponseRecorder {
			w := httptest.NewRecorder()
			gw.ServeHTTP(w, e.build(q))
			if w.Code/100 != 2 {
				t.Errorf("%s %s: %d %s", q.method, q.target, w.Code, w.Body.String())
			}
			return w
		}
		on(e.gw, req{method: "PUT", target: "/twov"})
		e.setVersioning("twov", "Enabled")
		var want []string
		for i := range 4 {
			body := fmt.Sprintf("seq%d", i)
			on(gws[(i+1)%2], req{method: "PUT", target: "/twov/k", body: []byte(body)})
			want = append([]string{"k@" + etagOf(body)}, want...)
		}
		want[0] += "*"
		if got := e.versions("twov", "").String(); got != strings.Join(want, " ") {
			t.Fatalf("sequential versions from two clocks:\n%s\nwant\n%s", got, strings.Join(want, " "))
		}

		var wg sync.WaitGroup
		ids := make([]string, 16)
		for i := range ids {
			wg.Add(1)
			r := e.build(req{method: "PUT", target: "/twov/c", body: []byte(fmt.Sprint(i))})
			if i%4 == 3 {
				r = e.build(req{method: "DELETE", target: "/twov/c"})
			}
			go func() {
				defer wg.Done()
				w := httptest.NewRecorder()
				gws[i%2].ServeHTTP(w, r)
				ids[i] = w.Header().Get("x-amz-version-id")
			}()
		}
		wg.Wait()
		seen := map[string]bool{}
		for _, v := range e.versions("twov", "&prefix=c").Entries() {
			seen[v.VersionID] = true
		}
		for i, id := range ids {
			if !meta.ValidVersionID(id) || id == meta.NullVersion || !seen[id] {
				t.Fatalf("concurrent write %d: version %q not listed (%d listed)", i, id, len(seen))
			}
		}
		if len(seen) != len(ids) {
			t.Fatalf("%d versions listed for %d writes", len(seen), len(ids))
		}

		// Suspended: concurrent PUTs of the null version.
		e.setVersioning("twov", "Suspended")
		for i := range 8 {
			wg.Add(1)
			r := e.build(req{method: "PUT", target: "/twov/n", body: []byte(fmt.Sprint(i))})
			go func() {
				defer wg.Done()
				w := httptest.NewRecorder()
				gws[i%2].ServeHTTP(w, r)
				if w.Code != 200 && w.Code != 503 {
					t.Errorf("suspended PUT: %d %s", w.Code, w.Body.String())
				}
			}()
		}
		wg.Wait()
		gw2.Quiesce()
		if got := e.versions("twov", "&prefix=n").Entries(); len(got) != 1 || got[0].VersionID != "null" {
			t.Fatalf("null versions after concurrent suspended PUTs: %+v", got)
		}
		// Every version with data keeps one data object; nothing else.
		withData := 0
		for _, v := range e.versions("twov", "").Entries() {
			if v.XMLName.Local == "Version" {
				withData++
			}
		}
		if d, g := e.dataObjects(); d != withData || g != 0 {
			t.Fatalf("%d data objects for %d versions, %d garbage records", d, withData, g)
		}
	})
}

// A bucket policy decides on a version named by its id with S3's
// Version actions: s3:GetObject lets anonymous read the latest, not
// an older version (s3:GetObjectVersion); a Deny of
// s3:DeleteObjectVersion keeps versions while markers can still be put.
func TestVersionPolicyActions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/polv"})
		e.setVersioning("polv", "Enabled")
		v1 := e.ok(req{method: "PUT", target: "/polv/k", body: []byte("one")}).Header().Get("x-amz-version-id")
		e.ok(req{method: "PUT", target: "/polv/k", body: []byte("two")})
		policy := `{"Version":"2012-10-17","Statement":[
			{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::polv/*"},
			{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObjectVersion","Resource":"arn:aws:s3:::polv/*"}]}`
		e.ok(req{method: "PUT", target: "/polv?policy", body: []byte(policy)})
		if w := e.ok(req{method: "GET", target: "/polv/k", anonymous: true}); w.Body.String() != "two" {
			t.Fatalf("anonymous GET of the latest: %q", w.Body.String())
		}
		e.want(e.do(req{method: "GET", target: "/polv/k?versionId=" + v1, anonymous: true}), 403, "AccessDenied")
		e.want(e.do(req{method: "DELETE", target: "/polv/k?versionId=" + v1}), 403, "AccessDenied")
		e.ok(req{method: "DELETE", target: "/polv/k"}) // a marker: s3:DeleteObject
		if w := e.ok(req{method: "GET", target: "/polv/k?versionId=" + v1}); w.Body.String() != "one" {
			t.Fatalf("v1 after the refused delete: %q", w.Body.String())
		}
	})
}

// FuzzVersioning: a PutBucketVersioning body decodes or is MalformedXML,
// and a version id is valid or not without a panic, a valid one's stamp
// giving back the id's first half.
func FuzzVersioning(f *testing.F) {
	f.Add([]byte(`<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Disabled</MfaDelete></VersioningConfiguration>`), meta.NewVersionID(7))
	f.Add([]byte(`<VersioningConfiguration><Status>`), "null")
	f.Add([]byte(`<Versioning/>`), "ffffffffffffffff0000000")
	f.Fuzz(func(t *testing.T, b []byte, id string) {
		var c versioningRequest
		if err := decodeXML(bytes.NewReader(b), &c); err != nil {
			if code := translate(err).Code; code != "MalformedXML" && code != "MaxMessageLengthExceeded" {
				t.Fatalf("%q: %v -> %s", b, err, code)
			}
		}
		if meta.ValidVersionID(id) && id != meta.NullVersion {
			if again := meta.NewVersionID(meta.VersionIDStamp(id)); again[:16] != id[:16] {
				t.Fatalf("id %s: stamp %d gives %s", id, meta.VersionIDStamp(id), again)
			}
		}
	})
}

// A conditional PUT in a versioned bucket is judged against the latest
// version, a delete marker counting as no object; a refused one stores
// nothing.
func TestVersionedConditionalPut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/condv"})
		e.ok(req{method: "PUT", target: "/condv/k", body: []byte("null")})
		e.setVersioning("condv", "Enabled")
		e.ok(req{method: "PUT", target: "/condv/k", body: []byte("one")})
		e.want(e.do(req{method: "PUT", target: "/condv/k", body: []byte("x"), hdr: map[string]string{"If-None-Match": "*"}}), 412, "PreconditionFailed")
		e.want(e.do(req{method: "PUT", target: "/condv/k", body: []byte("x"), hdr: map[string]string{"If-Match": `"` + etagOf("null") + `"`}}), 412, "PreconditionFailed")
		e.ok(req{method: "PUT", target: "/condv/k", body: []byte("two"), hdr: map[string]string{"If-Match": `"` + etagOf("one") + `"`}})
		e.ok(req{method: "DELETE", target: "/condv/k"})
		e.want(e.do(req{method: "PUT", target: "/condv/k", body: []byte("x"), hdr: map[string]string{"If-Match": `"` + etagOf("two") + `"`}}), 404, "NoSuchKey")
		e.ok(req{method: "PUT", target: "/condv/k", body: []byte("three"), hdr: map[string]string{"If-None-Match": "*"}})
		want := "k@" + etagOf("three") + "* k@DM k@" + etagOf("two") + " k@" + etagOf("one") + " k@" + etagOf("null")
		if got := e.versions("condv", "").String(); got != want {
			t.Fatalf("versions: %s, want %s", got, want)
		}
		if d, g := e.dataObjects(); d != 4 || g != 0 {
			t.Fatalf("%d data objects, %d garbage records after refused PUTs", d, g)
		}
	})
}

// A name too long for a version key (meta.MaxVersionedName) is
// KeyTooLongError in an enabled bucket, storing nothing, and keeps its
// null version while suspended.
func TestVersionedLongKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/longv"})
		e.setVersioning("longv", "Enabled")
		long := strings.Repeat("k", meta.MaxVersionedName+1)
		e.ok(req{method: "PUT", target: "/longv/" + long[1:], body: []byte("fits")})
		e.want(e.do(req{method: "PUT", target: "/longv/" + long, body: []byte("x")}), 400, "KeyTooLongError")
		e.want(e.do(req{method: "DELETE", target: "/longv/" + long}), 400, "KeyTooLongError")
		if d, g := e.dataObjects(); d != 1 || g != 0 {
			t.Fatalf("%d data objects, %d garbage records after the refused PUT", d, g)
		}
		e.setVersioning("longv", "Suspended")
		e.ok(req{method: "PUT", target: "/longv/" + long, body: []byte("null")})
		if w := e.ok(req{method: "GET", target: "/longv/" + long}); w.Body.String() != "null" {
			t.Fatalf("GET: %q", w.Body.String())
		}
		longest := strings.Repeat("m", maxKeyLen)
		e.ok(req{method: "PUT", target: "/longv/" + longest, body: []byte("longest")})
		if w := e.ok(req{method: "GET", target: "/longv/" + longest}); w.Body.String() != "longest" {
			t.Fatalf("GET of a %d-byte key: %q", maxKeyLen, w.Body.String())
		}
		if got := e.versions("longv", "&prefix=m").String(); got != "m"+longest[1:]+"@"+etagOf("longest")+"*" {
			t.Fatalf("versions of a %d-byte key: %.60s", maxKeyLen, got)
		}
		e.ok(req{method: "DELETE", target: "/longv/" + longest + "?versionId=null"})
	})
}
