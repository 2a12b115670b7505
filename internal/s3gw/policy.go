package s3gw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// Bucket policies (the S3 user guide's "Bucket policies" and the IAM
// policy grammar): JSON documents of statements, each of an Effect
// (Allow or Deny), a Principal, Actions, Resources and Conditions. A
// request's decision: an explicit Deny of a matching statement wins;
// else a matching Allow grants it, whatever the ACLs say; else the ACLs
// decide. The bucket's owner may always read, replace and delete the
// policy, so a policy cannot lock its owner out for good.

var (
	errMalformedPolicy    = &apiError{"MalformedPolicy", 400, "Policies must be valid JSON and the first byte must be '{'"}
	errNoSuchBucketPolicy = &apiError{"NoSuchBucketPolicy", 404, "The bucket policy does not exist"}
)

// decision is a policy's answer.
type decision int

const (
	noDecision decision = iota // no statement matches: the ACLs decide
	allowed
	denied
)

// strList is a JSON string or list of strings.
type strList []string

func (s *strList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = strList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// principals is a Principal: "*" or {"AWS": ...} (also {"CanonicalUser": ...}).
type principals struct {
	any  bool
	list []string
}

func (p *principals) UnmarshalJSON(b []byte) error {
	var star string
	if err := json.Unmarshal(b, &star); err == nil {
		if star != "*" {
			return fmt.Errorf("principal %q: give \"*\" or {\"AWS\": ...}", star)
		}
		p.any = true
		return nil
	}
	var m map[string]strList
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for k, vs := range m {
		if k != "AWS" && k != "CanonicalUser" {
			return fmt.Errorf("principal of type %q: AWS or CanonicalUser", k)
		}
		for _, v := range vs {
			if v == "*" {
				p.any = true
			}
			p.list = append(p.list, v)
		}
	}
	return nil
}

// matches says whether the principals name user ("" anonymous: only "*").
func (p *principals) matches(user string) bool {
	if p.any {
		return true
	}
	if user == "" {
		return false
	}
	for _, v := range p.list {
		if v == user {
			return true
		}
		// arn:aws:iam::ACCOUNT:user/NAME, with or without an account.
		if strings.HasPrefix(v, "arn:aws:iam:") {
			if _, name, ok := strings.Cut(v, ":user/"); ok && name == user {
				return true
			}
			if strings.HasSuffix(v, ":root") && strings.TrimSuffix(strings.TrimPrefix(v, "arn:aws:iam::"), ":root") == user {
				return true
			}
		}
	}
	return false
}

type statement struct {
	Sid          string                        `json:"Sid"`
	Effect       string                        `json:"Effect"`
	Principal    *principals                   `json:"Principal"`
	NotPrincipal *principals                   `json:"NotPrincipal"`
	Action       strList                       `json:"Action"`
	NotAction    strList                       `json:"NotAction"`
	Resource     strList                       `json:"Resource"`
	NotResource  strList                       `json:"NotResource"`
	Condition    map[string]map[string]strList `json:"Condition"`
}

// bucketPolicy is a parsed policy.
type bucketPolicy struct {
	Version   string
	Statement []statement
}

// condOps are the condition operators understood (each also with the
// IfExists suffix).
var condOps = map[string]bool{
	"StringEquals": true, "StringNotEquals": true, "StringEqualsIgnoreCase": true, "StringNotEqualsIgnoreCase": true,
	"StringLike": true, "StringNotLike": true,
	"NumericEquals": true, "NumericNotEquals": true, "NumericLessThan": true, "NumericLessThanEquals": true,
	"NumericGreaterThan": true, "NumericGreaterThanEquals": true,
	"Bool": true, "IpAddress": true, "NotIpAddress": true, "Null": true,
}

// parsePolicy parses and validates a policy for bucket.
func parsePolicy(doc []byte, bucket string) (*bucketPolicy, error) {
	bad := func(format string, args ...any) error {
		return errMalformedPolicy.withMessage(format, args...)
	}
	if t := bytes.TrimSpace(doc); len(t) == 0 || t[0] != '{' {
		return nil, errMalformedPolicy
	}
	var raw struct {
		Version   string          `json:"Version"`
		ID        string          `json:"Id"`
		Statement json.RawMessage `json:"Statement"`
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, bad("The policy is not valid JSON: %v", err)
	}
	if raw.Version != "" && raw.Version != "2012-10-17" && raw.Version != "2008-10-17" {
		return nil, bad("The policy's Version %q is not 2012-10-17 or 2008-10-17.", raw.Version)
	}
	p := &bucketPolicy{Version: raw.Version}
	if t := bytes.TrimSpace(raw.Statement); len(t) > 0 && t[0] == '{' {
		var one statement
		if err := json.Unmarshal(t, &one); err != nil {
			return nil, bad("Statement: %v", err)
		}
		p.Statement = []statement{one}
	} else if err := json.Unmarshal(raw.Statement, &p.Statement); err != nil {
		return nil, bad("Statement: %v", err)
	}
	if len(p.Statement) == 0 {
		return nil, bad("The policy has no Statement.")
	}
	for i, s := range p.Statement {
		if s.Effect != "Allow" && s.Effect != "Deny" {
			return nil, bad("Statement %d: Effect %q is not Allow or Deny.", i, s.Effect)
		}
		if (s.Principal == nil) == (s.NotPrincipal == nil) {
			return nil, bad("Statement %d: give one of Principal and NotPrincipal.", i)
		}
		if (len(s.Action) == 0) == (len(s.NotAction) == 0) {
			return nil, bad("Statement %d: give one of Action and NotAction.", i)
		}
		if (len(s.Resource) == 0) == (len(s.NotResource) == 0) {
			return nil, bad("Statement %d: give one of Resource and NotResource.", i)
		}
		for _, a := range append(append(strList{}, s.Action...), s.NotAction...) {
			if a != "*" && !strings.HasPrefix(strings.ToLower(a), "s3:") {
				return nil, bad("Statement %d: Action %q is not an s3: action.", i, a)
			}
		}
		for _, r := range append(append(strList{}, s.Resource...), s.NotResource...) {
			if r == "*" {
				continue
			}
			// arn:aws:s3:REGION:ACCOUNT:BUCKET[/KEY]; region and account
			// are empty or patterns (radosgw's tenants: arn:aws:s3::*:b).
			f := strings.SplitN(r, ":", 6)
			if len(f) != 6 || f[0] != "arn" || f[1] != "aws" || f[2] != "s3" {
				return nil, bad("Policy has invalid resource: %q is not arn:aws:s3:::BUCKET[/KEY].", r)
			}
			b, _, _ := strings.Cut(f[5], "/")
			if !globMatch(b, bucket, false) {
				return nil, bad("Policy has invalid resource: %q is not in bucket %s.", r, bucket)
			}
		}
		for op, kv := range s.Condition {
			base := strings.TrimSuffix(op, "IfExists")
			if !condOps[base] {
				return nil, bad("Statement %d: the condition operator %q is not supported.", i, op)
			}
			for k, vs := range kv {
				for _, v := range vs {
					if err := checkCondValue(base, v); err != nil {
						return nil, bad("Statement %d: %s %s: %v", i, op, k, err)
					}
				}
			}
		}
	}
	return p, nil
}

func checkCondValue(op, v string) error {
	switch {
	case strings.HasPrefix(op, "Numeric"):
		_, err := strconv.ParseFloat(v, 64)
		return err
	case strings.HasSuffix(op, "IpAddress"):
		_, err := parseIPRange(v)
		return err
	case op == "Bool" || op == "Null":
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return fmt.Errorf("%q is not true or false", v)
		}
	}
	return nil
}

