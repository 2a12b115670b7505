package s3gw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// Access control as S3 does it with ACLs (the S3 user guide's "Access
// control list (ACL) overview"): every bucket and object has an owner and
// a list of grants. What a request may do:
//
//	bucket READ       list the objects, the versions and the uploads; HEAD
//	bucket WRITE      create, overwrite and delete objects; multipart uploads
//	bucket READ_ACP   read the bucket's ACL      (its owner always may)
//	bucket WRITE_ACP  replace the bucket's ACL   (its owner always may)
//	object READ       GET and HEAD it; be a copy's source
//	object READ_ACP   read its ACL               (its owner always may)
//	object WRITE_ACP  replace its ACL            (its owner always may)
//	FULL_CONTROL      all four
//
// Deleting a bucket, and its location and versioning, are its owner's
// only. A request without a signature is anonymous: it may do what a
// grant to AllUsers allows, and nothing else. A signed request's user
// also gets what AuthenticatedUsers grants.

// The group URIs of the grantee kinds.
const (
	uriAllUsers      = "http://acs.amazonaws.com/groups/global/AllUsers"
	uriAuthenticated = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
	uriLogDelivery   = "http://acs.amazonaws.com/groups/s3/LogDelivery"
)

var groupURIs = map[meta.GranteeKind]string{
	meta.GranteeAllUsers:      uriAllUsers,
	meta.GranteeAuthenticated: uriAuthenticated,
	meta.GranteeLogDelivery:   uriLogDelivery,
}

var permNames = map[meta.Perm]string{
	meta.PermRead:        "READ",
	meta.PermWrite:       "WRITE",
	meta.PermReadACP:     "READ_ACP",
	meta.PermWriteACP:    "WRITE_ACP",
	meta.PermFullControl: "FULL_CONTROL",
}

var (
	errMalformedACL    = &apiError{"MalformedACLError", 400, "The XML you provided was not well-formed or did not validate against our published schema."}
	errUnresolvedEmail = &apiError{"UnresolvableGrantByEmailAddress", 400, "The email address you provided does not match any account on record."}
)

// permitted says whether who ("" for an anonymous request) may do what
// perm allows on a resource that owner owns under acl. It is the whole
// access decision: a pure function of its arguments.
func permitted(owner string, acl meta.ACL, who string, perm meta.Perm) bool {
	if who != "" && who == owner && (perm == meta.PermReadACP || perm == meta.PermWriteACP) {
		return true
	}
	for _, g := range acl.Grants {
		if g.Perm != perm && g.Perm != meta.PermFullControl {
			continue
		}
		switch g.Kind {
		case meta.GranteeAllUsers:
			return true
		case meta.GranteeAuthenticated:
			if who != "" {
				return true
			}
		case meta.GranteeUser:
			if who != "" && g.ID == who {
				return true
			}
		}
	}
	return false
}

// cannedACL is the ACL an x-amz-acl value stands for, for a resource of
// owner in a bucket of bucketOwner (the bucket's own owner for a bucket).
func cannedACL(name, owner, bucketOwner string) (meta.ACL, error) {
	acl := meta.Private(owner)
	add := func(k meta.GranteeKind, id string, p meta.Perm) {
		acl.Grants = append(acl.Grants, meta.Grant{Kind: k, ID: id, Perm: p})
	}
	switch name {
	case "private":
	case "public-read":
		add(meta.GranteeAllUsers, "", meta.PermRead)
	case "public-read-write":
		add(meta.GranteeAllUsers, "", meta.PermRead)
		add(meta.GranteeAllUsers, "", meta.PermWrite)
	case "authenticated-read":
		add(meta.GranteeAuthenticated, "", meta.PermRead)
	case "bucket-owner-read":
		if bucketOwner != owner {
			add(meta.GranteeUser, bucketOwner, meta.PermRead)
		}
	case "bucket-owner-full-control":
		if bucketOwner != owner {
			add(meta.GranteeUser, bucketOwner, meta.PermFullControl)
		}
	case "log-delivery-write":
		add(meta.GranteeLogDelivery, "", meta.PermWrite)
		add(meta.GranteeLogDelivery, "", meta.PermReadACP)
	default:
		return meta.ACL{}, errInvalidArgument.withMessage("The canned ACL %q is not one of private, public-read, public-read-write, authenticated-read, bucket-owner-read, bucket-owner-full-control, log-delivery-write.", name)
	}
	return acl, nil
}

