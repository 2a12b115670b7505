package s3gw

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/kv"
)

func grant(k meta.GranteeKind, id string, p meta.Perm) meta.Grant {
	return meta.Grant{Kind: k, ID: id, Perm: p}
}

// The access decision, case by case.
func TestPermitted(t *testing.T) {
	const (
		R, W, RA, WA, FC = meta.PermRead, meta.PermWrite, meta.PermReadACP, meta.PermWriteACP, meta.PermFullControl
		user, all, auth  = meta.GranteeUser, meta.GranteeAllUsers, meta.GranteeAuthenticated
	)
	acl := func(gs ...meta.Grant) meta.ACL { return meta.ACL{Grants: gs} }
	cases := []struct {
		name  string
		acl   meta.ACL
		who   string
		perm  meta.Perm
		allow bool
	}{
		{"owner's full control reads", meta.Private("alice"), "alice", R, true},
		{"owner's full control writes", meta.Private("alice"), "alice", W, true},
		{"private: another user may not read", meta.Private("alice"), "bob", R, false},
		{"private: anonymous may not read", meta.Private("alice"), "", R, false},
		{"no grants: the owner may not read", acl(), "alice", R, false},
		{"no grants: the owner may not write", acl(), "alice", W, false},
		{"no grants: the owner may read the ACL", acl(), "alice", RA, true},
		{"no grants: the owner may write the ACL", acl(), "alice", WA, true},
		{"no grants: others may not read the ACL", acl(), "bob", RA, false},
		{"AllUsers READ: anonymous reads", acl(grant(all, "", R)), "", R, true},
		{"AllUsers READ: a user reads", acl(grant(all, "", R)), "bob", R, true},
		{"AllUsers READ: anonymous may not write", acl(grant(all, "", R)), "", W, false},
		{"AllUsers READ: not READ_ACP", acl(grant(all, "", R)), "bob", RA, false},
		{"AllUsers WRITE: anonymous writes", acl(grant(all, "", W)), "", W, true},
		{"AuthenticatedUsers READ: a user reads", acl(grant(auth, "", R)), "bob", R, true},
		{"AuthenticatedUsers READ: anonymous may not", acl(grant(auth, "", R)), "", R, false},
		{"user READ: that user", acl(grant(user, "bob", R)), "bob", R, true},
		{"user READ: not another", acl(grant(user, "bob", R)), "carol", R, false},
		{"user READ: not anonymous", acl(grant(user, "bob", R)), "", R, false},
		{"user FULL_CONTROL: WRITE_ACP", acl(grant(user, "bob", FC)), "bob", WA, true},
		{"user READ_ACP: only READ_ACP", acl(grant(user, "bob", RA)), "bob", WA, false},
		{"user WRITE_ACP", acl(grant(user, "bob", WA)), "bob", WA, true},
		{"AllUsers FULL_CONTROL: anonymous writes the ACL", acl(grant(all, "", FC)), "", WA, true},
		{"LogDelivery WRITE: nobody else", acl(grant(meta.GranteeLogDelivery, "", W)), "bob", W, false},
	}
	for _, c := range cases {
		if got := permitted("alice", c.acl, c.who, c.perm); got != c.allow {
			t.Errorf("%s: permitted = %v", c.name, got)
		}
	}
}

