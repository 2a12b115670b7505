package s3gw

import (
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

func ownershipBody(o string) []byte {
	return []byte("<OwnershipControls><Rule><ObjectOwnership>" + o + "</ObjectOwnership></Rule></OwnershipControls>")
}

func pabBody(acls, ignore, policy, restrict bool) []byte {
	b := func(v bool) string {
		if v {
			return "true"
		}
		return "false"
	}
	return []byte("<PublicAccessBlockConfiguration><BlockPublicAcls>" + b(acls) + "</BlockPublicAcls><IgnorePublicAcls>" + b(ignore) +
		"</IgnorePublicAcls><BlockPublicPolicy>" + b(policy) + "</BlockPublicPolicy><RestrictPublicBuckets>" + b(restrict) + "</RestrictPublicBuckets></PublicAccessBlockConfiguration>")
}

// Object ownership controls (S3 API reference:
// PutBucketOwnershipControls, GetBucketOwnershipControls,
// DeleteBucketOwnershipControls, CreateBucket's x-amz-object-ownership;
// the user guide's "Controlling ownership of objects and disabling
// ACLs"): BucketOwnerPreferred takes objects written with
// bucket-owner-full-control, BucketOwnerEnforced disables ACLs.
func TestOwnershipControls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/own", hdr: map[string]string{"X-Amz-Grant-Full-Control": `id="alice"`, "X-Amz-Grant-Write": `id="bob"`}})
		e.want(e.do(req{method: "GET", target: "/own?ownershipControls"}), 404, "OwnershipControlsNotFoundError")
		e.want(e.do(req{method: "PUT", target: "/own?ownershipControls", body: ownershipBody("Nobody")}), 400, "MalformedXML")
		e.want(e.do(req{method: "PUT", target: "/own?ownershipControls", body: []byte("<OwnershipControls></OwnershipControls>")}), 400, "MalformedXML")
		e.check("put ownership controls", req{method: "PUT", target: "/own?ownershipControls", body: ownershipBody("BucketOwnerPreferred")}, asAlice)
		if oc := decode[ownershipControls](t, e.ok(req{method: "GET", target: "/own?ownershipControls"})); len(oc.Rules) != 1 || oc.Rules[0].ObjectOwnership != "BucketOwnerPreferred" {
			t.Fatalf("ownership controls: %+v", oc)
		}
		e.check("get ownership controls", req{method: "GET", target: "/own?ownershipControls"}, asAlice)

		// BucketOwnerPreferred: bob's write with bucket-owner-full-control
		// is alice's; without, bob's.
		e.ok(req{method: "PUT", target: "/own/given", body: []byte("g"), creds: &e.bob, hdr: map[string]string{"X-Amz-Acl": "bucket-owner-full-control"}})
		e.ok(req{method: "PUT", target: "/own/kept", body: []byte("k"), creds: &e.bob, hdr: map[string]string{"X-Amz-Acl": "public-read"}})
		if p := decode[accessControlPolicy](t, e.ok(req{method: "GET", target: "/own/given?acl"})); p.Owner.ID != "alice" {
			t.Fatalf("preferred, given: owner %s", p.Owner.ID)
		}
		if p := decode[accessControlPolicy](t, e.ok(req{method: "GET", target: "/own/kept?acl", creds: &e.bob})); p.Owner.ID != "bob" {
			t.Fatalf("preferred, kept: owner %s", p.Owner.ID)
		}
		e.check("bob's public object", req{method: "GET", target: "/own/kept"}, asAlice, asBob, asAnon)

		// BucketOwnerEnforced needs a bucket ACL of the owner alone.
		e.want(e.do(req{method: "PUT", target: "/own?ownershipControls", body: ownershipBody("BucketOwnerEnforced")}), 400, "InvalidBucketAclWithObjectOwnership")
		e.ok(req{method: "PUT", target: "/own?acl", hdr: map[string]string{"X-Amz-Acl": "private"}})
		e.ok(req{method: "PUT", target: "/own?ownershipControls", body: ownershipBody("BucketOwnerEnforced")})
		// ACLs disabled: the owner owns everything, ACLs grant nothing,
		// and only the owner's full control may be set.
		e.check("bob's object, ACLs disabled", req{method: "GET", target: "/own/kept"}, asAlice)
		if p := decode[accessControlPolicy](t, e.ok(req{method: "GET", target: "/own/kept?acl"})); p.Owner.ID != "alice" || len(p.List.Grants) != 1 || p.List.Grants[0].Grantee.ID != "alice" {
			t.Fatalf("enforced acl: %+v", p)
		}
		e.want(e.do(req{method: "PUT", target: "/own/x", body: []byte("x"), hdr: map[string]string{"X-Amz-Acl": "public-read"}}), 400, "AccessControlListNotSupported")
		e.want(e.do(req{method: "PUT", target: "/own/x", hdr: map[string]string{"X-Amz-Copy-Source": "/own/given", "X-Amz-Grant-Read": `id="bob"`}}), 400, "AccessControlListNotSupported")
		e.want(e.do(req{method: "POST", target: "/own/x?uploads", hdr: map[string]string{"X-Amz-Acl": "authenticated-read"}}), 400, "AccessControlListNotSupported")
		e.want(e.do(req{method: "PUT", target: "/own?acl", hdr: map[string]string{"X-Amz-Acl": "public-read"}}), 400, "AccessControlListNotSupported")
		e.want(e.do(req{method: "PUT", target: "/own/given?acl", hdr: map[string]string{"X-Amz-Acl": "public-read"}}), 400, "AccessControlListNotSupported")
		e.ok(req{method: "PUT", target: "/own/x", body: []byte("x"), hdr: map[string]string{"X-Amz-Acl": "bucket-owner-full-control"}})
		e.ok(req{method: "PUT", target: "/own?acl", hdr: map[string]string{"X-Amz-Acl": "private"}})
		// Deleted: the ACLs count again.
		e.check("delete ownership controls", req{method: "DELETE", target: "/own?ownershipControls"}, asAlice)
		e.want(e.do(req{method: "GET", target: "/own?ownershipControls"}), 404, "OwnershipControlsNotFoundError")
		e.check("bob's public object again", req{method: "GET", target: "/own/kept"}, asAlice, asBob, asAnon)

		// At creation.
		e.ok(req{method: "PUT", target: "/own2", hdr: map[string]string{"X-Amz-Object-Ownership": "BucketOwnerEnforced"}})
		if oc := decode[ownershipControls](t, e.ok(req{method: "GET", target: "/own2?ownershipControls"})); len(oc.Rules) != 1 || oc.Rules[0].ObjectOwnership != "BucketOwnerEnforced" {
			t.Fatalf("created enforced: %+v", oc)
		}
		e.want(e.do(req{method: "PUT", target: "/own3", hdr: map[string]string{"X-Amz-Object-Ownership": "BucketOwnerEnforced", "X-Amz-Acl": "public-read"}}), 400, "InvalidBucketAclWithObjectOwnership")
		e.want(e.do(req{method: "PUT", target: "/own3", hdr: map[string]string{"X-Amz-Object-Ownership": "Mine"}}), 400, "InvalidArgument")
	})
}

