package s3gw

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
)

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		fold, want bool
	}{
		{"*", "", false, true},
		{"arn:aws:s3:::b/*", "arn:aws:s3:::b/x/y", false, true},
		{"arn:aws:s3:::b/*", "arn:aws:s3:::b", false, false},
		{"arn:aws:s3:::b/a?c", "arn:aws:s3:::b/abc", false, true},
		{"arn:aws:s3:::b/a?c", "arn:aws:s3:::b/abbc", false, false},
		{"a*b*c", "axxbyyc", false, true},
		{"a*b*c", "axxbyy", false, false},
		{"s3:Get*", "s3:getobject", true, true},
		{"s3:Get*", "s3:getobject", false, false},
		{"**a", "bba", false, true},
	} {
		if got := globMatch(c.pattern, c.s, c.fold); got != c.want {
			t.Errorf("globMatch(%q, %q, %v) = %v", c.pattern, c.s, c.fold, got)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	good := []string{
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pb/*"}]}`,
		`{"Statement":{"Effect":"Deny","Principal":{"AWS":["arn:aws:iam:::user/bob","carol"]},"Action":["s3:*"],"Resource":["arn:aws:s3:::pb","arn:aws:s3:::pb/*"],
			"Condition":{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","192.0.2.1"]},"StringLikeIfExists":{"s3:prefix":"home/*"},"NumericLessThan":{"s3:max-keys":"10"}}}}`,
		`{"Statement":[{"Effect":"Allow","NotPrincipal":{"AWS":"bob"},"NotAction":"s3:DeleteObject","NotResource":"arn:aws:s3:::p*/secret"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:ListBucket","Resource":["arn:aws:s3::*:pb","arn:aws:s3:::*"]}]}`,
	}
	for _, doc := range good {
		if _, err := parsePolicy([]byte(doc), "pb"); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
	bad := []string{
		``,
		`[]`,
		`{"Statement":[]}`,
		`{"Statement":[{"Effect":"Maybe","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pb/*"}]}`,
		`{"Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::pb/*"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"bob","Action":"s3:GetObject","Resource":"arn:aws:s3:::pb/*"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Resource":"arn:aws:s3:::pb/*"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"ec2:RunInstances","Resource":"arn:aws:s3:::pb/*"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::other/*"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:iam:::pb"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"pb/*"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pb/*","Condition":{"DateLessThan":{"aws:CurrentTime":"2030-01-01"}}}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pb/*","Condition":{"IpAddress":{"aws:SourceIp":"nowhere"}}}]}`,
		`{"Version":"2001-01-01","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pb/*"}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pb/*"}`,
	}
	for _, doc := range bad {
		if _, err := parsePolicy([]byte(doc), "pb"); err == nil || translate(err).Code != "MalformedPolicy" {
			t.Errorf("%s: %v, want MalformedPolicy", doc, err)
		}
	}
}

// A policy's decision, case by case: a pure function of the policy and
// the request.
func TestPolicyEvaluate(t *testing.T) {
	p, err := parsePolicy([]byte(`{"Statement":[
		{"Sid":"public","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pb/public/*"},
		{"Sid":"bob lists home","Effect":"Allow","Principal":{"AWS":"arn:aws:iam:::user/bob"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::pb",
			"Condition":{"StringLike":{"s3:prefix":"home/bob/*"}}},
		{"Sid":"no deletes from outside","Effect":"Deny","Principal":"*","Action":"s3:Delete*","Resource":"arn:aws:s3:::pb/*",
			"Condition":{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}},
		{"Sid":"only public-read puts","Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::pb/*",
			"Condition":{"StringNotEquals":{"s3:x-amz-acl":"public-read"}}},
		{"Sid":"small pages","Effect":"Allow","Principal":{"AWS":"carol"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::pb",
			"Condition":{"NumericLessThanEquals":{"s3:max-keys":"10"},"Bool":{"aws:SecureTransport":"false"}}}
	]}`), "pb")
	if err != nil {
		t.Fatal(err)
	}
	ctx := func(kv ...string) map[string][]string {
		m := map[string][]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = append(m[kv[i]], kv[i+1])
		}
		return m
	}
	obj := func(k string) string { return "arn:aws:s3:::pb/" + k }
	const bucket = "arn:aws:s3:::pb"
	for _, c := range []struct {
		name string
		rq   policyRequest
		want decision
	}{
		{"anonymous reads a public object", policyRequest{"", "s3:GetObject", obj("public/a"), nil}, allowed},
		{"anonymous reads another", policyRequest{"", "s3:GetObject", obj("private/a"), nil}, noDecision},
		{"action case folds", policyRequest{"", "S3:getobject", obj("public/a"), nil}, allowed},
		{"bob lists his home", policyRequest{"bob", "s3:ListBucket", bucket, ctx("s3:prefix", "home/bob/x")}, allowed},
		{"bob lists another home", policyRequest{"bob", "s3:ListBucket", bucket, ctx("s3:prefix", "home/eve/")}, noDecision},
		{"bob lists without a prefix", policyRequest{"bob", "s3:ListBucket", bucket, nil}, noDecision},
		{"eve lists bob's home", policyRequest{"eve", "s3:ListBucket", bucket, ctx("s3:prefix", "home/bob/x")}, noDecision},
		{"a delete from outside", policyRequest{"alice", "s3:DeleteObject", obj("a"), ctx("aws:sourceip", "192.0.2.7")}, denied},
		{"a delete from inside", policyRequest{"alice", "s3:DeleteObject", obj("a"), ctx("aws:sourceip", "10.1.2.3")}, noDecision},
		{"a delete from nowhere known", policyRequest{"alice", "s3:DeleteObject", obj("a"), nil}, denied},
		{"a private put", policyRequest{"alice", "s3:PutObject", obj("a"), ctx("s3:x-amz-acl", "private", "aws:sourceip", "10.0.0.1")}, denied},
		{"a put with no acl", policyRequest{"alice", "s3:PutObject", obj("a"), nil}, denied},
		{"a public-read put", policyRequest{"alice", "s3:PutObject", obj("a"), ctx("s3:x-amz-acl", "public-read")}, noDecision},
		{"carol's small page", policyRequest{"carol", "s3:ListBucket", bucket, ctx("s3:max-keys", "5", "aws:securetransport", "false")}, allowed},
		{"carol's big page", policyRequest{"carol", "s3:ListBucket", bucket, ctx("s3:max-keys", "50", "aws:securetransport", "false")}, noDecision},
		{"carol over TLS", policyRequest{"carol", "s3:ListBucket", bucket, ctx("s3:max-keys", "5", "aws:securetransport", "true")}, noDecision},
	} {
		if got := p.evaluate(c.rq); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	var none *bucketPolicy
	if none.evaluate(policyRequest{}) != noDecision {
		t.Fatal("no policy decided")
	}
	// NotPrincipal, NotAction and NotResource.
	q, err := parsePolicy([]byte(`{"Statement":[{"Effect":"Deny","NotPrincipal":{"AWS":"alice"},"NotAction":"s3:GetObject","NotResource":"arn:aws:s3:::pb/open/*"}]}`), "pb")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rq   policyRequest
		want decision
	}{
		{policyRequest{"bob", "s3:PutObject", obj("x"), nil}, denied},
		{policyRequest{"", "s3:PutObject", obj("x"), nil}, denied},
		{policyRequest{"alice", "s3:PutObject", obj("x"), nil}, noDecision},
		{policyRequest{"bob", "s3:GetObject", obj("x"), nil}, noDecision},
		{policyRequest{"bob", "s3:PutObject", obj("open/x"), nil}, noDecision},
	} {
		if got := q.evaluate(c.rq); got != c.want {
			t.Errorf("%+v: %v, want %v", c.rq, got, c.want)
		}
	}
}

func TestConditionNull(t *testing.T) {
	if !condition("Null", nil, []string{"true"}) || condition("Null", []string{"x"}, []string{"true"}) || !condition("Null", []string{"x"}, []string{"false"}) {
		t.Fatal("Null")
	}
	if !condition("StringEqualsIfExists", nil, []string{"a"}) || condition("StringEquals", nil, []string{"a"}) || !condition("StringNotEquals", nil, []string{"a"}) {
		t.Fatal("absent keys")
	}
	if !condition("IpAddress", []string{"2001:db8::1"}, []string{"2001:db8::/32"}) || condition("IpAddress", []string{"2001:db9::1"}, []string{"2001:db8::/32"}) {
		t.Fatal("IPv6")
	}
}

// Bucket policies over HTTP: put, get, delete, and their effect beside
// the ACLs.
func TestBucketPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/pbk"})
		e.ok(req{method: "PUT", target: "/pbk/public/a", body: []byte("open")})
		e.ok(req{method: "PUT", target: "/pbk/home/bob/x", body: []byte("bob's")})
		e.ok(req{method: "PUT", target: "/pbk/secret", body: []byte("closed")})
		e.want(e.do(req{method: "GET", target: "/pbk?policy"}), 404, "NoSuchBucketPolicy")
		e.check("no policy: public object", req{method: "GET", target: "/pbk/public/a"}, asAlice)

		doc := `{"Version":"2012-10-17","Statement":[
			{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pbk/public/*"},
			{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam:::user/bob"},"Action":["s3:ListBucket"],"Resource":"arn:aws:s3:::pbk","Condition":{"StringLike":{"s3:prefix":"home/bob/*"}}},
			{"Effect":"Allow","Principal":{"AWS":"bob"},"Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::pbk/home/bob/*"},
			{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::pbk/secret"}]}`
		e.check("put the policy", req{method: "PUT", target: "/pbk?policy", body: []byte(doc)}, asAlice)
		if got := e.ok(req{method: "GET", target: "/pbk?policy"}).Body.String(); got != doc {
			t.Fatalf("policy read back: %s", got)
		}
		e.check("get the policy", req{method: "GET", target: "/pbk?policy"}, asAlice)
		e.check("policy: public object", req{method: "GET", target: "/pbk/public/a"}, asAlice, asBob, asAnon)
		e.check("policy: secret object", req{method: "GET", target: "/pbk/secret"}, asAlice)
		e.check("policy: bob's home listed", req{method: "GET", target: "/pbk?list-type=2&prefix=home/bob/"}, asAlice, asBob)
		e.check("policy: other listing", req{method: "GET", target: "/pbk?list-type=2&prefix=home/"}, asAlice)
		e.check("policy: bob writes his home", req{method: "PUT", target: "/pbk/home/bob/y", body: []byte("y")}, asAlice, asBob)
		e.check("policy: bob writes elsewhere", req{method: "PUT", target: "/pbk/home/y", body: []byte("y")}, asAlice)
		// The Deny binds the owner too, and DeleteObjects per key.
		e.check("policy: delete the secret", req{method: "DELETE", target: "/pbk/secret"})
		dr := decode[deleteResult](t, e.ok(req{method: "POST", target: "/pbk?delete", body: []byte(`<Delete><Object><Key>secret</Key></Object><Object><Key>home/y</Key></Object></Delete>`)}))
		if len(dr.Errors) != 1 || dr.Errors[0].Key != "secret" || dr.Errors[0].Code != "AccessDenied" || len(dr.Deleted) != 1 {
			t.Fatalf("delete objects: %+v", dr)
		}
		e.want(e.do(req{method: "PUT", target: "/pbk?policy", body: []byte(`{"Statement":[]}`)}), 400, "MalformedPolicy")
		e.want(e.do(req{method: "PUT", target: "/pbk?policy", body: []byte(strings.ReplaceAll(doc, "arn:aws:s3:::pbk/secret", "arn:aws:s3:::other/secret"))}), 400, "MalformedPolicy")
		e.check("delete the policy", req{method: "DELETE", target: "/pbk?policy"}, asAlice)
		e.want(e.do(req{method: "GET", target: "/pbk?policy"}), 404, "NoSuchBucketPolicy")
		e.check("policy gone: public object", req{method: "GET", target: "/pbk/public/a"}, asAlice)
		e.ok(req{method: "DELETE", target: "/pbk/secret"})

		// A policy's IP condition: the gateway's requests come from
		// 192.0.2.1 (httptest's RemoteAddr).
		e.ok(req{method: "PUT", target: "/pbk?policy", body: []byte(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pbk/*","Condition":{"IpAddress":{"aws:SourceIp":"192.0.2.0/24"}}}]}`)})
		e.check("from the allowed network", req{method: "GET", target: "/pbk/public/a"}, asAlice, asBob, asAnon)
		e.check("from elsewhere", req{method: "GET", target: "/pbk/public/a", mutate: func(r *http.Request) { r.RemoteAddr = "198.51.100.1:1234" }}, asAlice)
	})
}

// A resource in radosgw's tenant form matches the bucket, and a Referer
// condition ...IfExists passes requests without one (s3-tests'
// test_bucket_policy_set_condition_operator_end_with_IfExists).
func TestPolicyTenantResourceAndIfExists(t *testing.T) {
	p, err := parsePolicy([]byte(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3::*:pb/*",
		"Condition":{"StringLikeIfExists":{"aws:Referer":"http://www.example.com/*"}}}]}`), "pb")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		referer string
		want    decision
	}{{"http://www.example.com/", allowed}, {"http://www.example.com/index.html", allowed}, {"", allowed}, {"http://example.com/", noDecision}} {
		ctx := map[string][]string{}
		if c.referer != "" {
			ctx["aws:referer"] = []string{c.referer}
		}
		if got := p.evaluate(policyRequest{"", "s3:GetObject", "arn:aws:s3:::pb/foo", ctx}); got != c.want {
			t.Errorf("referer %q: %v, want %v", c.referer, got, c.want)
		}
	}
}