func TestCannedAndHeaderACLs(t *testing.T) {
	const R, W, FC = meta.PermRead, meta.PermWrite, meta.PermFullControl
	own := grant(meta.GranteeUser, "bob", FC)
	canned := []struct {
		name string
		want []meta.Grant
	}{
		{"private", []meta.Grant{own}},
		{"public-read", []meta.Grant{own, grant(meta.GranteeAllUsers, "", R)}},
		{"public-read-write", []meta.Grant{own, grant(meta.GranteeAllUsers, "", R), grant(meta.GranteeAllUsers, "", W)}},
		{"authenticated-read", []meta.Grant{own, grant(meta.GranteeAuthenticated, "", R)}},
		{"bucket-owner-read", []meta.Grant{own, grant(meta.GranteeUser, "alice", R)}},
		{"bucket-owner-full-control", []meta.Grant{own, grant(meta.GranteeUser, "alice", FC)}},
	}
	for _, c := range canned {
		acl, set, err := headerACL(http.Header{"X-Amz-Acl": {c.name}}, "bob", "alice")
		if err != nil || !set || !reflect.DeepEqual(acl.Grants, c.want) {
			t.Errorf("%s: %+v %v %v", c.name, acl, set, err)
		}
	}
	// In the owner's own bucket, bucket-owner-* is private.
	if acl, _, _ := headerACL(http.Header{"X-Amz-Acl": {"bucket-owner-full-control"}}, "alice", "alice"); len(acl.Grants) != 1 {
		t.Errorf("bucket-owner-full-control by the bucket owner: %+v", acl)
	}
	h := http.Header{}
	h.Set("X-Amz-Grant-Read", `uri="http://acs.amazonaws.com/groups/global/AllUsers", id="carol"`)
	h.Set("X-Amz-Grant-Full-Control", `id=alice`)
	acl, set, err := headerACL(h, "bob", "alice")
	want := []meta.Grant{grant(meta.GranteeAllUsers, "", R), grant(meta.GranteeUser, "carol", R), grant(meta.GranteeUser, "alice", FC)}
	if err != nil || !set || !reflect.DeepEqual(acl.Grants, want) {
		t.Fatalf("grant headers: %+v %v %v", acl, set, err)
	}
	if _, set, err := headerACL(http.Header{}, "bob", "alice"); set || err != nil {
		t.Fatalf("no headers: %v %v", set, err)
	}
	for _, bad := range []struct {
		h    http.Header
		code string
	}{
		{http.Header{"X-Amz-Acl": {"public"}}, "InvalidArgument"},
		{http.Header{"X-Amz-Acl": {"private"}, "X-Amz-Grant-Read": {`id="bob"`}}, "InvalidRequest"},
		{http.Header{"X-Amz-Grant-Read": {`emailAddress="bob@example.com"`}}, "UnresolvableGrantByEmailAddress"},
		{http.Header{"X-Amz-Grant-Read": {`uri="http://example.com/group"`}}, "InvalidArgument"},
		{http.Header{"X-Amz-Grant-Write": {`bob`}}, "InvalidArgument"},
		{http.Header{"X-Amz-Grant-Write": {`name="bob"`}}, "InvalidArgument"},
	} {
		if _, _, err := headerACL(bad.h, "bob", "alice"); err == nil || translate(err).Code != bad.code {
			t.Errorf("%v: %v, want %s", bad.h, err, bad.code)
		}
	}
}

const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`

func TestParseACLPolicy(t *testing.T) {
	doc := `<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>alice</ID></Owner><AccessControlList>