func parseIPRange(v string) (netip.Prefix, error) {
	if strings.Contains(v, "/") {
		p, err := netip.ParsePrefix(v)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// globMatch matches s against a pattern of * (any run) and ? (any one
// character), ASCII case folded when fold.
func globMatch(pattern, s string, fold bool) bool {
	if fold {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	// Iterative matching with one backtrack point: linear in practice.
	p, i, star, mark := 0, 0, -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// policyRequest is what a policy is evaluated against.
type policyRequest struct {
	user     string // "" anonymous
	action   string // "s3:GetObject"
	resource string // "arn:aws:s3:::bucket" or "arn:aws:s3:::bucket/key"
	// context holds the condition keys, lowercased: aws:sourceip,
	// aws:referer, s3:prefix, s3:x-amz-acl...
	context map[string][]string
}

// evaluate is a policy's decision on a request: a pure function.
func (p *bucketPolicy) evaluate(rq policyRequest) decision {
	if p == nil {
		return noDecision
	}
	d := noDecision
	for i := range p.Statement {
		s := &p.Statement[i]
		if !s.matches(rq) {
			continue
		}
		if s.Effect == "Deny" {
			return denied
		}
		d = allowed
	}
	return d
}

func anyGlob(patterns []string, s string, fold bool) bool {
	for _, p := range patterns {
		if globMatch(p, s, fold) {
			return true
		}
	}
	return false
}

func (s *statement) matches(rq policyRequest) bool {
	if s.Principal != nil && !s.Principal.matches(rq.user) {
		return false
	}
	if s.NotPrincipal != nil && s.NotPrincipal.matches(rq.user) {
		return false
	}
	if len(s.Action) > 0 && !anyGlob(s.Action, rq.action, true) {
		return false
	}
	if len(s.NotAction) > 0 && anyGlob(s.NotAction, rq.action, true) {
		return false
	}
	if len(s.Resource) > 0 && !anyGlob(s.Resource, rq.resource, false) {
		return false
	}
	if len(s.NotResource) > 0 && anyGlob(s.NotResource, rq.resource, false) {
		return false
	}
	for op, kv := range s.Condition {
		for k, want := range kv {
			if !condition(op, rq.context[strings.ToLower(k)], want) {
				return false
			}
		}
	}
	return true
}

// condition applies one operator to a key's values in the request (none:
// the key is absent) and the policy's values: true when any request
// value matches any policy value (for the negated operators: none does).
// An absent key fails the positive operators and passes the negated
// ones, and passes any ...IfExists.
func condition(op string, got []string, want []string) bool {
	base, ifExists := strings.CutSuffix(op, "IfExists")
	if base == "Null" {
		absent := len(got) == 0
		for _, w := range want {
			if strings.EqualFold(w, "true") == absent {
				return true
			}
		}
		return false
	}
	negated := strings.Contains(base, "Not")
	if len(got) == 0 {
		return ifExists || negated
	}
	match := func(g, w string) bool {
		switch base {
		case "StringEquals", "StringNotEquals":
			return g == w
		case "StringEqualsIgnoreCase", "StringNotEqualsIgnoreCase":
			return strings.EqualFold(g, w)
		case "StringLike", "StringNotLike":
			return globMatch(w, g, false)
		case "Bool":
			return strings.EqualFold(g, w)
		case "IpAddress", "NotIpAddress":
			pr, err := parseIPRange(w)
			a, aerr := netip.ParseAddr(g)
			return err == nil && aerr == nil && pr.Contains(a.Unmap())
		}
		gv, err1 := strconv.ParseFloat(g, 64)
		wv, err2 := strconv.ParseFloat(w, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		switch base {
		case "NumericEquals", "NumericNotEquals":
			return gv == wv
		case "NumericLessThan":
			return gv < wv
		case "NumericLessThanEquals":
			return gv <= wv
		case "NumericGreaterThan":
			return gv > wv
		case "NumericGreaterThanEquals":
			return gv >= wv
		}
		return false
	}
	any := false
	for _, g := range got {
		for _, w := range want {
			any = any || match(g, w)
		}
	}
	if negated {
		return !any
	}
	return any
}

// remoteIP is the request's source address as aws:SourceIp.
func remoteIP(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		addr = h
	}
	if a, err := netip.ParseAddr(addr); err == nil {
		return a.Unmap().String()
	}
	return ""
}

// maxPolicyCache bounds the parsed policies a gateway keeps.
const maxPolicyCache = 256

// parsedPolicy is b's policy parsed, from the gateway's cache when it
// parsed the same text for the bucket before (a parsed policy is never
// changed, so requests share it).
func (g *Gateway) parsedPolicy(b meta.Bucket) (*bucketPolicy, error) {
	key := b.Name + "\x00" + b.Policy
	g.mu.Lock()
	p, ok := g.policies[key]
	g.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := parsePolicy([]byte(b.Policy), b.Name)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	if len(g.policies) >= maxPolicyCache {
		clear(g.policies)
	}
	g.policies[key] = p
	g.mu.Unlock()
	return p, nil
}

// policyBucket returns the request's bucket for a policy operation: its
// owner may always; others if the policy allows action.
func (g *Gateway) policyBucket(r *http.Request, rq *request, action string) (meta.Bucket, error) {
	b, err := g.bucketNamed(r.Context(), rq.bucket)
	if err != nil {
		return meta.Bucket{}, err
	}
	if rq.who() != "" && rq.who() == b.Owner {
		return b, nil
	}
	if g.policyDecision(rq, b, action, "") == allowed {
		return b, nil
	}
	return meta.Bucket{}, errAccessDenied
}

func (g *Gateway) getBucketPolicy(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.policyBucket(r, rq, "s3:GetBucketPolicy")
	if err != nil {
		return err
	}
	if b.Policy == "" {
		return errNoSuchBucketPolicy
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b.Policy)))
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, b.Policy)
	return nil
}

func (g *Gateway) putBucketPolicy(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.policyBucket(r, rq, "s3:PutBucketPolicy")
	if err != nil {
		return err
	}
	doc, err := io.ReadAll(io.LimitReader(r.Body, meta.MaxPolicy+1))
	if err != nil {
		return err
	}
	if len(doc) > meta.MaxPolicy {
		return errMalformedPolicy.withMessage("Policies are at most %d bytes.", meta.MaxPolicy)
	}
	p, err := parsePolicy(doc, b.Name)
	if err != nil {
		return err
	}
	if pab := b.PublicAccessBlock; pab != nil && pab.BlockPublicPolicy && policyPublic(p) {
		return errAccessDenied.withMessage("The bucket's public access block (BlockPublicPolicy) refuses a public policy.")
	}
	if _, err := g.meta.SetBucketPolicy(r.Context(), b, string(doc)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (g *Gateway) deleteBucketPolicy(w http.ResponseWriter, r *http.Request, rq *request) error {
	b, err := g.policyBucket(r, rq, "s3:DeleteBucketPolicy")
	if err != nil {
		return err
	}
	if b.Policy != "" {
		if _, err := g.meta.SetBucketPolicy(r.Context(), b, ""); err != nil {
			return err
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