// grantHeaders are the x-amz-grant-* headers and what each grants.
var grantHeaders = []struct {
	header string
	perm   meta.Perm
}{
	{"X-Amz-Grant-Read", meta.PermRead},
	{"X-Amz-Grant-Write", meta.PermWrite},
	{"X-Amz-Grant-Read-Acp", meta.PermReadACP},
	{"X-Amz-Grant-Write-Acp", meta.PermWriteACP},
	{"X-Amz-Grant-Full-Control", meta.PermFullControl},
}

// parseGrantee parses one grantee of a grant header: id="...",
// uri="..." or emailAddress="..." (quotes optional).
func parseGrantee(s string) (meta.Grant, error) {
	k, v, ok := strings.Cut(strings.TrimSpace(s), "=")
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	if !ok || v == "" {
		return meta.Grant{}, errInvalidArgument.withMessage("The grantee %q is not id=\"...\", uri=\"...\" or emailAddress=\"...\".", s)
	}
	switch strings.ToLower(strings.TrimSpace(k)) {
	case "id":
		return meta.Grant{Kind: meta.GranteeUser, ID: v}, nil
	case "uri":
		return groupGrant(v)
	case "emailaddress":
		return meta.Grant{}, errUnresolvedEmail.withMessage("No user has the email address %q (this gateway's users have none: grant by id).", v)
	}
	return meta.Grant{}, errInvalidArgument.withMessage("The grantee %q is not id=\"...\", uri=\"...\" or emailAddress=\"...\".", s)
}

func groupGrant(uri string) (meta.Grant, error) {
	for k, u := range groupURIs {
		if u == uri {
			return meta.Grant{Kind: k}, nil
		}
	}
	return meta.Grant{}, errInvalidArgument.withMessage("Invalid group uri %q.", uri)
}

// splitGrantees splits a grant header's value at the commas outside
// quotes.
func splitGrantees(v string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, v[start:i])
				start = i + 1
			}
		}
	}
	return append(out, v[start:])
}

// headerACL is the ACL a request's x-amz-acl or x-amz-grant-* headers
// give (set is false when it has neither). Both at once is
// InvalidRequest, as S3 answers. The grants' users are not checked here.
func headerACL(h http.Header, owner, bucketOwner string) (acl meta.ACL, set bool, err error) {
	canned := h.Get("X-Amz-Acl")
	var grants []meta.Grant
	for _, gh := range grantHeaders {
		for _, v := range h.Values(gh.header) {
			for _, s := range splitGrantees(v) {
				g, err := parseGrantee(s)
				if err != nil {
					return meta.ACL{}, false, err
				}
				g.Perm = gh.perm
				grants = append(grants, g)
			}
		}
	}
	switch {
	case canned != "" && grants != nil:
		return meta.ACL{}, false, errInvalidRequest.withMessage("Specifying both Canned ACLs and Header Grants is not allowed")
	case canned != "":
		acl, err := cannedACL(canned, owner, bucketOwner)
		return acl, err == nil, err
	case grants != nil:
		if len(grants) > 100 {
			return meta.ACL{}, false, errInvalidArgument.withMessage("An ACL holds at most 100 grants; these headers give %d.", len(grants))
		}
		return meta.ACL{Grants: grants}, true, nil
	}
	return meta.ACL{}, false, nil
}

// checkGrantees refuses grants to users who do not exist (S3's
// InvalidArgument).
func (g *Gateway) checkGrantees(ctx context.Context, acl meta.ACL) error {
	seen := map[string]bool{}
	for _, gr := range acl.Grants {
		if gr.Kind != meta.GranteeUser || seen[gr.ID] {
			continue
		}
		seen[gr.ID] = true
		if _, err := g.meta.GetUser(ctx, gr.ID); err != nil {
			if errors.Is(err, meta.ErrNoSuchUser) {
				return errInvalidArgument.withMessage("Invalid id: no user %q.", gr.ID)
			}
			return err
		}
	}
	return nil
}