<Grant><Grantee ` + xsi + ` xsi:type="CanonicalUser"><ID>bob</ID><DisplayName>Bob</DisplayName></Grantee><Permission>READ</Permission></Grant>
<Grant><Grantee ` + xsi + ` xsi:type="Group"><URI>http://acs.amazonaws.com/groups/global/AuthenticatedUsers</URI></Grantee><Permission>WRITE_ACP</Permission></Grant>
<Grant><Grantee><ID>alice</ID></Grantee><Permission>FULL_CONTROL</Permission></Grant>
</AccessControlList></AccessControlPolicy>`
	acl, err := parseACLPolicy([]byte(doc), "alice")
	want := []meta.Grant{grant(meta.GranteeUser, "bob", meta.PermRead), grant(meta.GranteeAuthenticated, "", meta.PermWriteACP), grant(meta.GranteeUser, "alice", meta.PermFullControl)}
	if err != nil || !reflect.DeepEqual(acl.Grants, want) {
		t.Fatalf("%+v %v", acl, err)
	}
	for _, bad := range []struct {
		doc, code string
	}{
		{`<AccessControlPolicy><Owner><ID>alice</ID>`, "MalformedACLError"},
		{`<Other/>`, "MalformedACLError"},
		{`<AccessControlPolicy><Owner><ID>alice</ID></Owner></AccessControlPolicy>`, "MalformedACLError"},
		{`<AccessControlPolicy><Owner><ID>mallory</ID></Owner><AccessControlList/></AccessControlPolicy>`, "AccessDenied"},
		{`<AccessControlPolicy><AccessControlList><Grant><Grantee><ID>bob</ID></Grantee><Permission>ALL</Permission></Grant></AccessControlList></AccessControlPolicy>`, "MalformedACLError"},
		{`<AccessControlPolicy><AccessControlList><Grant><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`, "MalformedACLError"},
		{`<AccessControlPolicy><AccessControlList><Grant><Grantee ` + xsi + ` xsi:type="AmazonCustomerByEmail"><EmailAddress>a@b.c</EmailAddress></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`, "UnresolvableGrantByEmailAddress"},
		{`<AccessControlPolicy><AccessControlList><Grant><Grantee ` + xsi + ` xsi:type="Group"><URI>http://x/</URI></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`, "InvalidArgument"},
		{`<AccessControlPolicy><AccessControlList><Grant><Grantee ` + xsi + ` xsi:type="CanonicalUser"></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`, "InvalidArgument"},
	} {
		if _, err := parseACLPolicy([]byte(bad.doc), "alice"); err == nil || translate(err).Code != bad.code {
			t.Errorf("%s: %v, want %s", bad.doc, err, bad.code)
		}
	}
}

// who is a request's identity in the HTTP tests.
type who int

const (
	asAlice who = iota
	asBob
	asAnon
)

func (w who) String() string { return [...]string{"alice", "bob", "anonymous"}[w] }

// as returns q sent as w.
func (e *env) as(w who, q req) req {
	switch w {
	case asBob:
		q.creds = &e.bob
	case asAnon:
		q.anonymous = true
	}
	return q
}

// check sends q as each of alice, bob and anonymous, and wants success
// from those in allowed and AccessDenied from the others.
func (e *env) check(what string, q req, allowed ...who) {
	e.t.Helper()
	for _, w := range []who{asAlice, asBob, asAnon} {
		ok := false
		for _, a := range allowed {
			ok = ok || a == w
		}
		res := e.do(e.as(w, q))
		switch {
		case ok && res.Code/100 != 2:
			e.t.Errorf("%s as %s: %d %s", what, w, res.Code, res.Body.String())
		case !ok && res.Code != http.StatusForbidden:
			e.t.Errorf("%s as %s: %d, want 403: %s", what, w, res.Code, res.Body.String())
		case !ok && q.method != "HEAD" && !strings.Contains(res.Body.String(), "<Code>AccessDenied</Code>"):
			e.t.Errorf("%s as %s: %s, want AccessDenied", what, w, res.Body.String())
		}
	}
}

