package s3gw

// Object ownership controls and the public access block (the S3 user
// guide's "Controlling ownership of objects and disabling ACLs" and
// "Blocking public access to your Amazon S3 storage"), and
// GetBucketPolicyStatus.
//
// Ownership: ObjectWriter (the default: the writer owns what it writes),
// BucketOwnerPreferred (an object written with the
// bucket-owner-full-control canned ACL is the bucket owner's), or
// BucketOwnerEnforced: ACLs are disabled — the bucket owner owns every
// object, ACLs no longer grant anything, and a request that would set an
// ACL other than the owner's full control is refused with
// AccessControlListNotSupported.
//
// The public access block's four settings, each applied where S3 applies
// it: BlockPublicAcls refuses (AccessDenied) a request that sets a
// public ACL (one granting AllUsers or AuthenticatedUsers);
// IgnorePublicAcls makes the access decision ignore such grants;
// BlockPublicPolicy refuses a public policy; RestrictPublicBuckets lets
// a public policy's Allow reach only the bucket's owner.

import (
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

var (
	errOwnershipNotFound     = &apiError{"OwnershipControlsNotFoundError", 404, "The bucket ownership controls were not found"}
	errACLNotSupported       = &apiError{"AccessControlListNotSupported", 400, "The bucket does not allow ACLs"}
	errBucketACLWithEnforced = &apiError{"InvalidBucketAclWithObjectOwnership", 400, "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting"}
	errNoPublicAccessBlock   = &apiError{"NoSuchPublicAccessBlockConfiguration", 404, "The public access block configuration was not found"}
)

// ownershipControls is the OwnershipControls document.
type ownershipControls struct {
	XMLName xml.Name        `xml:"OwnershipControls"`
	Xmlns   string          `xml:"xmlns,attr,omitempty"`
	Rules   []ownershipRule `xml:"Rule"`
}

type ownershipRule struct {
	ObjectOwnership string `xml:"ObjectOwnership"`
}

// publicAccessBlockConfiguration is the PublicAccessBlockConfiguration
// document.
type publicAccessBlockConfiguration struct {
	XMLName               xml.Name `xml:"PublicAccessBlockConfiguration"`
	Xmlns                 string   `xml:"xmlns,attr,omitempty"`
	BlockPublicAcls       bool     `xml:"BlockPublicAcls"`
	IgnorePublicAcls      bool     `xml:"IgnorePublicAcls"`
	BlockPublicPolicy     bool     `xml:"BlockPublicPolicy"`
	RestrictPublicBuckets bool     `xml:"RestrictPublicBuckets"`
}

type policyStatus struct {
	XMLName  xml.Name `xml:"PolicyStatus"`
	Xmlns    string   `xml:"xmlns,attr"`
	IsPublic bool     `xml:"IsPublic"`
}

// validOwnership says whether v is an ObjectOwnership value.
func validOwnership(v string) bool {
	switch v {
	case meta.OwnershipObjectWriter, meta.OwnershipOwnerPreferred, meta.OwnershipOwnerEnforced:
		return true
	}
	return false
}

// aclsDisabled says whether b's ownership controls disable ACLs.
func aclsDisabled(b meta.Bucket) bool { return b.Ownership == meta.OwnershipOwnerEnforced }

// publicGrant says whether a grant reaches beyond named users.
func publicGrant(g meta.Grant) bool {
	return g.Kind == meta.GranteeAllUsers || g.Kind == meta.GranteeAuthenticated
}

// publicACL says whether an ACL grants anything to AllUsers or
// AuthenticatedUsers (S3's meaning of a public ACL).
func publicACL(acl meta.ACL) bool {
	for _, g := range acl.Grants {
		if publicGrant(g) {
			return true
		}
	}
	return false
}

// ownerOnlyACL says whether acl grants nothing but FULL_CONTROL to
// owner: the one ACL a bucket with ACLs disabled accepts.
func ownerOnlyACL(acl meta.ACL, owner string) bool {
	for _, g := range acl.Grants {
		if g.Kind != meta.GranteeUser || g.ID != owner || g.Perm != meta.PermFullControl {
			return false
		}
	}
	return true
}

// aclSubject is what decides access by ACL to a resource of owner under
// acl in bucket b: with ACLs disabled, the bucket owner alone; with
// IgnorePublicAcls, the ACL without its public grants.
func aclSubject(b meta.Bucket, owner string, acl meta.ACL) (string, meta.ACL) {
	if aclsDisabled(b) {
		return b.Owner, meta.Private(b.Owner)
	}
	if pab := b.PublicAccessBlock; pab != nil && pab.IgnorePublicAcls && publicACL(acl) {
		var kept meta.ACL
		for _, g := range acl.Grants {
			if !publicGrant(g) {
				kept.Grants = append(kept.Grants, g)
			}
		}
		return owner, kept
	}
	return owner, acl
}

// objectOwnerIn is who owns an object that who writes into b with
// headers h: the bucket owner when ACLs are disabled, or when it prefers
// to and the write says bucket-owner-full-control; else who.
func objectOwnerIn(b meta.Bucket, who string, h http.Header) string {
	switch {
	case aclsDisabled(b):
		return b.Owner
	case b.Ownership == meta.OwnershipOwnerPreferred && h.Get("X-Amz-Acl") == "bucket-owner-full-control":
		return b.Owner
	}
	return who
}

// checkACLChange refuses an ACL that a request would give a resource in
// b (already parsed; set false when the request gives none): with ACLs
// disabled anything but the owner's full control
// (AccessControlListNotSupported), with BlockPublicAcls a public one
// (AccessDenied).
func checkACLChange(b meta.Bucket, acl meta.ACL, set bool) error {
	if !set {
		return nil
	}
	if aclsDisabled(b) && !ownerOnlyACL(acl, b.Owner) {
		return errACLNotSupported
	}
	if pab := b.PublicAccessBlock; pab != nil && pab.BlockPublicAcls && publicACL(acl) {
		return errAccessDenied.withMessage("The bucket's public access block (BlockPublicAcls) refuses a public ACL.")
	}
	return nil
}

// checkWriteACL applies checkACLChange to the ACL headers of a write
// (PutObject, CopyObject, CreateMultipartUpload) into b.
func checkWriteACL(b meta.Bucket, rq *request, h http.Header) error {
	acl, set, err := headerACL(h, rq.newOwner(b), b.Owner)
	if err != nil {
		return err
	}
	return checkACLChange(b, acl, set)
}

// fixedConditionKeys are the condition keys that, compared with fixed
// values, keep a policy statement from being public (the S3 user
// guide's "The meaning of public").
var fixedConditionKeys = map[string]bool{
	"aws:sourceip": true, "aws:sourcearn": true, "aws:sourcevpc": true, "aws:sourcevpce": true,
	"aws:sourceaccount": true, "aws:sourceowner": true, "aws:principalorgid": true, "aws:principalaccount": true,
	"aws:userid": true, "aws:username": true, "s3:x-amz-server-side-encryption-aws-kms-key-id": true,
}

// policyPublic says whether a policy is public: some Allow statement
// reaches any principal (Principal "*", or NotPrincipal) without a
// condition fixing who may use it — an equality on one of
// fixedConditionKeys, or an IpAddress of at least a /8 (IPv4; /32 for
// IPv6).
func policyPublic(p *bucketPolicy) bool {
	if p == nil {
		return false
	}
	for _, s := range p.Statement {
		if s.Effect != "Allow" {
			continue
		}
		open := s.NotPrincipal != nil || (s.Principal != nil && s.Principal.any)
		if open && !fixedCondition(s.Condition) {
			return true
		}
	}
	return false
}

func fixedCondition(c map[string]map[string]strList) bool {
	for op, kv := range c {
		base := strings.TrimSuffix(op, "IfExists")
		if strings.Contains(base, "Not") || base == "Null" || base != op {
			continue
		}
		for k, vs := range kv {
			k = strings.ToLower(k)
			if !fixedConditionKeys[k] || len(vs) == 0 {
				continue
			}
			if base == "IpAddress" {
				narrow := true
				for _, v := range vs {
					pr, err := parseIPRange(v)
					min := 8
					if pr.Addr().Is6() && !pr.Addr().Is4In6() {
						min = 32
					}
					if err != nil || pr.Bits() < min {
						narrow = false
					}
				}
				if narrow {
					return true
				}
				continue
			}
			if base == "StringEquals" || base == "StringEqualsIgnoreCase" {
				fixed := true
				for _, v := range vs {
					if strings.ContainsAny(v, "*?") {
						fixed = false
					}
				}
				if fixed {
					return true
				}
			}
		}
	}
	return false
}

// restrictPublic turns a public policy's Allow into no decision for
// anyone but the bucket's owner when the bucket's RestrictPublicBuckets
// is set.
func (g *Gateway) restrictPublic(rq *request, b meta.Bucket, d decision) decision {
	pab := b.PublicAccessBlock
	if d != allowed || pab == nil || !pab.RestrictPublicBuckets || (rq.who() != "" && rq.who() == b.Owner) {
		return d
	}
	if p, err := g.parsedPolicy(b); err == nil && policyPublic(p) {
		return noDecision
	}
	return d
}

func (g *Gateway) getBucketOwnershipControls(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:GetBucketOwnershipControls")
	if err != nil {
		return err
	}
	if b.Ownership == meta.OwnershipNone {
		return errOwnershipNotFound
	}
	writeXML(w, http.StatusOK, ownershipControls{Xmlns: xmlns, Rules: []ownershipRule{{b.Ownership}}})
	return nil
}

func (g *Gateway) putBucketOwnershipControls(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:PutBucketOwnershipControls")
	if err != nil {
		return err
	}
	var oc ownershipControls
	if err := decodeXML(r.Body, &oc); err != nil {
		return err
	}
	if len(oc.Rules) != 1 || !validOwnership(oc.Rules[0].ObjectOwnership) {
		return errMalformedXML.withMessage("OwnershipControls holds one Rule whose ObjectOwnership is BucketOwnerEnforced, BucketOwnerPreferred or ObjectWriter.")
	}
	o := oc.Rules[0].ObjectOwnership
	if o == meta.OwnershipOwnerEnforced && !ownerOnlyACL(b.ACL, b.Owner) {
		return errBucketACLWithEnforced
	}
	if _, err := g.meta.SetBucketOwnership(r.Context(), b, o); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *Gateway) deleteBucketOwnershipControls(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:PutBucketOwnershipControls")
	if err != nil {
		return err
	}
	if b.Ownership != meta.OwnershipNone {
		if _, err := g.meta.SetBucketOwnership(r.Context(), b, meta.OwnershipNone); err != nil {
			return err
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (g *Gateway) getPublicAccessBlock(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:GetBucketPublicAccessBlock")
	if err != nil {
		return err
	}
	p := b.PublicAccessBlock
	if p == nil {
		return errNoPublicAccessBlock
	}
	writeXML(w, http.StatusOK, publicAccessBlockConfiguration{Xmlns: xmlns, BlockPublicAcls: p.BlockPublicAcls, IgnorePublicAcls: p.IgnorePublicAcls,
		BlockPublicPolicy: p.BlockPublicPolicy, RestrictPublicBuckets: p.RestrictPublicBuckets})
	return nil
}

func (g *Gateway) putPublicAccessBlock(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:PutBucketPublicAccessBlock")
	if err != nil {
		return err
	}
	var c publicAccessBlockConfiguration
	if err := decodeXML(r.Body, &c); err != nil {
		return err
	}
	p := &meta.PublicAccessBlock{BlockPublicAcls: c.BlockPublicAcls, IgnorePublicAcls: c.IgnorePublicAcls,
		BlockPublicPolicy: c.BlockPublicPolicy, RestrictPublicBuckets: c.RestrictPublicBuckets}
	if _, err := g.meta.SetBucketPublicAccessBlock(r.Context(), b, p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *Gateway) deletePublicAccessBlock(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:PutBucketPublicAccessBlock")
	if err != nil {
		return err
	}
	if b.PublicAccessBlock != nil {
		if _, err := g.meta.SetBucketPublicAccessBlock(r.Context(), b, nil); err != nil {
			return err
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// getBucketPolicyStatus answers whether the bucket is public: its policy
// is (policyPublic), or its ACL is while ACLs count (neither disabled
// nor ignored by the public access block), as radosgw also answers.
func (g *Gateway) getBucketPolicyStatus(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.ownedBucket(r.Context(), rq, "s3:GetBucketPolicyStatus")
	if err != nil {
		return err
	}
	public := false
	if b.Policy != "" {
		p, err := g.parsedPolicy(b)
		if err != nil {
			return err
		}
		public = policyPublic(p)
	}
	if _, acl := aclSubject(b, b.Owner, b.ACL); publicACL(acl) {
		public = true
	}
	writeXML(w, http.StatusOK, policyStatus{Xmlns: xmlns, IsPublic: public})
	return nil
}

// createOwnership reads CreateBucket's x-amz-object-ownership (none:
// no ownership controls); a bucket created with ACLs disabled takes no
// ACL but its owner's full control (InvalidBucketAclWithObjectOwnership).
func createOwnership(h http.Header, acl meta.ACL, owner string) (string, error) {
	o := h.Get("X-Amz-Object-Ownership")
	if o == "" {
		return meta.OwnershipNone, nil
	}
	if !validOwnership(o) {
		return "", errInvalidArgument.withMessage("Invalid x-amz-object-ownership %q: BucketOwnerEnforced, BucketOwnerPreferred or ObjectWriter.", o)
	}
	if o == meta.OwnershipOwnerEnforced && !ownerOnlyACL(acl, owner) {
		return "", errBucketACLWithEnforced
	}
	return o, nil
}