// requestACL is the ACL a write's headers give its new resource, private
// by default, with its grantees checked.
func (g *Gateway) requestACL(ctx context.Context, h http.Header, owner, bucketOwner string) (meta.ACL, error) {
	acl, set, err := headerACL(h, owner, bucketOwner)
	if err != nil {
		return meta.ACL{}, err
	}
	if !set {
		return meta.Private(owner), nil
	}
	return acl, g.checkGrantees(ctx, acl)
}

// who is the request's user, "" when anonymous.
func (rq *request) who() string { return rq.user.Name }

// newOwner is who owns what the request creates: its user, or for an
// anonymous write (to a bucket that lets AllUsers write) the bucket's
// owner — or the bucket's owner as its ownership controls say
// (objectOwnerIn).
func (rq *request) newOwner(b meta.Bucket) string {
	who := rq.who()
	if who == "" {
		who = b.Owner
	}
	if rq.http != nil {
		return objectOwnerIn(b, who, rq.http.Header)
	}
	return who
}

// objectACL is an entry's owner and ACL; an entry from before ACLs is
// its bucket owner's, private.
func objectACL(b meta.Bucket, en meta.Entry) (string, meta.ACL) {
	if en.Owner == "" {
		return b.Owner, meta.Private(b.Owner)
	}
	return en.Owner, en.ACL
}

// uploadOwner is the owner and ACL an upload gives its object.
func uploadOwner(b meta.Bucket, u meta.Upload) (string, meta.ACL) {
	if u.Owner == "" {
		return b.Owner, meta.Private(b.Owner)
	}
	return u.Owner, u.ACL
}

// bucketNamed returns the request's bucket, whoever asks.
func (g *Gateway) bucketNamed(ctx context.Context, name string) (meta.Bucket, error) {
	if !validBucketName(name) {
		return meta.Bucket{}, errNoSuchBucket
	}
	return g.meta.GetBucket(ctx, name)
}

// objectActions are the policy actions on an object (their resource is
// arn:aws:s3:::BUCKET/KEY); the others are on the bucket.
var objectActions = map[string]bool{
	"s3:GetObject": true, "s3:PutObject": true, "s3:DeleteObject": true, "s3:GetObjectAcl": true, "s3:PutObjectAcl": true,
	"s3:AbortMultipartUpload": true, "s3:ListMultipartUploadParts": true,
	"s3:GetObjectTagging": true, "s3:PutObjectTagging": true, "s3:DeleteObjectTagging": true,
	"s3:GetObjectVersion": true, "s3:DeleteObjectVersion": true, "s3:GetObjectVersionAcl": true, "s3:PutObjectVersionAcl": true,
	"s3:GetObjectVersionTagging": true, "s3:PutObjectVersionTagging": true, "s3:DeleteObjectVersionTagging": true,
	"s3:GetObjectAttributes": true,
}

// policyContext is the request's condition keys (lowercased).
func (rq *request) policyContext() map[string][]string {
	c := map[string][]string{}
	r := rq.http
	if r == nil {
		return c
	}
	if ip := remoteIP(r.RemoteAddr); ip != "" {
		c["aws:sourceip"] = []string{ip}
	}
	c["aws:securetransport"] = []string{strconv.FormatBool(r.TLS != nil)}
	if rq.who() != "" {
		c["aws:username"] = []string{rq.who()}
	}
	for k, h := range map[string]string{"aws:referer": "Referer", "aws:useragent": "User-Agent"} {
		if v := r.Header.Values(h); len(v) > 0 {
			c[k] = v
		}
	}
	for k, vs := range r.Header {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-") && !strings.HasPrefix(lk, "x-amz-meta-") {
			c["s3:"+lk] = vs
		}
	}
	q := r.URL.Query()
	for _, k := range []string{"prefix", "delimiter", "max-keys", "versionId"} {
		if v, ok := q[k]; ok {
			c["s3:"+strings.ToLower(k)] = v
		}
	}
	return c
}