// Each canned ACL on a bucket and on an object, with two users and
// anonymous requests.
func TestCannedACLs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		all := []who{asAlice, asBob, asAnon}
		for _, c := range []struct {
			acl          string
			read, writes []who
		}{
			{"private", []who{asAlice}, []who{asAlice}},
			{"public-read", all, []who{asAlice}},
			{"public-read-write", all, all},
			{"authenticated-read", []who{asAlice, asBob}, []who{asAlice}},
		} {
			b := "/b-" + c.acl
			e.ok(req{method: "PUT", target: b, hdr: map[string]string{"X-Amz-Acl": c.acl}})
			e.ok(req{method: "PUT", target: b + "/o", body: []byte("data")})
			e.check(c.acl+" bucket: list", req{method: "GET", target: b + "?list-type=2"}, c.read...)
			e.check(c.acl+" bucket: head", req{method: "HEAD", target: b}, c.read...)
			e.check(c.acl+" bucket: list uploads", req{method: "GET", target: b + "?uploads"}, c.read...)
			e.check(c.acl+" bucket: put", req{method: "PUT", target: b + "/new", body: []byte("x")}, c.writes...)
			e.check(c.acl+" bucket: delete an object", req{method: "DELETE", target: b + "/new"}, c.writes...)
			e.check(c.acl+" bucket: delete objects", req{method: "POST", target: b + "?delete", body: []byte(`<Delete><Object><Key>new</Key></Object></Delete>`)}, c.writes...)
			e.check(c.acl+" bucket: get the acl", req{method: "GET", target: b + "?acl"}, asAlice)
			e.check(c.acl+" bucket: its location", req{method: "GET", target: b + "?location"}, asAlice)
			// The bucket's ACL is not its objects': o is private.
			e.check(c.acl+" bucket: get its private object", req{method: "GET", target: b + "/o"}, asAlice)
			// Deleting a bucket is its owner's only, even when anyone may
			// write in it (alice gets BucketNotEmpty: it holds o).
			for _, w := range []who{asBob, asAnon} {
				e.want(e.do(e.as(w, req{method: "DELETE", target: b})), 403, "AccessDenied")
			}
			e.want(e.do(req{method: "DELETE", target: b}), 409, "BucketNotEmpty")
		}

		e.ok(req{method: "PUT", target: "/objs"})
		for _, c := range []struct {
			acl  string
			read []who
		}{
			{"private", []who{asAlice}},
			{"public-read", all},
			{"public-read-write", all},
			{"authenticated-read", []who{asAlice, asBob}},
			{"bucket-owner-read", []who{asAlice}},
			{"bucket-owner-full-control", []who{asAlice}},
		} {
			o := "/objs/" + c.acl
			e.ok(req{method: "PUT", target: o, body: []byte(c.acl), hdr: map[string]string{"X-Amz-Acl": c.acl}})
			e.check(c.acl+" object: get", req{method: "GET", target: o}, c.read...)
			e.check(c.acl+" object: head", req{method: "HEAD", target: o}, c.read...)
			e.check(c.acl+" object: get the acl", req{method: "GET", target: o + "?acl"}, asAlice)
			e.check(c.acl+" object: put the acl", req{method: "PUT", target: o + "?acl", hdr: map[string]string{"X-Amz-Acl": c.acl}}, asAlice)
			// The bucket is private: only alice writes in it.
			e.check(c.acl+" object: overwrite", req{method: "PUT", target: o, body: []byte(c.acl), hdr: map[string]string{"X-Amz-Acl": c.acl}}, asAlice)
		}
	})
}