// The public access block (S3 API reference: PutPublicAccessBlock,
// GetPublicAccessBlock, DeletePublicAccessBlock; the user guide's
// "Blocking public access"): each setting where S3 applies it.
func TestPublicAccessBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/pab", hdr: map[string]string{"X-Amz-Acl": "public-read"}})
		e.ok(req{method: "PUT", target: "/pab/o", body: []byte("o"), hdr: map[string]string{"X-Amz-Acl": "public-read"}})
		e.want(e.do(req{method: "GET", target: "/pab?publicAccessBlock"}), 404, "NoSuchPublicAccessBlockConfiguration")
		e.ok(req{method: "DELETE", target: "/pab?publicAccessBlock"})
		e.want(e.do(req{method: "PUT", target: "/pab?publicAccessBlock", body: []byte("<PublicAccessBlockConfiguration><BlockPublicAcls>maybe</BlockPublicAcls></PublicAccessBlockConfiguration>")}), 400, "MalformedXML")
		e.check("public listing", req{method: "GET", target: "/pab?list-type=2"}, asAlice, asBob, asAnon)
		e.check("public object", req{method: "GET", target: "/pab/o"}, asAlice, asBob, asAnon)

		// IgnorePublicAcls.
		e.check("put the block", req{method: "PUT", target: "/pab?publicAccessBlock", body: pabBody(false, true, false, false)}, asAlice)
		got := decode[publicAccessBlockConfiguration](t, e.ok(req{method: "GET", target: "/pab?publicAccessBlock"}))
		if got.BlockPublicAcls || !got.IgnorePublicAcls || got.BlockPublicPolicy || got.RestrictPublicBuckets {
			t.Fatalf("read back: %+v", got)
		}
		e.check("get the block", req{method: "GET", target: "/pab?publicAccessBlock"}, asAlice)
		e.check("listing, public ACL ignored", req{method: "GET", target: "/pab?list-type=2"}, asAlice)
		e.check("object, public ACL ignored", req{method: "GET", target: "/pab/o"}, asAlice)

		// BlockPublicAcls.
		e.ok(req{method: "PUT", target: "/pab?publicAccessBlock", body: pabBody(true, false, false, false)})
		for _, canned := range []string{"public-read", "public-read-write", "authenticated-read"} {
			e.want(e.do(req{method: "PUT", target: "/pab?acl", hdr: map[string]string{"X-Amz-Acl": canned}}), 403, "AccessDenied")
			e.want(e.do(req{method: "PUT", target: "/pab/o?acl", hdr: map[string]string{"X-Amz-Acl": canned}}), 403, "AccessDenied")
			e.want(e.do(req{method: "PUT", target: "/pab/n", body: []byte("n"), hdr: map[string]string{"X-Amz-Acl": canned}}), 403, "AccessDenied")
		}
		e.want(e.do(req{method: "PUT", target: "/pab/n", body: []byte("n"), hdr: map[string]string{"X-Amz-Grant-Read": `uri="` + uriAllUsers + `"`}}), 403, "AccessDenied")
		e.ok(req{method: "PUT", target: "/pab/n", body: []byte("n"), hdr: map[string]string{"X-Amz-Acl": "private"}})
		e.check("existing public ACLs still count", req{method: "GET", target: "/pab/o"}, asAlice, asBob, asAnon)

		// BlockPublicPolicy.
		public := `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pab/*"}]}`
		e.ok(req{method: "PUT", target: "/pab?acl", hdr: map[string]string{"X-Amz-Acl": "private"}})
		e.ok(req{method: "PUT", target: "/pab/o?acl", hdr: map[string]string{"X-Amz-Acl": "private"}})
		e.ok(req{method: "PUT", target: "/pab?publicAccessBlock", body: pabBody(false, false, true, false)})
		e.want(e.do(req{method: "PUT", target: "/pab?policy", body: []byte(public)}), 403, "AccessDenied")
		e.ok(req{method: "PUT", target: "/pab?policy", body: []byte(`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::pab/*"}]}`)})
		e.ok(req{method: "PUT", target: "/pab?policy", body: []byte(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pab/*","Condition":{"IpAddress":{"aws:SourceIp":"192.0.2.0/24"}}}]}`)})

		// RestrictPublicBuckets: a public policy reaches the owner only.
		e.ok(req{method: "PUT", target: "/pab?publicAccessBlock", body: pabBody(false, false, false, false)})
		e.ok(req{method: "PUT", target: "/pab?policy", body: []byte(public)})
		e.check("public policy", req{method: "GET", target: "/pab/o"}, asAlice, asBob, asAnon)
		e.ok(req{method: "PUT", target: "/pab?publicAccessBlock", body: pabBody(false, false, false, true)})
		e.check("public policy restricted", req{method: "GET", target: "/pab/o"}, asAlice)

		e.check("delete the block", req{method: "DELETE", target: "/pab?publicAccessBlock"}, asAlice)
		e.want(e.do(req{method: "GET", target: "/pab?publicAccessBlock"}), 404, "NoSuchPublicAccessBlockConfiguration")
		e.check("public policy again", req{method: "GET", target: "/pab/o"}, asAlice, asBob, asAnon)
	})
}

// GetBucketPolicyStatus: public by its policy or, while ACLs count, by
// its ACL (as radosgw answers s3-tests' *_bucket_policy_status).
func TestBucketPolicyStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/pst"})
		status := func() bool {
			return decode[policyStatus](t, e.ok(req{method: "GET", target: "/pst?policyStatus"})).IsPublic
		}
		if status() {
			t.Fatal("a new bucket is public")
		}
		e.check("policy status", req{method: "GET", target: "/pst?policyStatus"}, asAlice)
		e.ok(req{method: "PUT", target: "/pst?acl", hdr: map[string]string{"X-Amz-Acl": "authenticated-read"}})
		if !status() {
			t.Fatal("an authenticated-read bucket is not public")
		}
		e.ok(req{method: "PUT", target: "/pst?publicAccessBlock", body: pabBody(false, true, false, false)})
		if status() {
			t.Fatal("a public ACL ignored still counts")
		}
		e.ok(req{method: "DELETE", target: "/pst?publicAccessBlock"})
		e.ok(req{method: "PUT", target: "/pst?acl", hdr: map[string]string{"X-Amz-Acl": "private"}})
		for _, c := range []struct {
			policy string
			public bool
		}{
			{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::pst"}]}`, true},
			{`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::pst"}]}`, false},
			{`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::pst","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/32"}}}]}`, false},
		} {
			e.ok(req{method: "PUT", target: "/pst?policy", body: []byte(c.policy)})
			if status() != c.public {
				t.Fatalf("%s: public %v", c.policy, !c.public)
			}
		}
	})
}

// policyPublic as a table (the user guide's "The meaning of public").
func TestPolicyPublic(t *testing.T) {
	for _, c := range []struct {
		stmt   string
		public bool
	}{
		{`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}`, true},
		{`{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}`, true},
		{`{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}`, false},
		{`{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam:::user/bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}`, false},
		{`{"Effect":"Allow","NotPrincipal":{"AWS":"bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}`, true},
		{`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"IpAddress":{"aws:SourceIp":"10.1.0.0/16"}}}`, false},
		{`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}}}`, true},
		{`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}`, true},
		{`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"StringEquals":{"aws:username":"bob"}}}`, false},
		{`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"StringLike":{"aws:username":"b*"}}}`, true},
		{`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"StringEquals":{"s3:prefix":"home/"}}}`, true},
		{`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"StringEqualsIfExists":{"aws:username":"bob"}}}`, true},
	} {
		p, err := parsePolicy([]byte(`{"Statement":[`+c.stmt+`]}`), "b")
		if err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		if got := policyPublic(p); got != c.public {
			t.Errorf("%s: public %v, want %v", c.stmt, got, c.public)
		}
	}
}

// aclSubject as a table: what decides access under each setting.
func TestACLSubject(t *testing.T) {
	pub := meta.ACL{Grants: []meta.Grant{{Kind: meta.GranteeUser, ID: "bob", Perm: meta.PermFullControl}, {Kind: meta.GranteeAllUsers, Perm: meta.PermRead}, {Kind: meta.GranteeAuthenticated, Perm: meta.PermWrite}}}
	for _, c := range []struct {
		name   string
		b      meta.Bucket
		who    string
		perm   meta.Perm
		permit bool
	}{
		{"no settings: public read", meta.Bucket{Owner: "alice"}, "", meta.PermRead, true},
		{"no settings: owner by grant", meta.Bucket{Owner: "alice"}, "bob", meta.PermWrite, true},
		{"ignore public: anonymous", meta.Bucket{Owner: "alice", PublicAccessBlock: &meta.PublicAccessBlock{IgnorePublicAcls: true}}, "", meta.PermRead, false},
		{"ignore public: authenticated", meta.Bucket{Owner: "alice", PublicAccessBlock: &meta.PublicAccessBlock{IgnorePublicAcls: true}}, "carol", meta.PermWrite, false},
		{"ignore public: named user kept", meta.Bucket{Owner: "alice", PublicAccessBlock: &meta.PublicAccessBlock{IgnorePublicAcls: true}}, "bob", meta.PermRead, true},
		{"block public acls only: still read", meta.Bucket{Owner: "alice", PublicAccessBlock: &meta.PublicAccessBlock{BlockPublicAcls: true}}, "", meta.PermRead, true},
		{"enforced: grantee", meta.Bucket{Owner: "alice", Ownership: meta.OwnershipOwnerEnforced}, "bob", meta.PermRead, false},
		{"enforced: bucket owner", meta.Bucket{Owner: "alice", Ownership: meta.OwnershipOwnerEnforced}, "alice", meta.PermRead, true},
		{"preferred: grants count", meta.Bucket{Owner: "alice", Ownership: meta.OwnershipOwnerPreferred}, "", meta.PermRead, true},
	} {
		o, acl := aclSubject(c.b, "bob", pub)
		if got := permitted(o, acl, c.who, c.perm); got != c.permit {
			t.Errorf("%s: %v, want %v", c.name, got, c.permit)
		}
	}
}