// policyDecision is b's policy's decision on action by the request
// (noDecision when b has no policy).
func (g *Gateway) policyDecision(rq *request, b meta.Bucket, action, key string) decision {
	if b.Policy == "" {
		return noDecision
	}
	p, err := g.parsedPolicy(b)
	if err != nil {
		// Stored policies were parsed when put: a gateway that cannot
		// read one (a newer grammar) lets the ACLs decide, and says so.
		g.log.Warn("bucket policy does not parse", "bucket", b.Name, "err", err)
		return noDecision
	}
	res := "arn:aws:s3:::" + b.Name
	if objectActions[action] {
		res += "/" + key
	}
	return g.restrictPublic(rq, b, p.evaluate(policyRequest{user: rq.who(), action: action, resource: res, context: rq.policyContext()}))
}

// allow is the access decision on a bucket or object of owner under acl
// in bucket b: b's policy first (an explicit Deny refuses, an Allow
// grants), else the ACL.
func (g *Gateway) allow(rq *request, b meta.Bucket, owner string, acl meta.ACL, perm meta.Perm, action, key string) bool {
	switch g.policyDecision(rq, b, action, key) {
	case denied:
		return false
	case allowed:
		return true
	}
	owner, acl = aclSubject(b, owner, acl)
	return permitted(owner, acl, rq.who(), perm)
}

// bucketFor returns the request's bucket if its policy or ACL lets the
// request's user do action (perm in ACL terms).
func (g *Gateway) bucketFor(ctx context.Context, rq *request, perm meta.Perm, action string) (meta.Bucket, error) {
	b, err := g.bucketNamed(ctx, rq.bucket)
	if err != nil {
		return meta.Bucket{}, err
	}
	if !g.allow(rq, b, b.Owner, b.ACL, perm, action, rq.key) {
		return meta.Bucket{}, errAccessDenied
	}
	return b, nil
}

// ownedBucket returns the request's bucket if its user owns it or its
// policy allows action; a policy's Deny refuses even the owner.
func (g *Gateway) ownedBucket(ctx context.Context, rq *request, action string) (meta.Bucket, error) {
	b, err := g.bucketNamed(ctx, rq.bucket)
	if err != nil {
		return meta.Bucket{}, err
	}
	switch g.policyDecision(rq, b, action, "") {
	case denied:
		return meta.Bucket{}, errAccessDenied
	case allowed:
		return b, nil
	}
	if rq.who() == "" || b.Owner != rq.who() {
		return meta.Bucket{}, errAccessDenied
	}
	return b, nil
}

// requestObject looks up the request's bucket and, through objectFor,
// its object's entry if the request's user has perm on it.
func (g *Gateway) requestObject(ctx context.Context, rq *request, perm meta.Perm, action string) (meta.Bucket, *meta.Index, meta.Entry, error) {
	b, err := g.bucketNamed(ctx, rq.bucket)
	if err != nil {
		return meta.Bucket{}, nil, meta.Entry{}, err
	}
	ix, err := g.meta.Index(ctx, b)
	if err != nil {
		return meta.Bucket{}, nil, meta.Entry{}, err
	}
	en, err := g.objectFor(ctx, rq, b, ix, rq.key, perm, action)
	return b, ix, en, err
}

// objectFor returns key's entry in b if its ACL grants the request's
// user perm. A missing key is NoSuchKey to whoever may list the bucket
// and AccessDenied to others, so they learn nothing of its contents (as
// S3 answers).
// The version is the request's versionId, else the latest
// (objectVersionFor).
func (g *Gateway) objectFor(ctx context.Context, rq *request, b meta.Bucket, ix *meta.Index, key string, perm meta.Perm, action string) (meta.Entry, error) {
	return g.objectVersionFor(ctx, rq, b, ix, key, rq.version, perm, action)
}

// owners gives the <Owner> of user names, their display names looked up
// once per request (a user since removed shows its name).
type owners struct {
	g    *Gateway
	ctx  context.Context
	seen map[string]owner
}

// owners returns a lookup of owners that already knows the users given
// (the request's own, usually).
func (g *Gateway) owners(ctx context.Context, known ...meta.User) *owners {
	o := &owners{g: g, ctx: ctx, seen: map[string]owner{}}
	for _, u := range known {
		if u.Name != "" {
			o.seen[u.Name] = owner{ID: u.Name, DisplayName: u.DisplayName}
		}
	}
	return o
}