// A second user writing in a bucket that grants it WRITE: its objects are
// its own, the bucket-owner-* canned ACLs give the bucket's owner access,
// and ACL documents go in and out.
func TestACLsBetweenUsers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/shared", hdr: map[string]string{"X-Amz-Grant-Full-Control": `id="alice"`, "X-Amz-Grant-Write": `id="bob"`}})
		w := e.ok(req{method: "GET", target: "/shared?acl"})
		pol := decode[accessControlPolicy](t, w)
		if pol.Owner.ID != "alice" || len(pol.List.Grants) != 2 || pol.List.Grants[1].Grantee.ID != "bob" || pol.List.Grants[1].Permission != "WRITE" ||
			pol.List.Grants[0].Grantee.ID != "alice" || pol.List.Grants[0].Permission != "FULL_CONTROL" ||
			!strings.Contains(w.Body.String(), `<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>bob</ID><DisplayName>bob</DisplayName></Grantee>`) {
			t.Fatalf("bucket acl: %s", w.Body.String())
		}
		e.ok(req{method: "PUT", target: "/shared/by-bob", body: []byte("b"), creds: &e.bob})
		e.ok(req{method: "PUT", target: "/shared/bob-read", body: []byte("b"), creds: &e.bob, hdr: map[string]string{"X-Amz-Acl": "bucket-owner-read"}})
		e.ok(req{method: "PUT", target: "/shared/bob-full", body: []byte("b"), creds: &e.bob, hdr: map[string]string{"X-Amz-Acl": "bucket-owner-full-control"}})
		// bob's private object: alice, the bucket's owner, may not read it
		// but may delete it (bucket WRITE).
		e.check("bob's private object", req{method: "GET", target: "/shared/by-bob"}, asBob)
		e.check("bob's bucket-owner-read object", req{method: "GET", target: "/shared/bob-read"}, asAlice, asBob)
		e.check("bob's bucket-owner-read object's acl", req{method: "PUT", target: "/shared/bob-read?acl", hdr: map[string]string{"X-Amz-Acl": "bucket-owner-read"}}, asBob)
		e.check("bob's bucket-owner-full-control object's acl", req{method: "GET", target: "/shared/bob-full?acl"}, asAlice, asBob)
		pol = decode[accessControlPolicy](t, e.ok(req{method: "GET", target: "/shared/bob-full?acl", creds: &e.bob}))
		if pol.Owner.ID != "bob" || len(pol.List.Grants) != 2 || pol.List.Grants[0].Grantee.ID != "alice" || pol.List.Grants[0].Permission != "FULL_CONTROL" ||
			pol.List.Grants[1].Grantee.ID != "bob" {
			t.Fatalf("object acl: %+v", pol)
		}
		// Listings name each object's owner.
		lr := decode[listBucketResult](t, e.ok(req{method: "GET", target: "/shared?list-type=2&fetch-owner=true"}))
		if len(lr.Contents) != 3 || lr.Contents[0].Owner == nil || lr.Contents[0].Owner.ID != "bob" {
			t.Fatalf("listing: %+v", lr.Contents)
		}
		// A missing key: NoSuchKey to who may list, AccessDenied to others.
		e.want(e.do(req{method: "GET", target: "/shared/nothing"}), 404, "NoSuchKey")
		e.want(e.do(req{method: "GET", target: "/shared/nothing", creds: &e.bob}), 403, "AccessDenied")

		// An AccessControlPolicy in: bob's object readable by anyone, alice
		// may write its ACL.
		doc := `<AccessControlPolicy><Owner><ID>bob</ID></Owner><AccessControlList>
<Grant><Grantee ` + xsi + ` xsi:type="CanonicalUser"><ID>bob</ID></Grantee><Permission>FULL_CONTROL</Permission></Grant>
<Grant><Grantee ` + xsi + ` xsi:type="Group"><URI>` + uriAllUsers + `</URI></Grantee><Permission>READ</Permission></Grant>
<Grant><Grantee ` + xsi + ` xsi:type="CanonicalUser"><ID>alice</ID></Grantee><Permission>WRITE_ACP</Permission></Grant>
</AccessControlList></AccessControlPolicy>`
		e.ok(req{method: "PUT", target: "/shared/by-bob?acl", body: []byte(doc), creds: &e.bob})
		e.check("bob's object made public", req{method: "GET", target: "/shared/by-bob"}, asAlice, asBob, asAnon)
		e.check("bob's object's acl, read", req{method: "GET", target: "/shared/by-bob?acl"}, asBob)
		// What GetObjectAcl answers, PutObjectAcl takes back.
		out := e.ok(req{method: "GET", target: "/shared/by-bob?acl", creds: &e.bob}).Body.Bytes()
		e.ok(req{method: "PUT", target: "/shared/by-bob?acl", body: out})
		if again := e.ok(req{method: "GET", target: "/shared/by-bob?acl", creds: &e.bob}).Body.String(); again != string(out) {
			t.Fatalf("acl round trip:\n%s\n%s", out, again)
		}
		// Refusals.
		// A missing version is NoSuchVersion to whoever may list the
		// bucket, AccessDenied to others (as a missing key is).
		e.want(e.do(req{method: "GET", target: "/shared/by-bob?acl&versionId=" + meta.NewVersionID(1)}), 404, "NoSuchVersion")
		e.want(e.do(req{method: "GET", target: "/shared/by-bob?acl&versionId=" + meta.NewVersionID(1), creds: &e.bob}), 403, "AccessDenied")
		e.want(e.do(req{method: "PUT", target: "/shared/by-bob?acl", body: []byte(strings.Replace(doc, "<Owner><ID>bob", "<Owner><ID>alice", 1)), creds: &e.bob}), 403, "AccessDenied")
		e.want(e.do(req{method: "PUT", target: "/shared/by-bob?acl", body: []byte("<AccessControlPolicy>"), creds: &e.bob}), 400, "MalformedACLError")
		e.want(e.do(req{method: "PUT", target: "/shared/by-bob?acl", creds: &e.bob}), 400, "MalformedACLError")
		e.want(e.do(req{method: "PUT", target: "/shared/by-bob?acl", creds: &e.bob, hdr: map[string]string{"X-Amz-Grant-Read": `id="nobody"`}}), 400, "InvalidArgument")
		e.want(e.do(req{method: "PUT", target: "/shared/x", body: []byte("x"), hdr: map[string]string{"X-Amz-Acl": "private", "X-Amz-Grant-Read": `id="bob"`}}), 400, "InvalidRequest")
		e.want(e.do(req{method: "PUT", target: "/shared?acl", hdr: map[string]string{"X-Amz-Grant-Read": `emailAddress="bob@example.com"`}}), 400, "UnresolvableGrantByEmailAddress")
		e.want(e.do(req{method: "PUT", target: "/other", hdr: map[string]string{"X-Amz-Grant-Read": `id="nobody"`}}), 400, "InvalidArgument")
		e.want(e.do(req{method: "HEAD", target: "/other"}), 404, "")

		// Bucket ACL: alice makes the bucket public-read, then takes every
		// grant away: she may still read and write its ACL, nothing else.
		e.ok(req{method: "PUT", target: "/shared?acl", hdr: map[string]string{"X-Amz-Acl": "public-read"}})
		e.check("public-read bucket", req{method: "GET", target: "/shared"}, asAlice, asBob, asAnon)
		e.check("public-read bucket: write", req{method: "PUT", target: "/shared/y", body: []byte("y")}, asAlice)
		e.ok(req{method: "PUT", target: "/shared?acl", body: []byte(`<AccessControlPolicy><Owner><ID>alice</ID></Owner><AccessControlList/></AccessControlPolicy>`)})
		e.check("no grants: list", req{method: "GET", target: "/shared"})
		e.check("no grants: write", req{method: "PUT", target: "/shared/z", body: []byte("z")})
		e.check("no grants: acl", req{method: "GET", target: "/shared?acl"}, asAlice)
		e.ok(req{method: "PUT", target: "/shared?acl", hdr: map[string]string{"X-Amz-Acl": "private"}})

		// Copy: the source needs READ, the destination bucket WRITE.
		e.ok(req{method: "PUT", target: "/bobs", creds: &e.bob})
		e.want(e.do(req{method: "PUT", target: "/bobs/c", creds: &e.bob, hdr: map[string]string{"X-Amz-Copy-Source": "/shared/y"}}), 403, "AccessDenied")
		e.ok(req{method: "PUT", target: "/bobs/c", creds: &e.bob, hdr: map[string]string{"X-Amz-Copy-Source": "/shared/bob-read"}})
		e.ok(req{method: "PUT", target: "/shared/y?acl", hdr: map[string]string{"X-Amz-Acl": "authenticated-read"}})
		e.ok(req{method: "PUT", target: "/bobs/c", creds: &e.bob, hdr: map[string]string{"X-Amz-Copy-Source": "/shared/y", "X-Amz-Acl": "public-read"}})
		e.check("a copy gets the request's ACL", req{method: "GET", target: "/bobs/c"}, asAlice, asBob, asAnon)
		// shared is private again: bob's WRITE went with the old ACL.
		e.want(e.do(req{method: "PUT", target: "/shared/c", creds: &e.bob, hdr: map[string]string{"X-Amz-Copy-Source": "/bobs/c"}}), 403, "AccessDenied")
		e.ok(req{method: "PUT", target: "/shared/c", hdr: map[string]string{"X-Amz-Copy-Source": "/bobs/c"}})

		// ListBuckets: each user its own; anonymous none; nobody
		// anonymous creates a bucket.
		lb := decode[listAllMyBucketsResult](t, e.ok(req{method: "GET", target: "/", creds: &e.bob}))
		if len(lb.Buckets) != 1 || lb.Buckets[0].Name != "bobs" {
			t.Fatalf("bob's buckets: %+v", lb.Buckets)
		}
		if lb := decode[listAllMyBucketsResult](t, e.ok(req{method: "GET", target: "/", anonymous: true})); len(lb.Buckets) != 0 {
			t.Fatalf("anonymous buckets: %+v", lb.Buckets)
		}
		e.want(e.do(req{method: "PUT", target: "/anon", anonymous: true}), 403, "AccessDenied")
	})
}

