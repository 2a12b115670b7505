package s3gw

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"reflect"
	"testing"
)

// FuzzXMLBodies: the request bodies the gateway parses never panic it,
// and what they do not parse is MalformedXML (or too long).
func FuzzXMLBodies(f *testing.F) {
	f.Add([]byte(`<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object></Delete>`))
	f.Add([]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>`))
	f.Add([]byte(`<CreateBucketConfiguration><LocationConstraint>eu</LocationConstraint></CreateBucketConfiguration>`))
	f.Add([]byte(`<Delete><Object><Key>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range []any{&deleteRequest{}, &completeMultipartUpload{}, &createBucketConfiguration{}} {
			err := decodeXML(bytes.NewReader(b), v)
			if err != nil {
				if c := translate(err).Code; c != "MalformedXML" && c != "MaxMessageLengthExceeded" {
					t.Fatalf("%q: %v -> %s", b, err, c)
				}
			}
		}
	})
}

func FuzzRange(f *testing.F) {
	f.Add("bytes=0-4", int64(10))
	f.Add("bytes=-3", int64(2))
	f.Fuzz(func(t *testing.T, h string, size int64) {
		if size < 0 {
			return
		}
		off, n, ok, err := parseRange(h, size)
		if ok && err == nil && (off < 0 || n <= 0 || off+n > size) {
			t.Fatalf("%q of %d: [%d,+%d)", h, size, off, n)
		}
	})
}

// FuzzACL: an AccessControlPolicy body or a grant header never panics
// the gateway; what it refuses is one of S3's ACL errors, and what it
// takes writes out as a document that reads back the same.
func FuzzACL(f *testing.F) {
	f.Add([]byte(`<AccessControlPolicy><Owner><ID>alice</ID></Owner><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`), `id="bob", uri="http://acs.amazonaws.com/groups/global/AuthenticatedUsers"`)
	f.Add([]byte(`<AccessControlPolicy><AccessControlList><Grant><Grantee><EmailAddress>a@b</EmailAddress></Grantee><Permission>WRITE</Permission></Grant></AccessControlList></AccessControlPolicy>`), `emailAddress="x"`)
	f.Add([]byte(`<AccessControlPolicy>`), `id=","`)
	codes := map[string]bool{"MalformedACLError": true, "AccessDenied": true, "InvalidArgument": true, "UnresolvableGrantByEmailAddress": true, "InvalidRequest": true}
	f.Fuzz(func(t *testing.T, body []byte, grants string) {
		acl, err := parseACLPolicy(body, "alice")
		if err != nil {
			if c := translate(err).Code; !codes[c] {
				t.Fatalf("%q: %v -> %s", body, err, c)
			}
		} else {
			out, xerr := xml.Marshal(aclDocument("alice", acl, func(n string) owner { return owner{ID: n, DisplayName: n} }))
			if xerr != nil {
				t.Fatal(xerr)
			}
			again, err := parseACLPolicy(out, "alice")
			if err != nil || !reflect.DeepEqual(again.Grants, acl.Grants) {
				t.Fatalf("%q -> %s -> %+v %v", body, out, again, err)
			}
		}
		h := http.Header{}
		h.Set("X-Amz-Grant-Read", grants)
		if _, _, err := headerACL(h, "alice", "alice"); err != nil {
			if c := translate(err).Code; !codes[c] {
				t.Fatalf("%q: %v -> %s", grants, err, c)
			}
		}
	})
}

// FuzzPolicy: a bucket policy never panics the gateway, neither parsed
// nor evaluated; what it refuses is MalformedPolicy.
func FuzzPolicy(f *testing.F) {
	f.Add([]byte(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:Get*","Resource":"arn:aws:s3:::fz/*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}]}`), "s3:GetObject", "arn:aws:s3:::fz/a", "10.1.1.1")
	f.Add([]byte(`{"Statement":{"Effect":"Deny","NotPrincipal":{"AWS":["a"]},"NotAction":"s3:*","NotResource":"*","Condition":{"NumericLessThanIfExists":{"s3:max-keys":"1"},"Null":{"s3:prefix":"true"}}}}`), "s3:ListBucket", "arn:aws:s3:::fz", "::1")
	f.Fuzz(func(t *testing.T, doc []byte, action, resource, ip string) {
		p, err := parsePolicy(doc, "fz")
		if err != nil {
			if c := translate(err).Code; c != "MalformedPolicy" {
				t.Fatalf("%q: %v -> %s", doc, err, c)
			}
			return
		}
		ctx := map[string][]string{"aws:sourceip": {ip}, "s3:prefix": {resource}, "s3:max-keys": {ip}}
		for _, user := range []string{"", "a"} {
			_ = p.evaluate(policyRequest{user: user, action: action, resource: resource, context: ctx})
		}
	})
}