func (o *owners) of(name string) owner {
	if ow, ok := o.seen[name]; ok {
		return ow
	}
	ow := owner{ID: name, DisplayName: name}
	if u, err := o.g.meta.GetUser(o.ctx, name); err == nil {
		ow.DisplayName = u.DisplayName
	}
	o.seen[name] = ow
	return ow
}

// aclPolicy is the AccessControlPolicy document GetBucketAcl and
// GetObjectAcl answer.
func (g *Gateway) aclPolicy(ctx context.Context, rq *request, owner string, acl meta.ACL) accessControlPolicy {
	return aclDocument(owner, acl, g.owners(ctx, rq.user).of)
}

// aclDocument is owner's acl as an AccessControlPolicy; of gives a
// user's ID and display name. The grants are listed as radosgw lists
// them (and clients' tests expect): the groups' first, in the order
// given, then the users' by ID.
func aclDocument(owner string, acl meta.ACL, of func(string) owner) accessControlPolicy {
	p := accessControlPolicy{Xmlns: xmlns, Owner: of(owner), List: aclList{Grants: []grantXML{}}}
	grants := slices.Clone(acl.Grants)
	slices.SortStableFunc(grants, func(a, b meta.Grant) int { return strings.Compare(a.ID, b.ID) })
	for _, gr := range grants {
		ge := granteeXML{XSI: "http://www.w3.org/2001/XMLSchema-instance"}
		if gr.Kind == meta.GranteeUser {
			o := of(gr.ID)
			ge.Type, ge.ID, ge.DisplayName = "CanonicalUser", o.ID, o.DisplayName
		} else {
			ge.Type, ge.URI = "Group", groupURIs[gr.Kind]
		}
		p.List.Grants = append(p.List.Grants, grantXML{Grantee: ge, Permission: permNames[gr.Perm]})
	}
	return p
}

// parseACLPolicy reads a PutBucketAcl or PutObjectAcl body for a
// resource owner owns.
func parseACLPolicy(body []byte, owner string) (meta.ACL, error) {
	var p accessControlPolicyIn
	if err := decodeXMLBytes(body, &p); err != nil {
		return meta.ACL{}, errMalformedACL
	}
	if p.List == nil {
		return meta.ACL{}, errMalformedACL.withMessage("The AccessControlPolicy has no AccessControlList.")
	}
	if p.Owner != nil && p.Owner.ID != "" && p.Owner.ID != owner {
		return meta.ACL{}, errAccessDenied.withMessage("An ACL cannot change the owner (%q, not %q).", owner, p.Owner.ID)
	}
	if len(p.List.Grants) > 100 {
		return meta.ACL{}, errMalformedACL.withMessage("An ACL holds at most 100 grants; this one has %d.", len(p.List.Grants))
	}
	var acl meta.ACL
	for _, gi := range p.List.Grants {
		var perm meta.Perm
		for p, n := range permNames {
			if n == gi.Permission {
				perm = p
			}
		}
		if perm == 0 || gi.Grantee == nil {
			return meta.ACL{}, errMalformedACL.withMessage("A grant needs a Grantee and a Permission of READ, WRITE, READ_ACP, WRITE_ACP or FULL_CONTROL (got %q).", gi.Permission)
		}
		ge := gi.Grantee
		typ := ge.Type
		if typ == "" { // no xsi:type: go by what it holds
			switch {
			case ge.ID != "":
				typ = "CanonicalUser"
			case ge.URI != "":
				typ = "Group"
			case ge.EmailAddress != "":
				typ = "AmazonCustomerByEmail"
			}
		}
		var gr meta.Grant
		switch typ {
		case "CanonicalUser":
			if ge.ID == "" {
				return meta.ACL{}, errInvalidArgument.withMessage("A CanonicalUser grantee needs an ID.")
			}
			gr = meta.Grant{Kind: meta.GranteeUser, ID: ge.ID}
		case "Group":
			var err error
			if gr, err = groupGrant(ge.URI); err != nil {
				return meta.ACL{}, err
			}
		case "AmazonCustomerByEmail":
			return meta.ACL{}, errUnresolvedEmail.withMessage("No user has the email address %q (this gateway's users have none: grant by ID).", ge.EmailAddress)
		default:
			return meta.ACL{}, errMalformedACL.withMessage("Unknown grantee type %q.", typ)
		}
		gr.Perm = perm
		acl.Grants = append(acl.Grants, gr)
	}
	return acl, nil
}