// Anonymous writes to a public-read-write bucket, a multipart upload's
// canned ACL given to the object it completes.
func TestAnonymousWritesAndMultipartACL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/open", hdr: map[string]string{"X-Amz-Acl": "public-read-write"}})
		e.ok(req{method: "PUT", target: "/open/anon", body: []byte("from nobody"), anonymous: true})
		// The bucket's owner owns what anonymous writes.
		pol := decode[accessControlPolicy](t, e.ok(req{method: "GET", target: "/open/anon?acl"}))
		if pol.Owner.ID != "alice" {
			t.Fatalf("anonymous object's owner: %+v", pol.Owner)
		}
		e.check("anonymous object", req{method: "GET", target: "/open/anon"}, asAlice)
		e.ok(req{method: "DELETE", target: "/open/anon", anonymous: true})

		init := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/open/mp?uploads", creds: &e.bob, hdr: map[string]string{"X-Amz-Acl": "public-read"}}))
		up := decode[listMultipartUploadsResult](t, e.ok(req{method: "GET", target: "/open?uploads"}))
		if len(up.Uploads) != 1 || up.Uploads[0].Owner.ID != "bob" {
			t.Fatalf("uploads: %+v", up.Uploads)
		}
		w := e.ok(req{method: "PUT", target: "/open/mp?partNumber=1&uploadId=" + init.UploadID, body: []byte("part"), creds: &e.bob})
		body := `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>` + w.Header().Get("ETag") + `</ETag></Part></CompleteMultipartUpload>`
		e.ok(req{method: "POST", target: "/open/mp?uploadId=" + init.UploadID, body: []byte(body), creds: &e.bob})
		e.check("completed upload's ACL", req{method: "GET", target: "/open/mp"}, asAlice, asBob, asAnon)
		e.check("completed upload's owner", req{method: "PUT", target: "/open/mp?acl", hdr: map[string]string{"X-Amz-Acl": "private"}}, asBob)
	})
}

