package s3gw

import (
	"testing"
	"testing/synctest"
)

func TestBucketNames(t *testing.T) {
	for name, ok := range map[string]bool{
		"abc": true, "my-bucket.example": true, "a1b2": true, "ab": false, "ABC": false,
		"-abc": false, "abc-": false, "a..b": false, "a.-b": false, "192.168.1.1": false,
		"xn--abc": false, "abc-s3alias": false, "has_underscore": false,
		"a234567890123456789012345678901234567890123456789012345678901234": false,
		"a23456789012345678901234567890123456789012345678901234567890123":  true,
	} {
		if got := validBucketName(name); got != ok {
			t.Errorf("validBucketName(%q) = %v, want %v", name, got, ok)
		}
	}
}

// Bucket operations and their errors (S3 API reference: CreateBucket,
// HeadBucket, DeleteBucket, ListBuckets, GetBucketLocation).
func TestBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/photos"})
		e.want(e.do(req{method: "PUT", target: "/photos"}), 409, "BucketAlreadyOwnedByYou")
		e.want(e.do(req{method: "PUT", target: "/photos", creds: &e.bob}), 409, "BucketAlreadyExists")
		e.want(e.do(req{method: "PUT", target: "/Bad_Name"}), 400, "InvalidBucketName")
		e.want(e.do(req{method: "PUT", target: "/ab"}), 400, "InvalidBucketName")
		e.ok(req{method: "PUT", target: "/docs", body: []byte(`<CreateBucketConfiguration><LocationConstraint>us-east-1</LocationConstraint></CreateBucketConfiguration>`)})
		e.want(e.do(req{method: "PUT", target: "/docs2", body: []byte(`<CreateBucketConfiguration><LocationConstraint>`)}), 400, "MalformedXML")
		e.ok(req{method: "HEAD", target: "/photos"})
		e.want(e.do(req{method: "HEAD", target: "/nothere"}), 404, "")
		e.want(e.do(req{method: "HEAD", target: "/photos", creds: &e.bob}), 403, "")

		l := decode[listAllMyBucketsResult](t, e.ok(req{method: "GET", target: "/"}))
		if len(l.Buckets) != 2 || l.Buckets[0].Name != "docs" || l.Buckets[1].Name != "photos" || l.Owner.ID != "alice" {
			t.Fatalf("list buckets: %+v", l)
		}
		if l := decode[listAllMyBucketsResult](t, e.ok(req{method: "GET", target: "/", creds: &e.bob})); len(l.Buckets) != 0 {
			t.Fatalf("bob's buckets: %+v", l)
		}
		loc := decode[locationConstraint](t, e.ok(req{method: "GET", target: "/photos?location"}))
		if loc.Value != "" {
			t.Fatalf("location %q", loc.Value)
		}
		// Virtual-host addressing names the same bucket.
		e.ok(req{method: "PUT", target: "/k", host: "photos.s3.test", body: []byte("x")})
		e.want(e.do(req{method: "DELETE", target: "/photos"}), 409, "BucketNotEmpty")
		e.ok(req{method: "DELETE", target: "/k", host: "photos.s3.test"})
		e.want(e.do(req{method: "DELETE", target: "/photos", creds: &e.bob}), 403, "AccessDenied")
		e.want(e.ok(req{method: "DELETE", target: "/photos"}), 204, "")
		e.want(e.do(req{method: "HEAD", target: "/photos"}), 404, "")
		e.want(e.do(req{method: "DELETE", target: "/photos"}), 404, "NoSuchBucket")
		// The name is free again, for anyone.
		e.ok(req{method: "PUT", target: "/photos", creds: &e.bob})
		if d, g := e.dataObjects(); d != 0 || g != 0 {
			t.Fatalf("%d data objects and %d garbage records left", d, g)
		}
	})
}