// putACL reads the new ACL of a PutBucketAcl or PutObjectAcl: from the
// x-amz-acl or x-amz-grant-* headers, else from the body.
func (g *Gateway) putACL(r *http.Request, owner, bucketOwner string) (meta.ACL, error) {
	ctx := r.Context()
	acl, set, err := headerACL(r.Header, owner, bucketOwner)
	if err != nil {
		return meta.ACL{}, err
	}
	body, err := readXMLBody(r.Body)
	if err != nil {
		return meta.ACL{}, err
	}
	if set {
		if len(strings.TrimSpace(string(body))) > 0 {
			return meta.ACL{}, errInvalidRequest.withMessage("Give the ACL in the headers or in the body, not both.")
		}
		return acl, g.checkGrantees(ctx, acl)
	}
	if len(body) == 0 {
		return meta.ACL{}, errMalformedACL.withMessage("Give the ACL: an AccessControlPolicy body, x-amz-acl or x-amz-grant-* headers.")
	}
	if acl, err = parseACLPolicy(body, owner); err != nil {
		return meta.ACL{}, err
	}
	return acl, g.checkGrantees(ctx, acl)
}

func (g *Gateway) getBucketACL(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.bucketFor(r.Context(), rq, meta.PermReadACP, "s3:GetBucketAcl")
	if err != nil {
		return err
	}
	owner, acl := b.Owner, b.ACL
	if aclsDisabled(b) {
		owner, acl = aclSubject(b, owner, acl)
	}
	writeXML(w, http.StatusOK, g.aclPolicy(r.Context(), rq, owner, acl))
	return nil
}

func (g *Gateway) putBucketACL(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.bucketFor(r.Context(), rq, meta.PermWriteACP, "s3:PutBucketAcl")
	if err != nil {
		return err
	}
	acl, err := g.putACL(r, b.Owner, b.Owner)
	if err != nil {
		return err
	}
	if err := checkACLChange(b, acl, true); err != nil {
		return err
	}
	if _, err := g.meta.SetBucketACL(r.Context(), b, acl); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *Gateway) getObjectACL(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	b, _, en, err := g.requestObject(ctx, rq, meta.PermReadACP, "s3:GetObjectAcl")
	if err != nil {
		return err
	}
	owner, acl := objectACL(b, en)
	if aclsDisabled(b) {
		owner, acl = aclSubject(b, owner, acl)
	}
	writeXML(w, http.StatusOK, g.aclPolicy(ctx, rq, owner, acl))
	return nil
}

// putObjectACL replaces an object's ACL in its index entry, swapped in
// only over the entry it read (meta.Index.Swap): if the object changed
// meanwhile the client is told SlowDown and retries, so an overwrite is
// never undone.
func (g *Gateway) putObjectACL(w http.ResponseWriter, r *http.Request, rq *request) error {
	ctx := r.Context()
	b, ix, en, err := g.requestObject(ctx, rq, meta.PermWriteACP, "s3:PutObjectAcl")
	if err != nil {
		return err
	}
	owner, _ := objectACL(b, en)
	if aclsDisabled(b) {
		owner = b.Owner
	}
	acl, err := g.putACL(r, owner, b.Owner)
	if err != nil {
		return err
	}
	if err := checkACLChange(b, acl, true); err != nil {
		return err
	}
	slot := meta.VersionKey(rq.key, en.VersionID)
	cur, err := ix.Current(ctx, slot)
	if err != nil {
		return err
	}
	if !cur.Live || string(cur.Entry.Encode()) != string(en.Encode()) {
		return fmt.Errorf("put object acl %s/%s: %w", b.Name, rq.key, meta.ErrConflict)
	}
	next := cur.Entry
	next.Owner, next.ACL = owner, acl
	// Swapped in only over the entry read: an overwrite or delete that
	// lands meanwhile wins, and the client is told to retry (SlowDown).
	if err := ix.Swap(ctx, slot, cur, next); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