// GetBucketAcl lists the groups' grants first, then the users' by ID, as
// radosgw does (s3-tests compares the lists in order).
func TestACLDocumentOrder(t *testing.T) {
	acl := meta.ACL{Grants: []meta.Grant{grant(meta.GranteeUser, "zed", meta.PermFullControl), grant(meta.GranteeAllUsers, "", meta.PermRead),
		grant(meta.GranteeUser, "amy", meta.PermRead), grant(meta.GranteeAllUsers, "", meta.PermWrite), grant(meta.GranteeUser, "amy", meta.PermWrite)}}
	d := aclDocument("zed", acl, func(n string) owner { return owner{ID: n, DisplayName: strings.ToUpper(n)} })
	var got []string
	for _, g := range d.List.Grants {
		got = append(got, g.Grantee.Type+" "+g.Grantee.ID+g.Grantee.URI+" "+g.Grantee.DisplayName+" "+g.Permission)
	}
	want := []string{"Group " + uriAllUsers + "  READ", "Group " + uriAllUsers + "  WRITE", "CanonicalUser amy AMY READ", "CanonicalUser amy AMY WRITE", "CanonicalUser zed ZED FULL_CONTROL"}
	if !reflect.DeepEqual(got, want) || d.Owner != (owner{"zed", "ZED"}) {
		t.Fatalf("%q", got)
	}
}

// A bucket and an object written before ACLs (version 1 records) are
// their bucket owner's, private; a new ACL upgrades the bucket's record,
// and the bucket still deletes.
func TestRecordsBeforeACLs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		ctx := context.Background()
		e.ok(req{method: "PUT", target: "/old"})
		e.ok(req{method: "PUT", target: "/old/o", body: []byte("from before"), hdr: map[string]string{"X-Amz-Acl": "public-read"}})
		b, err := e.gw.Meta().GetBucket(ctx, "old")
		if err != nil {
			t.Fatal(err)
		}
		ix, err := e.gw.Meta().Index(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		en, err := ix.Get(ctx, "o")
		if err != nil {
			t.Fatal(err)
		}
		// The records as version 1 wrote them.
		var be encoding.Encoder
		mk := be.Begin(1, 1)
		be.String(b.Name)
		be.String(b.Owner)
		be.String(b.ID)
		be.Varint(b.Created.UnixNano())
		be.String(b.Region)
		be.End(mk)
		if err := e.io.SetXattr(ctx, "s3.bucket.old", "s3.bucket", be.Data()); err != nil {
			t.Fatal(err)
		}
		var ee encoding.Encoder
		mk = ee.Begin(1, 1)
		ee.Varint(en.Size)
		ee.String(en.ETag)
		ee.Varint(en.MTime.UnixNano())
		ee.String(en.ContentType)
		ee.Uvarint(0)
		ee.Uvarint(uint64(len(en.Extents)))
		for _, x := range en.Extents {
			ee.Uint64(x.ID)
			ee.Varint(x.Size)
		}
		ee.Bool(false)
		ee.End(mk)
		st, err := kv.Open(ctx, e.io, "b."+b.ID, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, "o", ee.Data()); err != nil {
			t.Fatal(err)
		}

		for _, target := range []string{"/old?acl", "/old/o?acl"} {
			pol := decode[accessControlPolicy](t, e.ok(req{method: "GET", target: target}))
			if pol.Owner.ID != "alice" || len(pol.List.Grants) != 1 || pol.List.Grants[0].Grantee.ID != "alice" || pol.List.Grants[0].Permission != "FULL_CONTROL" {
				t.Fatalf("%s: %+v", target, pol)
			}
		}
		e.check("a version 1 object", req{method: "GET", target: "/old/o"}, asAlice)
		e.check("a version 1 bucket", req{method: "GET", target: "/old"}, asAlice)
		lr := decode[listBucketResult](t, e.ok(req{method: "GET", target: "/old"}))
		if len(lr.Contents) != 1 || lr.Contents[0].Owner == nil || lr.Contents[0].Owner.ID != "alice" {
			t.Fatalf("listing: %+v", lr.Contents)
		}
		e.ok(req{method: "PUT", target: "/old?acl", hdr: map[string]string{"X-Amz-Acl": "public-read"}})
		e.check("the upgraded bucket", req{method: "GET", target: "/old"}, asAlice, asBob, asAnon)
		e.ok(req{method: "DELETE", target: "/old/o"})
		e.ok(req{method: "DELETE", target: "/old"})
		e.want(e.do(req{method: "HEAD", target: "/old"}), 404, "")
	})
}
